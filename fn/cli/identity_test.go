package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/manifest"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func renderObjects(t *testing.T, args ...string) []runcheck.Object {
	t.Helper()
	code, out, errOut := runCLI(append([]string{"render"}, args...)...)
	require.Equal(t, cli.ExitOK, code, errOut)
	objs, err := runcheck.Parse([]byte(out))
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	return objs
}

// TestSweepRunsAreDisjoint: two runs of one profile by one user, named
// sweep-a and sweep-b, share no object in either cluster mode; every object
// and pod template carries the run's identity, and every reference names an
// object of the run. Profile deployments are shared services (fn/manifest/run.go):
// the same bytes in both runs, their own instance.
func TestSweepRunsAreDisjoint(t *testing.T) {
	root := testenv.RepoRoot(t)
	profiles := []struct{ name, recipe, infra string }{
		{"qwen", "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml", "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"},
		{"ultra", "recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml", "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml"},
	}
	for _, p := range profiles {
		for _, mode := range []string{"rayjob", "raycluster"} {
			t.Run(p.name+"/"+mode, func(t *testing.T) {
				sets := map[string]map[string]runcheck.Object{}
				for _, name := range []string{"sweep-a", "sweep-b"} {
					objs := renderObjects(t, filepath.Join(root, p.recipe), "--infra", filepath.Join(root, p.infra),
						"--user", "alice", "--mode", mode, "--name", name, "--run-id", "r1", "--label", "cost-center=rl-42")
					assert.Empty(t, runcheck.Dangling(objs))
					sets[name] = map[string]runcheck.Object{}
					for _, o := range objs {
						sets[name][o.ID()] = o
						assert.Equal(t, "alice", o.Labels[manifest.OwnerKey], o.ID())
						assert.Equal(t, manifest.PartOfValue, o.Labels[manifest.PartOfKey], o.ID())
						assert.Equal(t, manifest.ManagedByValue, o.Labels[manifest.ManagedByKey], o.ID())
						if o.Kind == "Deployment" || o.Kind == "Service" {
							assert.Equal(t, o.Name, o.Labels[manifest.InstanceKey], "a shared service is its own instance: %s", o.ID())
							continue
						}
						assert.Equal(t, name, o.Labels[manifest.InstanceKey], o.ID())
						assert.Equal(t, "r1", o.Labels[manifest.RunIDLabel], o.ID())
						assert.Equal(t, "rl-42", o.Labels["cost-center"], o.ID())
						for path, labels := range runcheck.PodTemplates(o) {
							assert.Equal(t, name, labels[manifest.InstanceKey], o.ID()+path)
							assert.Equal(t, "rl-42", labels["cost-center"], o.ID()+path)
						}
					}
				}
				for id, a := range sets["sweep-a"] {
					b, both := sets["sweep-b"][id]
					if !both {
						continue
					}
					require.Contains(t, []string{"Deployment", "Service"}, a.Kind, "%s is in both runs", id)
					assert.Equal(t, a.Data, b.Data, "a shared service must render the same in every run: %s", id)
				}
			})
		}
	}
}

// TestRunIDsShareClusters: unnamed raycluster runs that differ only in run
// id share the long-lived clusters byte for byte (no run id on them) and
// differ in the training job only.
func TestRunIDsShareClusters(t *testing.T) {
	r, p := qwen(t)
	a := renderObjects(t, r, "--infra", p, "--user", "alice", "--mode", "raycluster", "--run-id", "r1")
	b := renderObjects(t, r, "--infra", p, "--user", "alice", "--mode", "raycluster", "--run-id", "r2")
	byID := map[string]runcheck.Object{}
	for _, o := range a {
		byID[o.ID()] = o
	}
	var jobs []string
	for _, o := range b {
		prev, shared := byID[o.ID()]
		if !shared {
			jobs = append(jobs, o.ID())
			assert.Equal(t, "r2", o.Labels[manifest.RunIDLabel])
			continue
		}
		assert.Equal(t, prev.Data, o.Data, o.ID())
		assert.Empty(t, o.Labels[manifest.RunIDLabel], o.ID())
		assert.Equal(t, "alice-raycluster-qwen3-30b-math-gb300", o.Labels[manifest.InstanceKey], "the cluster set is the instance: %s", o.ID())
	}
	assert.Equal(t, []string{"RayJob/default/alice-raycluster-qwen3-30b-math-gb300-train-r2"}, jobs)
}

// TestImageFlag: --image replaces the image of every container of the run.
func TestImageFlag(t *testing.T) {
	r, p := qwen(t)
	for _, mode := range []string{"rayjob", "raycluster", "dev"} {
		objs := renderObjects(t, r, "--infra", p, "--user", "alice", "--mode", mode, "--image", "registry.example/x:1")
		n := 0
		for _, o := range objs {
			for _, img := range runcheck.Images(o) {
				assert.Equal(t, "registry.example/x:1", img, o.ID())
				n++
			}
		}
		assert.Positive(t, n, mode)
	}
}

// TestNameTooLong: a run name that makes a name longer than KubeRay allows
// is an error naming the object and the limit.
func TestNameTooLong(t *testing.T) {
	r, p := qwen(t)
	for _, tc := range []struct{ mode, name, want string }{
		{"rayjob", "a23456789012345678901234567890123456789012345678", `RayJob name "a23456789012345678901234567890123456789012345678" has 48 characters; expected at most 47`},
		{"raycluster", "a234567890123456789012345678901234567890123456", `RayCluster name "a234567890123456789012345678901234567890123456-training" has 55 characters; expected at most 53`},
	} {
		code, _, errOut := runCLI("render", r, "--infra", p, "--user", "alice", "--mode", tc.mode, "--name", tc.name)
		assert.Equal(t, cli.ExitError, code)
		assert.Contains(t, errOut, tc.want)
	}
	code, _, errOut := runCLI("render", r, "--infra", p, "--user", "alice", "--label", "novalue")
	assert.Equal(t, cli.ExitUsage, code)
	assert.Contains(t, errOut, `--label "novalue": expected KEY=VALUE`)
}
