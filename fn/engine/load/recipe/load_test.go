package recipe_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func yamlFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	}))
	sort.Strings(out)
	return out
}

// upstreamRoot is recipes/: NeMo-RL's repository root as far as recipes are
// concerned (examples/configs, examples/nemo_gym, examples/modelopt), so a
// recipe's path below it is its path in a NeMo-RL checkout.
func upstreamRoot(t *testing.T) string {
	return filepath.ToSlash(testenv.Recipes(t))
}

// chainsOutsideConfigs are recipes whose `defaults:` chain leaves
// examples/configs for examples/nemo_gym or examples/modelopt (upstream
// they climb as ../../../nemo_gym/... and ../../../../examples/modelopt/...),
// with one base each chain must reach. They pin the layout: under a bare
// recipes/configs tree these would not resolve, or would climb out of
// recipes/.
var chainsOutsideConfigs = map[string]string{
	"recipes/llm/distillation-nano3-30ba3b-4n4g-megatron-qa-nvfp4-modelopt-spec.yaml":                           "examples/modelopt/qa_distillation_nano3_megatron.yaml",
	"recipes/llm/distillation-qwen3-1.7b-1n8g-megatron-qa-nvfp4.yaml":                                           "examples/modelopt/qa_distillation_math_megatron.yaml",
	"recipes/llm/gdpo-qwen2.5-1.5b-1n8g-gym-multireward.yaml":                                                   "examples/nemo_gym/gdpo_example_tool_call_multireward.yaml",
	"recipes/llm/grpo-nanov3-30BA3B-2n8g-megatron_generation-async-gym.yaml":                                    "examples/nemo_gym/grpo_nanov3.yaml",
	"recipes/llm/grpo-nanov3-30ba3b-3n8g-megatron-dynamo-swe1.yaml":                                             "examples/nemo_gym/grpo_nanov3.yaml",
	"recipes/llm/grpo-nanov3-30ba3b-4n4g-megatron-qa-nvfp4-w4a16-real.yaml":                                     "examples/modelopt/qa_grpo_nano3_megatron.yaml",
	"recipes/llm/grpo-qwen3-1.7b-1n8g-megatron-super-swe1.yaml":                                                 "examples/nemo_gym/nemotron-3-super/stage2_swe1.yaml",
	"recipes/llm/grpo-qwen3-1.7b-2n8g-megatron-super-rlhf.yaml":                                                 "examples/nemo_gym/nemotron-3-super/stage3_rlhf.yaml",
	"recipes/llm/grpo-qwen3-1.7b-6n8g-megatron-super-rlvr.yaml":                                                 "examples/nemo_gym/nemotron-3-super/stage1_rlvr.yaml",
	"recipes/llm/grpo-qwen3-30ba3b-4n4g-megatron-qa-nvfp4-w4a4-real.yaml":                                       "examples/modelopt/qa_grpo_qwen3_30ba3b_megatron.yaml",
	"recipes/llm/grpo-qwen3-30ba3b-4n8g-megatron-qa-nvfp4.yaml":                                                 "examples/modelopt/qa_grpo_qwen3_30ba3b_megatron.yaml",
	"recipes/llm/grpo-qwen3-30ba3b-thinking-swe1-16n8g-megatron-cp2-r3-async-gym.yaml":                          "examples/nemo_gym/grpo_qwen3_30ba3b_thinking_swe1.yaml",
	"recipes/vlm/mopd-nemotron-super-omni-120ba12b-10n8g-megatron-tp8ep16cp2-async-gym.v1.yaml":                 "examples/nemo_gym/grpo_nanov3.yaml",
	"recipes/vlm/mopd-nemotron-super-omni-120ba12b-4n8g-smoke.v1.yaml":                                          "examples/nemo_gym/grpo_nanov3.yaml",
	"recipes/vlm/vlm_grpo-nemotron-omni-30ba3b-16n8g-megatron-tp4ep4-async-gym-video.v1.yaml":                   "examples/nemo_gym/grpo_nanov3.yaml",
	"recipes/vlm/vlm_grpo-nemotron-omni-30ba3b-2n8g-megatron-tp4ep4-gym-video.v1.yaml":                          "examples/nemo_gym/grpo_nanov3.yaml",
	"recipes/vlm/vlm_grpo-nemotron-super-omni-120ba12b-16n8g-megatron-tp8ep16cp2-async-gym-mtp-specdec.v1.yaml": "examples/nemo_gym/grpo_nanov3.yaml",
	"recipes/vlm/vlm_grpo-nemotron-super-omni-120ba12b-16n8g-megatron-tp8ep16cp2-async-gym-mtp.v1.yaml":         "examples/nemo_gym/grpo_nanov3.yaml",
	"recipes/vlm/vlm_grpo-nemotron-super-omni-120ba12b-16n8g-megatron-tp8ep16cp2-async-gym.v1.yaml":             "examples/nemo_gym/grpo_nanov3.yaml",
}

// Every recipe users bring (all of recipes/examples/configs) loads
// (defaults chain, anchors, _override_) and resolves (${...}, resolvers),
// and every file of every chain lies inside recipes/examples/.
// (That recipes/ equals the upstream copy is tests/vendored's job.)
func TestEveryShippedRecipeLoadsAndResolves(t *testing.T) {
	root := upstreamRoot(t)
	configs := root + "/examples/configs"
	files := yamlFiles(t, configs)
	require.Len(t, files, 296, "295 NeMo-RL recipes plus the ultra side-branch recipe")
	env := func(k string) (string, bool) {
		if k == "HF_HOME" {
			return "/mnt/hf", true
		}
		return "", false
	}
	l := recipe.NewLoader(source.Disk{})
	resolved, outside := 0, 0
	for _, f := range files {
		path := configs + "/" + f
		rec, err := l.Load(path)
		require.NoError(t, err, f)
		require.NotEmpty(t, rec.Files)
		require.Equal(t, path, rec.Files[len(rec.Files)-1], "the recipe itself is merged last")
		var chain []string
		for _, file := range rec.Files {
			rel, ok := strings.CutPrefix(file, root+"/examples/")
			require.True(t, ok, "%s: chain file %s lies outside recipes/examples/", f, file)
			chain = append(chain, "examples/"+rel)
		}
		if base, ok := chainsOutsideConfigs[f]; ok {
			require.Contains(t, chain, base, f)
			outside++
		} else {
			for _, file := range chain {
				require.True(t, strings.HasPrefix(file, "examples/configs/"), "%s: chain reaches %s; list it in chainsOutsideConfigs", f, file)
			}
		}
		_, hasDefaults := rec.Tree.Get("defaults")
		require.False(t, hasDefaults, "%s: defaults key must be consumed", f)
		_, err = interp.Resolve(rec.Tree, interp.Options{User: "alice", Env: env})
		require.NoError(t, err, f)
		resolved++
	}
	require.Equal(t, 296, resolved)
	require.Equal(t, len(chainsOutsideConfigs), outside)
}

// The bases under examples/nemo_gym and examples/modelopt are recipes in
// their own right upstream (their chains climb back as ../configs/...):
// they load and resolve too. quant_configs/ holds files the training code
// reads in the pod (quant_cfg:), not recipes.
func TestNemoGymAndModeloptBasesLoad(t *testing.T) {
	root := upstreamRoot(t)
	l := recipe.NewLoader(source.Disk{})
	n := 0
	for _, dir := range []string{"examples/nemo_gym", "examples/modelopt"} {
		for _, f := range yamlFiles(t, root+"/"+dir) {
			if strings.HasPrefix(f, "quant_configs/") {
				continue
			}
			path := root + "/" + dir + "/" + f
			rec, err := l.Load(path)
			require.NoError(t, err, path)
			for _, file := range rec.Files {
				require.True(t, strings.HasPrefix(file, root+"/examples/"), "%s: chain file %s lies outside recipes/examples/", path, file)
			}
			n++
		}
	}
	require.Greater(t, n, 10, "expected the nemo_gym and modelopt bases")
}

// configFlagRE finds the recipe a driver call names (--config PATH,
// --config=PATH, optionally quoted): a path in the pod's NeMo-RL tree.
var configFlagRE = regexp.MustCompile(`--config(?:\s+|=)['"]?([^\s'"]+\.ya?ml)`)

// recipes/ mirrors NeMo-RL's repository root, so the recipe a shipped
// profile's entrypoint runs in the pod (--config examples/configs/...) is
// the file at the same path below recipes/.
func TestPodConfigPathsExistUnderRecipes(t *testing.T) {
	repo := testenv.RepoRoot(t)
	profiles, err := filepath.Glob(filepath.Join(repo, "profiles", "*", "*.infra.yaml"))
	require.NoError(t, err)
	goldens, err := filepath.Glob(filepath.Join(repo, "tests", "golden", "*", "*.infra.yaml"))
	require.NoError(t, err)
	found := 0
	for _, f := range append(profiles, goldens...) {
		for _, m := range configFlagRE.FindAllStringSubmatch(testenv.ReadFile(t, f), -1) {
			if filepath.Base(filepath.Dir(f)) == "config-any-script" {
				// That case's own script names a path outside NeMo-RL's
				// tree on purpose: the render rewrites it (its expected
				// output shows the pod's path).
				continue
			}
			// A golden case may carry its own recipes/ tree, laid out the same way.
			local := filepath.Join(filepath.Dir(f), "recipes", filepath.FromSlash(m[1]))
			if _, err := os.Stat(local); err == nil {
				found++
				continue
			}
			require.FileExists(t, filepath.Join(upstreamRoot(t), filepath.FromSlash(m[1])), "%s runs --config %s", f, m[1])
			found++
		}
	}
	require.GreaterOrEqual(t, found, 4, "the shipped profiles name their recipes with --config")
}

func TestChainOrderAndMerge(t *testing.T) {
	l := recipe.NewLoader(source.Disk{})
	leaf := upstreamRoot(t) + "/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"
	rec, err := l.Load(leaf)
	require.NoError(t, err)
	require.Len(t, rec.Files, 3)
	require.True(t, strings.HasSuffix(rec.Files[0], "configs/grpo_math_1B.yaml"))
	require.True(t, strings.HasSuffix(rec.Files[1], "performance/grpo-qwen3-30ba3b-4n4g.yaml"))
	for path, want := range map[string]int64{"cluster.gpus_per_node": 4, "cluster.num_nodes": 4, "cluster.segment_size": 2} {
		v, ok := tree.Lookup(rec.Tree, tree.ParsePath(path))
		require.True(t, ok, path)
		require.Equal(t, want, v, path)
	}
}

func TestLoaderErrors(t *testing.T) {
	cases := []struct {
		name  string
		files source.Memory
		entry string
		want  string
	}{
		{"cycle", source.Memory{"a.yaml": []byte("defaults: b.yaml\nx: 1\n"), "b.yaml": []byte("defaults: a.yaml\n")},
			"a.yaml", "b.yaml: defaults: cycle: a.yaml -> b.yaml -> a.yaml"},
		{"self cycle", source.Memory{"a.yaml": []byte("defaults: ./a.yaml\n")},
			"a.yaml", "a.yaml: defaults: cycle: a.yaml -> a.yaml"},
		{"missing base", source.Memory{"dir/a.yaml": []byte("defaults: ../base.yaml\n")},
			"dir/a.yaml", "dir/a.yaml: defaults: base file base.yaml not found (chain: dir/a.yaml -> base.yaml)"},
		{"defaults not a path", source.Memory{"a.yaml": []byte("defaults: {x: 1}\n")},
			"a.yaml", "a.yaml: defaults: found a mapping; expected a path or a list of paths"},
		{"defaults list item", source.Memory{"a.yaml": []byte("defaults: [b.yaml, 3]\n"), "b.yaml": []byte("x: 1\n")},
			"a.yaml", "a.yaml: defaults[1]: found an integer; expected a relative path to a base file"},
		{"top level list", source.Memory{"a.yaml": []byte("- 1\n- 2\n")},
			"a.yaml", "a.yaml: expected a mapping at the top level, found a list"},
		{"duplicate key", source.Memory{"a.yaml": []byte("x: 1\nx: 2\n")},
			"a.yaml", `a.yaml:2:1: duplicate key "x"`},
		{"malformed", source.Memory{"a.yaml": []byte("a: [1, 2\n")},
			"a.yaml", "a.yaml: "},
		{"invalid escape in double quotes", source.Memory{"a.yaml": []byte(`x: "\${X}"` + "\n")},
			"a.yaml", "a.yaml: "},
		{"missing entry", source.Memory{}, "nope.yaml", "nope.yaml: file not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := recipe.NewLoader(tc.files).Load(tc.entry)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestListDefaultsMergeLeftToRight(t *testing.T) {
	src := source.Memory{
		"a.yaml": []byte("defaults: [b.yaml, c.yaml]\nkeep: a\n"),
		"b.yaml": []byte("x: b\ny: b\nm: {p: b, q: b}\n"),
		"c.yaml": []byte("y: c\nm: {q: c}\nl: [1]\n"),
	}
	rec, err := recipe.NewLoader(src).Load("a.yaml")
	require.NoError(t, err)
	js, _ := rec.Tree.MarshalJSON()
	require.JSONEq(t, `{"x":"b","y":"c","m":{"p":"b","q":"c"},"l":[1],"keep":"a"}`, string(js))
	require.Equal(t, []string{"b.yaml", "c.yaml", "a.yaml"}, rec.Files)
}

func TestOverrideMarkerReplacesParentMapping(t *testing.T) {
	src := source.Memory{
		"base.yaml": []byte("data:\n  train: {path: a}\n  validation: {path: b}\n"),
		"leaf.yaml": []byte("defaults: base.yaml\ndata:\n  _override_: true\n  path: c\n"),
	}
	rec, err := recipe.NewLoader(src).Load("leaf.yaml")
	require.NoError(t, err)
	js, _ := rec.Tree.MarshalJSON()
	require.JSONEq(t, `{"data":{"path":"c"}}`, string(js))
}

// A defaults diamond (each file names the previous one twice) is merged
// once per file: 41 files deep it loads at once, and each file is listed
// once, bases first.
func TestDiamondIsLinear(t *testing.T) {
	mem := source.Memory{"d0.yaml": []byte("a: 1\nb: {c: 2}\n")}
	for i := 1; i <= 40; i++ {
		mem[fmt.Sprintf("d%d.yaml", i)] = []byte(fmt.Sprintf("defaults: [d%d.yaml, d%d.yaml]\nk%d: %d\n", i-1, i-1, i, i))
	}
	start := time.Now()
	rec, err := recipe.NewLoader(mem).Load("d40.yaml")
	require.NoError(t, err)
	require.Less(t, time.Since(start), 2*time.Second)
	require.Len(t, rec.Files, 41)
	require.Equal(t, "d0.yaml", rec.Files[0])
	require.Equal(t, "d40.yaml", rec.Files[40])
	v, _ := rec.Tree.Get("k40")
	require.EqualValues(t, 40, v)
}

// A base that cannot be read is reported at the file and field that name
// it; a run's files together stay within MaxRunInput.
func TestBaseErrorsAndRunBudget(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r.yaml"), []byte("defaults: [ok.yaml, /etc/passwd]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("a: 1\n"), 0o644))
	disk, err := source.Confine(dir)
	require.NoError(t, err)
	_, err = recipe.NewLoader(disk).Load(filepath.ToSlash(filepath.Join(dir, "r.yaml")))
	var le *recipe.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, "defaults[1]", le.Field)
	require.Contains(t, le.Msg, "base file /etc/passwd: not a file inside the root")
	require.ErrorIs(t, err, source.ErrRefused)

	// Five files under the per-file limit, over the run's budget together.
	big := bytes.Repeat([]byte("# 32 bytes of comment padding ..\n"), (source.MaxFileSize*9/10)/32)
	mem := source.Memory{"f0.yaml": append([]byte("x: 1\n"), big...)}
	for i := 1; i < 5; i++ {
		mem[fmt.Sprintf("f%d.yaml", i)] = append([]byte(fmt.Sprintf("defaults: f%d.yaml\n", i-1)), big...)
	}
	l := recipe.NewLoader(mem)
	_, err = l.Load("f4.yaml")
	require.NoError(t, err, "no budget before a run starts")
	l.StartRun()
	_, err = l.Load("f4.yaml")
	require.ErrorContains(t, err, "add up to more than", "cached files count for the run that uses them")
}

// The tree Load returns is the caller's: changing it (as the profile and
// override steps do) changes no later load from the same loader, whether
// the file was loaded on its own, as another file's base, or both, and
// Parse hands out a copy too. `defaults:` is never in a loaded tree.
func TestLoadedTreesAreTheCallers(t *testing.T) {
	mem := source.Memory{
		"base.yaml": []byte("policy: {lr: 1, layers: [a, b]}\nkeep: base\n"),
		"mid.yaml":  []byte("defaults: base.yaml\npolicy: {lr: 2}\n"),
		"leaf.yaml": []byte("defaults: [mid.yaml]\nleaf: true\n"),
	}
	l := recipe.NewLoader(mem)
	scribble := func(m *tree.Map) {
		pol, _ := m.Get("policy")
		pol.(*tree.Map).Set("lr", 99)
		if layers, ok := pol.(*tree.Map).Get("layers"); ok {
			layers.([]any)[0] = "changed"
		}
		m.Set("keep", "changed")
		m.Set("defaults", "changed.yaml")
	}
	// Each order: a file first loaded on its own, then as a base, and the
	// other way round.
	for _, file := range []string{"mid.yaml", "leaf.yaml", "mid.yaml", "base.yaml", "leaf.yaml"} {
		rec, err := l.Load(file)
		require.NoError(t, err, file)
		_, hasDefaults := rec.Tree.Get("defaults")
		require.False(t, hasDefaults, file)
		lr, _ := tree.Lookup(rec.Tree, tree.ParsePath("policy.lr"))
		want := int64(2)
		if file == "base.yaml" {
			want = 1
		}
		require.Equal(t, want, lr, file)
		first, _ := tree.Lookup(rec.Tree, tree.ParsePath("policy.layers[0]"))
		require.Equal(t, "a", first, file)
		keep, _ := rec.Tree.Get("keep")
		require.Equal(t, "base", keep, file)
		scribble(rec.Tree)
	}
	p, err := l.Parse("mid.yaml")
	require.NoError(t, err)
	d, _ := p.Get("defaults")
	require.Equal(t, "base.yaml", d, "Parse keeps `defaults:`")
	scribble(p)
	p, err = l.Parse("mid.yaml")
	require.NoError(t, err)
	d, _ = p.Get("defaults")
	require.Equal(t, "base.yaml", d)
	// Holds reads each file as written, after all the scribbling above.
	for _, c := range []struct {
		file, path string
		want       bool
	}{{"mid.yaml", "policy.lr", true}, {"mid.yaml", "keep", false}, {"base.yaml", "keep", true}, {"leaf.yaml", "policy", false}, {"base.yaml", "policy.layers[0]", true}} {
		got, err := l.Holds(c.file, tree.ParsePath(c.path))
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%s %s", c.file, c.path)
	}
	_, err = l.Holds("missing.yaml", tree.ParsePath("a"))
	require.Error(t, err)
}
