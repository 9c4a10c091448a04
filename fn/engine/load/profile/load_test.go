package profile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Profiles TestLoad shares: a base with a bad value, an entrypoint reading
// the environment, a value reading the run's name.
const (
	base = "namespace: team-a\nimage: nvcr.io/nvidia/nemo-rl:v0.4.0\nscheduler:\n  kind: kai\n  queue: q\nlaunch:\n  entrypoint: echo\n  rayjob:\n    activeDeadlineSeconds: 4294967297\n"
	cmd  = "image: i\nlaunch: {entrypoint: 'python x.py +a=${oc.env:V}'}\n"
	ckpt = "image: img:1\ncheckpoints: {kind: pvc, pvcName: ckpt, subPath: \"${user:}/${run.name}\"}\n"
)

// TestLoad: the layers merge lowest first, overrides and the run's values
// land where they are read, and every refusal names the file (the layer
// that sets the key, else the profile), the field and what is expected.
func TestLoad(t *testing.T) {
	subPath := func(l *Loaded) any { return *l.Infra.Checkpoints.SubPath }
	for _, tc := range []struct {
		name string
		// prof is p.infra.yaml, the --infra file unless in says otherwise;
		// env answers ${oc.env:V}.
		prof, env string
		in        func(*Input)
		// err is in the first error ("error: FILE: FIELD: MESSAGE"); ""
		// loads without one, and got(loaded) is then want.
		err  string
		got  func(*Loaded) any
		want any
	}{
		// The layers (docs/nrl-k8s.md §2.4).
		{name: "a base's value is the base's", prof: "defaults: cluster.infra.yaml\nlaunch:\n  entrypoint: python run.py\n",
			err: "error: cluster.infra.yaml: launch.rayjob.activeDeadlineSeconds: line 9: found 4294967297"},
		{name: "a child's unknown key is the child's", prof: "defaults: cluster.infra.yaml\nlaunch:\n  rayjob:\n    bogus: 1\n",
			err: "error: p.infra.yaml: launch.rayjob.bogus: line 4: unknown key"},
		{name: "a child over its base", prof: "defaults: cluster.infra.yaml\nlaunch:\n  rayjob:\n    activeDeadlineSeconds: 4294967298\n",
			err: "error: p.infra.yaml: launch.rayjob.activeDeadlineSeconds: line 4: found 4294967298"},
		{name: "a base's unresolvable value", prof: "defaults: bad-base.infra.yaml\nlaunch:\n  entrypoint: echo\n",
			err: `error: bad-base.infra.yaml: image: line 2: cannot resolve "${nope.image}"`},
		{name: "a child under infra:", prof: "infra:\n  defaults: cluster.infra.yaml\n  launch:\n    bogusKey: 1\n",
			err: "error: p.infra.yaml: launch.bogusKey: line 4: unknown key"},
		{name: "--infra and the recipe's infra:", prof: "image: i\n", in: func(in *Input) { in.RecipeInfra, in.RecipeFile = tree.NewMap(), "r.yaml" },
			err: "error: r.yaml: infra: infra config supplied via --infra but the recipe also contains an `infra:` key"},
		{name: "no profile", in: func(in *Input) { in.File = "" }, err: "no infra profile: pass --infra FILE"},
		{name: "the user defaults hold the profile", in: func(in *Input) { in.File, in.UserDefaults = "", "cluster.infra.yaml" },
			err: "error: cluster.infra.yaml: launch.rayjob.activeDeadlineSeconds: line 9: found 4294967297"},
		{name: "_shared: holds anchors only", prof: "_shared: {img: &i img:2}\nimage: *i\n",
			got: func(l *Loaded) any { _, kept := l.Tree.Get("_shared"); return []any{kept, l.Infra.Image} }, want: []any{false, "img:2"}},
		// Overrides (layer 4).
		{name: "an override without =", prof: "image: i\n", in: func(in *Input) { in.Overrides = []string{"image"} },
			err: `error: p.infra.yaml: image: infra override "image": expected infra.KEY=VALUE`},
		{name: "an override through a scalar", prof: "image: i\n", in: func(in *Input) { in.Overrides = []string{"image.tag=2"} },
			err: `infra override "image.tag=2": image is a string, not a mapping`},
		{name: "an override's value read as YAML", prof: "image: i\n", in: func(in *Input) { in.Overrides = []string{"launch.uploadBytes=7"} },
			got: func(l *Loaded) any { return l.Infra.Launch.UploadBytes.Value(0) }, want: int64(7)},
		{name: "an override's value YAML cannot read", prof: "image: i\n", in: func(in *Input) { in.Overrides = []string{"image=[x"} },
			got: func(l *Loaded) any { return l.Infra.Image }, want: "[x"},
		{name: "an override's finding names the override", prof: "image: i\n", in: func(in *Input) { in.Overrides = []string{"launch.rayjob={bogus: 1}"} },
			err: `error: p.infra.yaml: launch.rayjob.bogus: set by override "infra.launch.rayjob={bogus: 1}": unknown key`},
		// The run's values: ${run.name}, and a value of the run in a shell command.
		{name: "${run.name}", prof: ckpt, in: func(in *Input) { in.RunName = "exp-7" }, got: subPath, want: "alice/exp-7"},
		{name: "${run.name} unnamed", prof: ckpt, in: func(in *Input) { in.RunName = "" },
			err: "checkpoints.subPath: reads ${run.name} but the run has no name; expected a named run"},
		{name: "a profile's own run:", prof: ckpt + "run: {name: x}\n", err: "error: p.infra.yaml: run: is reserved"},
		{name: "one plain word", prof: cmd, env: "a-b_1", got: func(l *Loaded) any { return *l.Infra.Launch.Entrypoint }, want: "python x.py +a=a-b_1"},
		{name: "an empty word", prof: cmd, got: func(l *Loaded) any { return *l.Infra.Launch.Entrypoint }, want: "python x.py +a="},
		{name: "command substitution", prof: cmd, env: "$(id)",
			err: "launch.entrypoint: ${oc.env:V} puts a value of the run into this shell command that is not one plain word"},
		{name: "through another key", prof: "image: i\nlaunch: {env: {W: '${oc.env:V}'}, entrypoint: 'python x.py +a=${launch.env.W}'}\n", env: "v1 v2",
			err: "launch.entrypoint: ${launch.env.W} puts a value of the run"},
		{name: "a daemon's entrypoint", prof: "image: i\nkuberay: {training: {daemon: {entrypoint: 'serve ${oc.env:V}'}}}\n", env: "x;y",
			err: "kuberay.training.daemon.entrypoint: ${oc.env:V} puts"},
		{name: "not a shell field", prof: "image: i\nlaunch: {env: {W: '${oc.env:V}'}}\n", env: "a b; c",
			got: func(l *Loaded) any { return l.Infra.Launch.Env["W"] }, want: "a b; c"},
		{name: "the profile's own value", prof: "image: i\nx: {args: 'a b; c'}\nlaunch: {entrypoint: 'python x.py ${x.args}'}\n",
			err: "error: p.infra.yaml: x: line 2: unknown key"},
		{name: "shell syntax OmegaConf cannot read", prof: "image: i\nlaunch:\n  entrypoint: cd ${HOME}\n",
			err: `error: p.infra.yaml: launch.entrypoint: line 3: ${HOME} is shell syntax`},
		{name: "environment reads listed", prof: "image: i\nlaunch: {env: {B: '${oc.env:V}', A: 'x-${oc.env:V}', C: x}}\n",
			got: func(l *Loaded) any { return l.HostEnv }, want: []string{"A", "B"}},
		// The namespace, and the strings of the schema.
		{name: "the namespace by default", prof: "image: i\n", got: func(l *Loaded) any { return l.Infra.Namespace }, want: DefaultNamespace},
		{name: "the run's namespace wins", prof: "namespace: a\nimage: i\n", in: func(in *Input) { in.Namespace = "b" },
			got: func(l *Loaded) any { return l.Infra.Namespace }, want: "b"},
		{name: "the profile's namespace refused", prof: "namespace: Team_A\nimage: i\n",
			err: `error: p.infra.yaml: namespace: line 1: found "Team_A"; expected a namespace name (DNS-1123 label)`},
		{name: "schema strings trimmed", prof: "image: ' i '\nlabels: {a: ' b '}\n",
			got: func(l *Loaded) any { return l.Infra.Image + l.Infra.Labels["a"] }, want: "ib"},
		{name: "a spec's strings kept", prof: "image: i\nkuberay: {training: {name: ' t ', spec: {rayVersion: ' 2 '}}}\n",
			got: func(l *Loaded) any { return l.Infra.Kuberay.Training.Name + l.Infra.Kuberay.Training.Spec.RayVersion }, want: "t 2 "},
		{name: "a typo", prof: "image: i\nserviceAcount: x\n", err: `error: p.infra.yaml: serviceAcount: line 2: unknown key; did you mean "serviceAccount"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := source.Memory{"cluster.infra.yaml": []byte(base), "bad-base.infra.yaml": []byte("namespace: team-a\nimage: ${nope.image}\n")}
			if tc.prof != "" {
				mem["p.infra.yaml"] = []byte(tc.prof)
			}
			in := Input{Loader: recipe.NewLoader(mem), File: "p.infra.yaml", User: "alice", RunName: "r",
				Env: func(string) (string, bool) { return tc.env, true }}
			if tc.in != nil {
				tc.in(&in)
			}
			l, ds := Load(in)
			if tc.err != "" {
				require.True(t, ds.HasErrors(), "%v", ds)
				got := ds.Errors()[0].String()
				assert.Contains(t, got, tc.err)
				if tc.env != "" {
					assert.NotContains(t, got, tc.env, "a value of the run is not shown")
				}
				return
			}
			require.False(t, ds.HasErrors(), "%v", ds)
			assert.Equal(t, tc.want, tc.got(l))
		})
	}
}

// TestSets: a key a layer above the built-in defaults writes is the
// profile's choice, even at the default's value; others are defaults.
func TestSets(t *testing.T) {
	mem := source.Memory{"base.infra.yaml": []byte("hf_cache: {kind: none}\n"), "p.infra.yaml": []byte("defaults: base.infra.yaml\nimage: i\n")}
	recipeInfra := tree.NewMap()
	recipeInfra.Set("image", "i")
	for _, tc := range []struct {
		name string
		in   Input
		sets map[string]bool
	}{
		{"the file and its base", Input{File: "p.infra.yaml", Overrides: []string{"submit.kind=sdk"}},
			map[string]bool{"image": true, "hf_cache.kind": true, "submit.kind": true, "namespace": false, "launch.rayjob.suspend": false}},
		{"the run's namespace", Input{File: "p.infra.yaml", Namespace: "ns"}, map[string]bool{"namespace": true}},
		{"the recipe's infra:", Input{RecipeInfra: recipeInfra, RecipeFile: "r.yaml"}, map[string]bool{"image": true, "hf_cache.kind": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Loader, tc.in.User = recipe.NewLoader(mem), "alice"
			l, ds := Load(tc.in)
			require.False(t, ds.HasErrors(), "%v", ds)
			for k, want := range tc.sets {
				assert.Equal(t, want, l.Sets(k), k)
			}
		})
	}
	assert.False(t, (*Loaded)(nil).Sets("image"), "no profile sets nothing")
}

// TestDefaultValue: defaults.yaml's value at a path; null and absent are
// no default.
func TestDefaultValue(t *testing.T) {
	for _, tc := range []struct {
		path string
		want any
		ok   bool
	}{
		{"scheduler.kind", "default", true},
		{"launch.rayjob.ttlSecondsAfterFinished", int64(3600), true},
		{"serviceAccount", nil, false},
		{"no.such.key", nil, false},
	} {
		v, ok := DefaultValue(tc.path)
		assert.Equal(t, tc.ok, ok, tc.path)
		assert.Equal(t, tc.want, v, tc.path)
	}
}
