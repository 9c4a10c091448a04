package recipe_test

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// fuzzDirs are where the fuzzed recipe is placed, so that the shipped
// `defaults:` chains (../../grpo_math_1B.yaml and the like) resolve.
var fuzzDirs = []string{"recipes/examples/configs", "recipes/examples/configs/recipes/llm", "recipes/examples/configs/recipes/llm/performance"}

// shippedRecipes holds every shipped recipe in memory by repo path.
func shippedRecipes(f *testing.F) source.Memory {
	root := testenv.RepoRoot(f)
	mem := source.Memory{}
	for _, dir := range fuzzDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			mem[dir+"/"+filepath.Base(file)] = b
		}
	}
	if len(mem) < 10 {
		f.Fatalf("found %d shipped recipes; expected the recipes/ tree", len(mem))
	}
	return mem
}

// FuzzLoad feeds one recipe file, placed among the shipped ones, through
// the loader (YAML tree, `defaults:` chain, merge) and then the resolver.
// No input may panic; every failure must name the file it is about.
func FuzzLoad(f *testing.F) {
	mem := shippedRecipes(f)
	for _, name := range mem.Names() {
		for i, dir := range fuzzDirs {
			if path.Dir(name) == dir {
				f.Add(uint8(i), mem[name])
			}
		}
	}
	f.Add(uint8(0), []byte("defaults: fuzz.yaml\n"))                     // self cycle
	f.Add(uint8(1), []byte("defaults: [../../grpo_math_1B.yaml, nope]")) // missing base
	f.Fuzz(func(t *testing.T, dirIdx uint8, data []byte) {
		file := fuzzDirs[int(dirIdx)%len(fuzzDirs)] + "/fuzz.yaml"
		src := source.Memory{file: data}
		for k, v := range mem {
			src[k] = v
		}
		rec, err := recipe.NewLoader(src).Load(file)
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, ".yaml") {
				t.Fatalf("error names no file: %q", msg)
			}
			return
		}
		if rec.Tree == nil || len(rec.Files) == 0 || rec.Files[len(rec.Files)-1] != file {
			t.Fatalf("loaded %v; expected the chain to end at %s", rec.Files, file)
		}
		if _, err := json.Marshal(rec.Tree); err != nil {
			t.Fatalf("a loaded recipe must encode: %v", err)
		}
		_, _ = interp.Resolve(rec.Tree, interp.Options{User: "alice"})
		_ = tree.Copy(rec.Tree)
	})
}
