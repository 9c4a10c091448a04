package krm_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
)

func kustomizeBuild(t *testing.T, dir string) ([]byte, string, error) {
	t.Helper()
	return kustomizeCLI(t, nil, "build", "--enable-alpha-plugins", "--enable-exec",
		"--load-restrictor", "LoadRestrictionsNone", dir)
}

// kustomizeCLI runs the pinned kustomize with extra environment; it skips
// the test when NRL_KUSTOMIZE is not set.
func kustomizeCLI(t *testing.T, env []string, args ...string) ([]byte, string, error) {
	t.Helper()
	kustomize := os.Getenv("NRL_KUSTOMIZE")
	if kustomize == "" {
		t.Skip("NRL_KUSTOMIZE not set")
	}
	cmd := exec.Command(kustomize, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, stderr.String(), err
}

// TestKustomizeCLITransformersOnFunctionConfig: namespace, namePrefix and
// labels written in the kustomization that runs the function as a
// transformer reach the NemoRLRun items but never the function config.
// The namespace is applied to the function config's run too (every object
// lands in it); a prefix or labels, which the function cannot take over
// safely, stop the build with an error saying how.
func TestKustomizeCLITransformersOnFunctionConfig(t *testing.T) {
	dir := exampleTree(t, "kustomize")
	k := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(k)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(k, append(data, "namespace: ml-prod\n"...), 0o644))
	out, stderr, err := kustomizeBuild(t, dir)
	require.NoError(t, err, stderr)
	objs := splitObjects(t, out)
	require.NotEmpty(t, objs)
	for _, o := range objs {
		require.Equal(t, "ml-prod", o.Namespace, o.ID())
	}

	for _, tc := range []struct{ name, add, want string }{
		{"namePrefix", "namePrefix: exp1-\n", "namePrefix exp1- reached this kustomization's items but not the function config"},
		{"labels", "labels:\n- pairs: {cost-center: rl-42}\n", "label cost-center=rl-42 reached this kustomization's items but not the function config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := exampleTree(t, "kustomize")
			k := filepath.Join(dir, "kustomization.yaml")
			data, err := os.ReadFile(k)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(k, append(data, tc.add...), 0o644))
			_, stderr, err := kustomizeBuild(t, dir)
			require.Error(t, err)
			require.Contains(t, stderr, tc.want)
			require.Contains(t, stderr, "expected the NemoRLRun under resources:")
		})
	}
}

// TestKustomizeCLIGenerator builds examples/kustomize-generator: the runs
// under generators:, kustomize's namespace, namePrefix and labels applied to
// every run's objects, every reference kept by the shipped configuration.
// Without the configuration the function refuses, naming it.
func TestKustomizeCLIGenerator(t *testing.T) {
	dir := exampleTree(t, "kustomize-generator")
	out, stderr, err := kustomizeBuild(t, dir)
	require.NoError(t, err, stderr)
	objs := splitObjects(t, out)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
	}
	require.Equal(t, map[string]int{"ConfigMap": 1, "ComputeDomain": 2, "ResourceClaimTemplate": 2, "RayJob": 2, "RayCluster": 1, "Deployment": 1, "Service": 1}, kinds,
		"sweep-a: rayjob with its recipe ConfigMap; sweep-b: raycluster (cluster, its job, DRA objects) and the profile's Deployment and Service")
	instances := map[string]bool{}
	for _, o := range objs {
		require.Equal(t, "ml-prod", o.Namespace, o.ID())
		require.True(t, strings.HasPrefix(o.Name, "exp1-"), o.ID())
		require.Equal(t, "rl-42", o.Labels["cost-center"], o.ID())
		instances[o.Labels["app.kubernetes.io/instance"]] = true
		for path, labels := range runcheck.PodTemplates(o) {
			require.Equal(t, "rl-42", labels["cost-center"], o.ID()+path)
		}
	}
	require.True(t, instances["sweep-a"] && instances["sweep-b"], "both runs rendered: %v", instances)
	requireReferencesResolve(t, objs)
	require.Contains(t, string(out), "name: exp1-sweep-a-recipe", "the recipe ConfigMap is renamed")
	require.Contains(t, string(out), "value: exp1-alice-ultra-pipeclean-ns-tools", "the Service host name follows the Service")

	k := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(k)
	require.NoError(t, err)
	data = bytes.Replace(data, []byte("configurations:\n- ../../kustomize/nrl-k8s.configuration.yaml\n"), nil, 1)
	require.NoError(t, os.WriteFile(k, data, 0o644))
	_, stderr, err = kustomizeBuild(t, dir)
	require.Error(t, err)
	require.Contains(t, stderr, "expected `configurations: [PATH/kustomize/nrl-k8s.configuration.yaml]`")
}
