package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func renderObjects(t *testing.T, args ...string) []runcheck.Object {
	t.Helper()
	code, out, errOut := clirun.Run(append([]string{"render"}, args...)...)
	require.Equal(t, cli.ExitOK, code, errOut)
	objs, err := runcheck.Parse([]byte(out))
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	return objs
}

// TestSweepRunsAreDisjoint: two runs of one profile by one user, named
// sweep-a and sweep-b, share no object in either cluster mode; every object
// and pod template carries the run's identity, and every reference names an
// object of the run. Profile deployments are shared services (fn/engine/manifest/run.go):
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
						assert.Equal(t, "alice", o.Labels[vocab.OwnerLabel], o.ID())
						assert.Equal(t, vocab.PartOfValue, o.Labels[vocab.PartOfLabel], o.ID())
						assert.Equal(t, vocab.ManagedByValue, o.Labels[vocab.ManagedByLabel], o.ID())
						if o.Kind == "Deployment" || o.Kind == "Service" {
							assert.Equal(t, o.Name, o.Labels[vocab.InstanceLabel], "a shared service is its own instance: %s", o.ID())
							continue
						}
						assert.Equal(t, name, o.Labels[vocab.InstanceLabel], o.ID())
						assert.Equal(t, "r1", o.Labels[vocab.RunIDLabel], o.ID())
						assert.Equal(t, "rl-42", o.Labels["cost-center"], o.ID())
						for path, labels := range runcheck.PodTemplates(o) {
							assert.Equal(t, name, labels[vocab.InstanceLabel], o.ID()+path)
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
			assert.Equal(t, "r2", o.Labels[vocab.RunIDLabel])
			continue
		}
		assert.Equal(t, prev.Data, o.Data, o.ID())
		assert.Empty(t, o.Labels[vocab.RunIDLabel], o.ID())
		assert.Equal(t, "alice-raycluster-qwen3-30b-math-gb300", o.Labels[vocab.InstanceLabel], "the cluster set is the instance: %s", o.ID())
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
		code, _, errOut := clirun.Run("render", r, "--infra", p, "--user", "alice", "--mode", tc.mode, "--name", tc.name)
		assert.Equal(t, cli.ExitError, code)
		assert.Contains(t, errOut, tc.want)
	}
	code, _, errOut := clirun.Run("render", r, "--infra", p, "--user", "alice", "--label", "novalue")
	assert.Equal(t, cli.ExitUsage, code)
	assert.Contains(t, errOut, `--label "novalue": expected KEY=VALUE`)
}

// TestOnlyDeployments: --only-deployments renders the profile's shared
// services and nothing of the run, with the apply's labels, annotations and
// image; --no-deployments renders the run without them, so together they
// are the full render, split by owner. Refusals name what to do instead.
func TestOnlyDeployments(t *testing.T) {
	root := testenv.RepoRoot(t)
	recipe := filepath.Join(root, "recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml")
	infra := filepath.Join(root, "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml")
	args := []string{recipe, "--infra", infra, "--user", "alice", "--name", "sweep-a"}
	services := renderObjects(t, append(args, "--only-deployments", "--label", "cost-center=rl-42", "--annotation", "note=shared", "--image", "registry.example/sandbox:v3")...)
	var ids []string
	for _, o := range services {
		ids = append(ids, o.ID())
		assert.Equal(t, o.Name, o.Labels[vocab.InstanceLabel], o.ID())
		assert.Equal(t, "rl-42", o.Labels["cost-center"], o.ID())
		for path, labels := range runcheck.PodTemplates(o) {
			assert.Equal(t, "rl-42", labels["cost-center"], o.ID()+path)
		}
		if o.Kind == "Deployment" {
			assert.Equal(t, []string{"registry.example/sandbox:v3"}, runcheck.Images(o))
		}
	}
	require.Len(t, services, 2, "%v", ids)
	full := renderObjects(t, args...)
	run := renderObjects(t, append(args, "--no-deployments")...)
	assert.Len(t, full, len(run)+len(services))
	for _, o := range run {
		assert.NotContains(t, []string{"Deployment", "Service"}, o.Kind, o.ID())
	}

	// In the full render the shared services keep the profile's image
	// (--image is the run's) and take no run label.
	code, out, _ := clirun.Run(append([]string{"render"}, append(args, "--image", "registry.example/run:v1", "--label", "cost-center=rl-42")...)...)
	require.Equal(t, cli.ExitOK, code)
	objs, err := runcheck.Parse([]byte(out))
	require.NoError(t, err)
	for _, o := range objs {
		if o.Kind == "Deployment" {
			assert.Equal(t, []string{"nvcr.io/nvidian/nemo-rl:skills-sandbox-latest"}, runcheck.Images(o))
			assert.NotContains(t, o.Labels, "cost-center")
		}
	}

	code, _, errOut := clirun.Run(append([]string{"render"}, append(args, "--only-deployments", "--no-deployments")...)...)
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, errOut, "--only-deployments: renders only the profile's deployments, and --no-deployments leaves them out")
	code, _, errOut = clirun.Run("render", filepath.Join(root, "recipes/examples/configs/grpo_math_1B.yaml"),
		"--infra", filepath.Join(root, "profiles/kind/grpo-math-1b-1n1g.kind-hostpath.infra.yaml"), "--user", "alice", "--only-deployments")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, errOut, "deployments: the profile declares none, so there are no shared services to render")
}

// TestOnlyDeploymentsOneImage: --image replaces the shared services' image
// only when they run one; with two it is refused, naming both.
func TestOnlyDeploymentsOneImage(t *testing.T) {
	dir := t.TempDir()
	writeFile := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	recipe := writeFile("r.yaml", "grpo: {}\n")
	infra := writeFile("p.infra.yaml", `image: registry.example/nemo-rl:v1
deployments:
  a:
    name: ${user:}-a
    spec:
      selector: {matchLabels: {app: a}}
      template:
        metadata: {labels: {app: a}}
        spec:
          containers: [{name: a, image: registry.example/a:v1, ports: [{containerPort: 6000}]}]
  b:
    name: ${user:}-b
    spec:
      selector: {matchLabels: {app: b}}
      template:
        metadata: {labels: {app: b}}
        spec:
          containers: [{name: b}]
`)
	objs := renderObjects(t, recipe, "--infra", infra, "--user", "carol", "--only-deployments")
	assert.Len(t, objs, 3, "two Deployments, one Service (b has no port)")
	code, _, errOut := clirun.Run("render", recipe, "--infra", infra, "--user", "carol", "--only-deployments", "--image", "registry.example/x:v2")
	assert.Equal(t, cli.ExitError, code)
	assert.Contains(t, errOut, "run 2 images (registry.example/a:v1, registry.example/nemo-rl:v1), and --image would replace them all with one")
}
