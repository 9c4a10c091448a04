package profile_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// pairs are the shipped profiles with the recipes they are meant for, so
// that seeds render all the way through build and emit.
var pairs = []struct{ recipe, profile string }{
	{"recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml", "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"},
	{"recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml", "profiles/gb300/ultra_48n_pipeclean.gb300.infra.yaml"},
	{"recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml", "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml"},
	{"recipes/examples/configs/grpo_math_1B.yaml", "tests/golden/disaggregated/disagg.gb300.infra.yaml"},
	{"recipes/examples/configs/recipes/llm/grpo-qwen2.5-math-1.5b-instruct-1n8g-fsdp2tp1.v3-tq_simple.yaml", "tests/golden/upload-no-dra/single.infra.yaml"},
}

// recipes holds every shipped recipe in memory by repo path.
func recipes(f testing.TB) source.Memory {
	root := testenv.RepoRoot(f)
	mem := source.Memory{}
	err := filepath.WalkDir(filepath.Join(root, "recipes"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		mem[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	return mem
}

var modes = []runparams.Mode{runparams.RayJob, runparams.RayCluster, runparams.Dev}

// FuzzProfile feeds one in-memory infra profile through the whole pipeline
// (decode, validate, check, build, emit) in every mode. No input may panic;
// a render without errors must emit, and emit the same bytes twice.
func FuzzProfile(f *testing.F) {
	root := testenv.RepoRoot(f)
	mem := recipes(f)
	for i, p := range pairs {
		b, err := os.ReadFile(filepath.Join(root, p.profile))
		if err != nil {
			f.Fatal(err)
		}
		for m := range modes {
			f.Add(uint8(i), uint8(m), b)
		}
	}
	f.Add(uint8(0), uint8(0), []byte("kuberay: {training: {spec: {workerGroupSpecs: [{replicas: -1}]}}}"))
	f.Add(uint8(1), uint8(1), []byte("image: ${user:}\nkuberay: []"))
	f.Fuzz(func(t *testing.T, pairIdx, modeIdx uint8, data []byte) {
		rec := pairs[int(pairIdx)%len(pairs)].recipe
		mode := modes[int(modeIdx)%len(modes)]
		out := render(t, mem, rec, mode, data)
		if out == nil {
			return
		}
		if again := render(t, mem, rec, mode, data); !bytes.Equal(out, again) {
			t.Fatal("two renders of the same input differ")
		}
	})
}

// TestFuzzSeedsRender keeps the corpus useful: every seed pair renders in
// rayjob mode, so mutations explore build and emit, not just decoding.
func TestFuzzSeedsRender(t *testing.T) {
	root := testenv.RepoRoot(t)
	mem := recipes(t)
	for _, p := range pairs {
		b, err := os.ReadFile(filepath.Join(root, p.profile))
		if err != nil {
			t.Fatal(err)
		}
		if render(t, mem, p.recipe, runparams.RayJob, b) == nil {
			t.Errorf("%s with %s does not render; the fuzz seed only exercises decoding", p.profile, p.recipe)
		}
	}
}

func render(t *testing.T, mem source.Memory, rec string, mode runparams.Mode, profile []byte) []byte {
	src := source.Memory{"p.infra.yaml": profile}
	for k, v := range mem {
		src[k] = v
	}
	res := pipeline.Render(recipe.NewLoader(src), pipeline.Request{
		Recipe:  rec,
		Profile: "p.infra.yaml",
		Run: runparams.Run{
			Mode:  mode,
			User:  "alice",
			RunID: "r1",
		},
	})
	for _, d := range res.Diags {
		if strings.TrimSpace(d.Message) == "" {
			t.Fatalf("finding without a message: %+v", d)
		}
	}
	if res.Diags.HasErrors() {
		if res.Docs != nil {
			t.Fatal("a render with errors must not return documents")
		}
		return nil
	}
	if len(res.Docs) == 0 {
		t.Fatal("a render without errors emitted nothing")
	}
	b, err := emit.Stream(res.Docs)
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	return b
}
