package effective_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/effective"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// files is a two-file `defaults:` chain: the child sets one key of its own
// and reads the base's through interpolations.
var files = source.Memory{
	"base.yaml": []byte(`grpo:
  max_num_steps: 10
  seed: 1
cluster:
  gpus_per_node: 8
  num_nodes: 1
logger:
  dir: ${oc.env:LOG_DIR,/tmp/logs}
  home: ${oc.env:NRL_HOME}
  checkpoint: ${logger.dir}/ckpt
`),
	"child.yaml": []byte(`defaults: base.yaml
cluster:
  num_nodes: 4
`),
	"broken.yaml": []byte(`defaults: child.yaml
grpo:
  name: ${nope.x}
`),
}

// resolve runs the stage on child.yaml with the entrypoint and run overrides.
func resolve(t *testing.T, entry string, run []string, env map[string]string) (*effective.Recipe, diag.List) {
	t.Helper()
	return resolveFile(t, "child.yaml", entry, run, env)
}

func resolveFile(t *testing.T, file, entry string, run []string, env map[string]string) (*effective.Recipe, diag.List) {
	t.Helper()
	l := recipe.NewLoader(files)
	rec, err := l.Load(file)
	require.NoError(t, err)
	prof := &profile.Loaded{Infra: &profile.Infra{}, File: "p.infra.yaml"}
	if entry != "" {
		prof.Infra.Launch.Entrypoint = &entry
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	overrides := make([]hydra.Override, 0, len(run))
	for _, raw := range run {
		o, err := hydra.Parse(raw)
		require.NoError(t, err)
		overrides = append(overrides, o)
	}
	return effective.Resolve(effective.Input{Loader: l, Recipe: rec, File: file, Profile: prof, Overrides: overrides,
		Env: effective.Env{User: "alice", Env: lookup}})
}

const driver = "uv run python examples/run_grpo.py --config child.yaml "

// Run overrides come after the entrypoint's, which come after the chain; the
// origin of each value names the one that set it.
func TestResolveOrderAndOrigin(t *testing.T) {
	r, ds := resolve(t, driver+"grpo.max_num_steps=20 cluster.num_nodes=2", []string{"grpo.max_num_steps=30"}, nil)
	require.Empty(t, ds)
	require.Equal(t, []string{"base.yaml", "child.yaml"}, r.Files)
	require.NotNil(t, r.Invocation)
	require.Len(t, r.Overrides, 3)

	for _, tc := range []struct {
		path       string
		want       any
		origin     string
		originFile string
	}{
		{"grpo.max_num_steps", 30, `run override "grpo.max_num_steps=30"`, ""},
		{"cluster.num_nodes", 2, `entrypoint override "cluster.num_nodes=2"`, ""},
		{"cluster.gpus_per_node", 8, "base.yaml", "base.yaml"},
		{"grpo.seed", 1, "base.yaml", "base.yaml"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			v, ok, dynamic := r.Value(tc.path)
			require.True(t, ok)
			require.False(t, dynamic)
			require.EqualValues(t, tc.want, v)
			require.Equal(t, tc.origin, r.Origin(tc.path))
			require.Equal(t, tc.originFile, r.OriginFile(tc.path))
		})
	}

	// Without overrides, the child's own key comes from the child.
	plain, ds := resolve(t, "", nil, nil)
	require.Empty(t, ds)
	require.Nil(t, plain.Entrypoint)
	v, _, _ := plain.Value("cluster.num_nodes")
	require.EqualValues(t, 4, v)
	require.Equal(t, "child.yaml", plain.Origin("cluster.num_nodes"))
}

// A value the pod's shell expands (${VAR} in the entrypoint) is unknown at
// render time: Value says so instead of returning the text.
func TestResolveDynamicOverride(t *testing.T) {
	r, ds := resolve(t, driver+"grpo.seed=${SEED}", nil, nil)
	require.Empty(t, ds)
	_, ok, dynamic := r.Value("grpo.seed")
	require.False(t, ok)
	require.True(t, dynamic)

	// A later literal override makes it known again.
	r, ds = resolve(t, driver+"grpo.seed=${SEED}", []string{"grpo.seed=7"}, nil)
	require.Empty(t, ds)
	v, ok, dynamic := r.Value("grpo.seed")
	require.True(t, ok)
	require.False(t, dynamic)
	require.EqualValues(t, 7, v)
}

// ${oc.env:...} reads the render's environment; an unset variable without a
// default is left for the pod, which resolves the recipe again.
func TestResolvePodEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name            string
		env             map[string]string
		dir, home, ckpt string
	}{
		{"unset", nil, "/tmp/logs", "${oc.env:NRL_HOME}", "/tmp/logs/ckpt"},
		{"set", map[string]string{"LOG_DIR": "/lustre/logs", "NRL_HOME": "/home/a"}, "/lustre/logs", "/home/a", "/lustre/logs/ckpt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ds := resolve(t, "", nil, tc.env)
			require.Empty(t, ds)
			for path, want := range map[string]string{"logger.dir": tc.dir, "logger.home": tc.home, "logger.checkpoint": tc.ckpt} {
				v, ok, _ := r.Value(path)
				require.True(t, ok, path)
				require.Equal(t, want, v, path)
			}
		})
	}
}

// Each bad override is an error naming where it came from; the good ones
// still apply.
// (A run override that does not parse never reaches Resolve: the pipeline
// parses each once; tests/bad/bad-hydra-override holds its message.)
func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry string
		run   []string
		want  diag.Diagnostic
	}{
		{
			name: "a run override of a key the recipe lacks", run: []string{"grpo.nope=1"},
			want: diag.Diagnostic{Severity: diag.Error, File: "child.yaml", Field: "grpo.nope"},
		},
		{
			name: "an entrypoint override of a key the recipe lacks", entry: driver + "grpo.nope=1",
			want: diag.Diagnostic{Severity: diag.Error, File: "p.infra.yaml", Field: "launch.entrypoint"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ds := resolve(t, tc.entry, append(tc.run, "grpo.seed=5"), nil)
			require.Len(t, ds, 1, ds)
			got := ds[0]
			require.NotEmpty(t, got.Message)
			got.Message = ""
			require.Equal(t, tc.want, got)
			v, _, _ := r.Value("grpo.seed")
			require.EqualValues(t, 5, v)
		})
	}
}

// An interpolation that cannot resolve names the chain file that holds it;
// the unresolved tree still answers.
func TestResolveUnresolvable(t *testing.T) {
	r, ds := resolveFile(t, "broken.yaml", "", nil, nil)
	require.Len(t, ds, 1, ds)
	require.Equal(t, "broken.yaml", ds[0].File)
	require.Equal(t, "grpo.name", ds[0].Field)
	require.Contains(t, ds[0].Message, `cannot resolve "${nope.x}"`)
	require.Nil(t, r.Resolved)
	v, ok, _ := r.Value("cluster.gpus_per_node")
	require.True(t, ok)
	require.EqualValues(t, 8, v)
	require.Equal(t, "base.yaml", r.Origin("cluster.gpus_per_node"))
}
