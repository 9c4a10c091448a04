package krm_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krmframework"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runrequest"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
)

func ids(items []*yaml.RNode) []string {
	var out []string
	for _, n := range items {
		out = append(out, n.GetKind()+"/"+n.GetName())
	}
	return out
}

// processCase is one ResourceList through krm.Process: its items, the
// function config, and what must come out.
type processCase struct {
	name      string
	config    string // "" for none
	items     func(t *testing.T) []*yaml.RNode
	wantIDs   []string
	wantErrs  []string // substrings of error results, in order
	wantField string   // field of the first error result
}

// teamNamespace is an item the function passes through.
const teamNamespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"

// qwenItems are the objects the qwen run renders.
var qwenItems = []string{
	"ComputeDomain/compute-domain-qwen3-30b-math-gb300-training",
	"RayJob/qwen3-30b-math-gb300",
	"ResourceClaimTemplate/roce-qwen3-30b-math-gb300-training",
}

// withLocal marks a document local-config, as kpt's inputs are.
func withLocal(s string) string {
	return strings.Replace(s, "metadata:\n", "metadata:\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n", 1)
}

var processCases = []processCase{{
	name:   "config run, consumed ConfigMaps removed, others first",
	config: qwenRun,
	items: func(t *testing.T) []*yaml.RNode {
		return append([]*yaml.RNode{node(t, teamNamespace)}, notLocal(t, qwenFiles(t))...)
	},
	wantIDs: append([]string{"Namespace/team-a"}, qwenItems...),
}, {
	name:   "local-config inputs stay (kpt keeps their files)",
	config: qwenRun,
	items:  func(t *testing.T) []*yaml.RNode { return qwenFiles(t) },
	wantIDs: append([]string{"ConfigMap/nrl-recipes", "ConfigMap/nrl-recipes-llm-performance",
		"ConfigMap/nrl-profiles-gb300"}, qwenItems...),
}, {
	name:   "kustomize generator: config also an item, rendered once",
	config: withLocal(qwenRun),
	items: func(t *testing.T) []*yaml.RNode {
		return append(notLocal(t, qwenFiles(t)), node(t, withLocal(qwenRun)))
	},
	wantIDs: append([]string{"NemoRLRun/qwen3-30b-math-gb300"}, qwenItems...),
}, {
	name:   "runs only as items, no NemoRLRun config",
	config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n",
	items: func(t *testing.T) []*yaml.RNode {
		return append(notLocal(t, qwenFiles(t)), node(t, qwenRun))
	},
	wantIDs: qwenItems,
}, {
	name:     "no run at all",
	config:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n",
	items:    func(t *testing.T) []*yaml.RNode { return []*yaml.RNode{node(t, teamNamespace)} },
	wantIDs:  []string{"Namespace/team-a"},
	wantErrs: []string{"no run to render: expected the functionConfig or an item to be a nemo-rl.nvidia.com/v1alpha1 NemoRLRun (found functionConfig v1 ConfigMap)"},
}, {
	name:      "missing recipe file names spec.recipe",
	config:    qwenRun,
	items:     func(t *testing.T) []*yaml.RNode { return qwenFiles(t)[2:] },
	wantIDs:   []string{"ConfigMap/nrl-profiles-gb300"},
	wantErrs:  []string{`spec.recipe: no input file "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"; expected a ConfigMap annotated nemo-rl.nvidia.com/files-dir: recipes/examples/configs/recipes/llm/performance`},
	wantField: "spec.recipe",
}, {
	name:      "missing profile names spec.profile",
	config:    qwenRun,
	items:     func(t *testing.T) []*yaml.RNode { return notLocal(t, qwenFiles(t)[:2]) },
	wantErrs:  []string{`spec.profile: no input file "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"`},
	wantField: "spec.profile",
}, {
	name:   "two runs rendering one object: the later fails, naming both",
	config: qwenRun,
	items: func(t *testing.T) []*yaml.RNode {
		// Named like the first run's objects, rendered differently.
		twin := strings.Replace(qwenRun, "name: qwen3-30b-math-gb300", "name: twin", 1)
		twin = strings.Replace(twin, "  user: alice\n", "  user: alice\n  name: qwen3-30b-math-gb300\n  runId: r2\n", 1)
		return append(notLocal(t, qwenFiles(t)), node(t, twin))
	},
	wantIDs: qwenItems,
	wantErrs: []string{
		"run twin: ComputeDomain default/compute-domain-qwen3-30b-math-gb300-training is also rendered by run qwen3-30b-math-gb300, differently; expected runs qwen3-30b-math-gb300 and twin to render distinct objects",
		"run twin: RayJob default/qwen3-30b-math-gb300 is also rendered by run qwen3-30b-math-gb300, differently",
		"run twin: ResourceClaimTemplate default/roce-qwen3-30b-math-gb300-training is also rendered by run qwen3-30b-math-gb300, differently",
	},
}, {
	name:      "a run name that is not an object name",
	config:    strings.Replace(qwenRun, "name: qwen3-30b-math-gb300", "name: Bad Name!", 1),
	items:     func(t *testing.T) []*yaml.RNode { return nil },
	wantErrs:  []string{`metadata.name: "Bad Name!": a lowercase RFC 1123 subdomain`},
	wantField: "metadata.name",
}, {
	name:      "the reserved run name inputs",
	config:    strings.Replace(qwenRun, "name: qwen3-30b-math-gb300", "name: inputs", 1),
	items:     func(t *testing.T) []*yaml.RNode { return nil },
	wantErrs:  []string{`metadata.name: "inputs" is reserved`},
	wantField: "metadata.name",
}, {
	name:     "a NemoRLRun key given twice",
	config:   strings.Replace(qwenRun, "  user: alice\n", "  user: alice\n  user: bob\n", 1),
	items:    func(t *testing.T) []*yaml.RNode { return nil },
	wantErrs: []string{`key "user" already set`},
}, {
	name:      "state: removed is render-all's",
	config:    strings.Replace(qwenRun, "  user: alice\n", "  user: alice\n  state: removed\n", 1),
	items:     func(t *testing.T) []*yaml.RNode { return notLocal(t, qwenFiles(t)) },
	wantErrs:  []string{"run qwen3-30b-math-gb300: spec.state: removed is render-all's way to take a run out"},
	wantField: "spec.state",
}, {
	name:      "missing user",
	config:    strings.Replace(qwenRun, "  user: alice\n", "", 1),
	items:     func(t *testing.T) []*yaml.RNode { return nil },
	wantErrs:  []string{"functionConfig: spec.user: is required"},
	wantField: "spec.user",
}, {
	name:     "wrong apiVersion of our kind is ours, not passed through",
	config:   strings.Replace(qwenRun, "v1alpha1", "v1beta1", 1),
	items:    func(t *testing.T) []*yaml.RNode { return nil },
	wantErrs: []string{"expected apiVersion nemo-rl.nvidia.com/v1alpha1"},
}, {
	name:   "duplicate run names",
	config: qwenRun,
	items: func(t *testing.T) []*yaml.RNode {
		return append(notLocal(t, qwenFiles(t)), node(t, strings.Replace(qwenRun, "  namespace: default\n", "  mode: raycluster\n", 1)))
	},
	wantIDs:   qwenItems,
	wantErrs:  []string{`item: a second NemoRLRun named "qwen3-30b-math-gb300"`},
	wantField: "metadata.name",
}, {
	name:   "conflicting file content",
	config: qwenRun,
	items: func(t *testing.T) []*yaml.RNode {
		other, err := krm.FilesConfigMap("other", "profiles/gb300", map[string][]byte{"qwen3_30b_math_4n_4gpu.gb300.infra.yaml": []byte("namespace: x\n")})
		require.NoError(t, err)
		return append(notLocal(t, qwenFiles(t)), notLocal(t, []*yaml.RNode{other})...)
	},
	wantIDs:   qwenItems,
	wantErrs:  []string{"ConfigMap other: file profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml is also in ConfigMap nrl-profiles-gb300 with different content"},
	wantField: "data.qwen3_30b_math_4n_4gpu.gb300.infra.yaml",
}, {
	// A run in runs/ (kpt gives its path) whose paths were written from the
	// package root: each names the path it read, the run file, and the
	// path to write instead.
	name: "paths relative to the package root in a run below it",
	items: func(t *testing.T) []*yaml.RNode {
		run := node(t, qwenRun)
		require.NoError(t, run.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "runs/qwen.yaml")))
		return append([]*yaml.RNode{run}, qwenFiles(t)...)
	},
	wantErrs: []string{
		`spec.recipe: no input file "runs/recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml" ("recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml" relative to the run's file runs/qwen.yaml) ("recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml" is an input file relative to the package root: from runs/qwen.yaml write "../recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml")`,
		`spec.profile: no input file "runs/profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"`,
	},
	wantField: "spec.recipe",
}, {
	// The run-files ConfigMap kustomize-inputs writes places a run whose
	// item carries no path (kustomize's transformer mode).
	name: "the run-files ConfigMap says where a run's file is",
	items: func(t *testing.T) []*yaml.RNode {
		run := node(t, strings.NewReplacer("recipe: recipes/", "recipe: ../../recipes/", "profile: profiles/", "profile: ../../profiles/").Replace(qwenRun))
		where, err := krm.RunFilesConfigMap("nrl-run-files", map[string]string{"qwen3-30b-math-gb300": "runs/qwen/run.yaml"})
		require.NoError(t, err)
		return append([]*yaml.RNode{run}, notLocal(t, append([]*yaml.RNode{where}, qwenFiles(t)...))...)
	},
	wantIDs: qwenItems,
}, {
	name:   "previous render output under <run>/ is replaced",
	config: qwenRun,
	items: func(t *testing.T) []*yaml.RNode {
		old := node(t, "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: stale\n  labels: {app.kubernetes.io/managed-by: nrl-k8s}\n")
		require.NoError(t, old.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "qwen3-30b-math-gb300/rayjob_stale.yaml")))
		mine := node(t, teamNamespace)
		require.NoError(t, mine.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "other-run/ns.yaml")))
		return append([]*yaml.RNode{old, mine}, notLocal(t, qwenFiles(t))...)
	},
	wantIDs: append([]string{"Namespace/team-a"}, qwenItems...),
}, {
	name:   "a run named like a directory of other files renders nothing and keeps them",
	config: qwenRun,
	items: func(t *testing.T) []*yaml.RNode {
		app := node(t, teamNamespace)
		require.NoError(t, app.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, "qwen3-30b-math-gb300/ns.yaml")))
		return append([]*yaml.RNode{app}, notLocal(t, qwenFiles(t))...)
	},
	wantErrs: []string{"the package directory qwen3-30b-math-gb300/ holds files that are not this run's output (qwen3-30b-math-gb300/ns.yaml)"},
	wantIDs:  []string{"Namespace/team-a"},
}}

func TestProcess(t *testing.T) {
	tests := processCases
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rl := &framework.ResourceList{Items: tc.items(t)}
			if tc.config != "" {
				rl.FunctionConfig = node(t, tc.config)
			}
			err := krmframework.Process(rl)
			var errs []*framework.Result
			for _, r := range rl.Results {
				if r.Severity == framework.Error {
					errs = append(errs, r)
				}
			}
			require.Len(t, errs, len(tc.wantErrs), "results: %v", rl.Results)
			for i, want := range tc.wantErrs {
				require.Contains(t, errs[i].Message, want)
			}
			if len(tc.wantErrs) > 0 {
				require.Error(t, err, "an error result must fail the function")
				if tc.wantField != "" {
					require.NotNil(t, errs[0].Field)
					require.Equal(t, tc.wantField, errs[0].Field.Path)
				}
			} else {
				require.NoError(t, err)
			}
			if tc.wantIDs != nil || len(tc.wantErrs) == 0 {
				require.Equal(t, tc.wantIDs, ids(rl.Items))
			}
		})
	}
}

func TestProcessAnnotatesOutputPaths(t *testing.T) {
	rl := &framework.ResourceList{FunctionConfig: node(t, qwenRun), Items: notLocal(t, qwenFiles(t))}
	require.NoError(t, krmframework.Process(rl))
	require.Len(t, rl.Items, 3)
	for _, n := range rl.Items {
		a := n.GetAnnotations()
		want := "qwen3-30b-math-gb300/" + strings.ToLower(n.GetKind()) + "_" + n.GetName() + ".yaml"
		require.Equal(t, want, a[kioutil.PathAnnotation])
		require.Equal(t, want, a[kioutil.LegacyPathAnnotation]) //nolint:staticcheck // the legacy form is written for kustomize
		require.Equal(t, "0", a[kioutil.IndexAnnotation])
		require.Equal(t, "0", a[kioutil.LegacyIndexAnnotation]) //nolint:staticcheck // the legacy form is written for kustomize
	}
}

// Garbage must yield results or pass through, never a panic.
func TestProcessOddInputs(t *testing.T) {
	odd := []string{"", "42", "- a\n- b\n", "kind: NemoRLRun\napiVersion: nemo-rl.nvidia.com/v1alpha1\nspec: 3\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    nemo-rl.nvidia.com/files-dir: .\ndata: [1]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    nemo-rl.nvidia.com/files-dir: .\nbinaryData:\n  a: '%%%'\n"}
	for _, s := range odd {
		var items []*yaml.RNode
		if n, err := yaml.Parse(s); err == nil {
			items = append(items, n)
		}
		items = append(items, yaml.NewRNode(nil), nil)
		for _, cfg := range []*yaml.RNode{nil, yaml.NewRNode(nil), items[0]} {
			rl := &framework.ResourceList{FunctionConfig: cfg, Items: append([]*yaml.RNode(nil), items...)}
			require.NotPanics(t, func() { _ = krmframework.Process(rl) }, "input %q", s)
		}
	}
	require.Error(t, krmframework.Process(nil))
}

// The function's objects are nrl-k8s render's documents, byte for byte,
// once the path annotations it adds for kpt are taken off again.
func TestOutputMatchesRender(t *testing.T) {
	cases := []struct {
		name  string
		run   string
		files []*yaml.RNode
	}{
		{"qwen3-30b-math-gb300", qwenRun, qwenFiles(t)},
		{"ultra-48n-gb300", strings.NewReplacer("ultra-64n-gb300", "ultra-48n-gb300", "ultra_64n_pipeclean", "ultra_48n_pipeclean").Replace(ultra64Run),
			ultraFiles(t, "ultra_48n_pipeclean.gb300.infra.yaml")},
		{"ultra-64n-gb300", ultra64Run, ultraFiles(t, "ultra_64n_pipeclean.gb300.infra.yaml")},
	}
	for _, tc := range cases {
		for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
			t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
				run := tc.run
				if strings.Contains(run, "  mode:") {
					run = strings.Replace(run, "  mode: raycluster\n", "  mode: "+string(mode)+"\n", 1)
				} else {
					run = strings.Replace(run, "  user: alice\n", "  user: alice\n  mode: "+string(mode)+"\n", 1)
				}
				rl := &framework.ResourceList{FunctionConfig: node(t, run), Items: notLocal(t, tc.files)}
				require.NoError(t, krmframework.Process(rl))

				spec, err := runspec.Parse("run.yaml", []byte(run))
				require.NoError(t, err)
				req := runrequest.Of(spec, "")
				req.Recipe = repoRoot + "/" + req.Recipe
				req.Profile = repoRoot + "/" + req.Profile
				res := pipeline.Render(recipe.NewLoader(source.Disk{}), req)
				require.False(t, res.Diags.HasErrors(), "%v", res.Diags)

				require.Len(t, rl.Items, len(res.Docs))
				for i, d := range res.Docs {
					want, err := emit.Marshal(d)
					require.NoError(t, err)
					require.NoError(t, krm.StripPath(rl.Items[i]))
					got, err := rl.Items[i].String()
					require.NoError(t, err)
					require.Equal(t, string(want), got, "%s %s", d.Kind, d.Name)
				}
			})
		}
	}
}

// One invocation renders many runs; the shared loader keeps it fast.
func TestProcessManyRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 200 runs")
	}
	items := notLocal(t, qwenFiles(t))
	for i := 0; i < 200; i++ {
		r := strings.Replace(qwenRun, "name: qwen3-30b-math-gb300", "name: run-"+strconv.Itoa(i), 1)
		r = strings.Replace(r, "  user: alice\n", "  user: alice\n  name: job-"+strconv.Itoa(i)+"\n", 1)
		items = append(items, node(t, r))
	}
	rl := &framework.ResourceList{Items: items}
	require.NoError(t, krmframework.Process(rl))
	require.Len(t, rl.Items, 600)
}

// TestRunMetadataIsIdentity: a NemoRLRun's own metadata is its run's
// identity: its name names the objects, its namespace wins over the
// profile's (spec.namespace unset), its labels and annotations go onto
// every object and pod template; the tools' bookkeeping annotations do not.
func TestRunMetadataIsIdentity(t *testing.T) {
	config := `apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: sweep-a
  namespace: ml-prod
  labels:
    cost-center: rl-42
  annotations:
    example.com/ticket: RL-7
    config.kubernetes.io/function: "exec: {path: nrl-k8s}"
    internal.config.kubernetes.io/path: runs/sweep-a.yaml
    config.kubernetes.io/local-config: "true"
spec:
  recipe: ../recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml
  profile: ../profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml
  user: alice
  mode: raycluster
`
	rl := &framework.ResourceList{FunctionConfig: node(t, config), Items: qwenFiles(t)}
	require.NoError(t, krmframework.Process(rl))
	var objs []runcheck.Object
	for _, n := range rl.Items {
		if n.GetKind() == "ConfigMap" {
			continue
		}
		s, err := n.String()
		require.NoError(t, err)
		o, err := runcheck.Parse([]byte(s))
		require.NoError(t, err)
		objs = append(objs, o...)
	}
	require.Len(t, objs, 4)
	for _, o := range objs {
		require.Equal(t, "ml-prod", o.Namespace, o.ID())
		require.Equal(t, "sweep-a", o.Labels["app.kubernetes.io/instance"], o.ID())
		require.Equal(t, "rl-42", o.Labels["cost-center"], o.ID())
		md := o.Data["metadata"].(map[string]any)
		annos, _ := md["annotations"].(map[string]any)
		require.Equal(t, "RL-7", annos["example.com/ticket"], o.ID())
		for k := range annos {
			require.NotContains(t, k, "config.kubernetes.io/function", o.ID())
			require.NotEqual(t, "config.kubernetes.io/local-config", k, o.ID())
		}
		for path, labels := range runcheck.PodTemplates(o) {
			require.Equal(t, "rl-42", labels["cost-center"], o.ID()+path)
		}
	}
	require.Empty(t, runcheck.Dangling(objs))
	require.Contains(t, ids(rl.Items), "RayCluster/sweep-a-training")
	require.Contains(t, ids(rl.Items), "RayJob/sweep-a")
}
