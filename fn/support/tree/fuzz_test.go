package tree_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// shippedYAML is the seed corpus: every recipe and profile the repository
// ships, so mutations start from real NeMo-RL configs.
func shippedYAML(f *testing.F) [][]byte {
	root := testenv.RepoRoot(f)
	var out [][]byte
	for _, pat := range []string{"recipes/examples/configs/*.yaml", "recipes/examples/configs/recipes/llm/*.yaml", "recipes/examples/configs/recipes/llm/performance/*.yaml", "profiles/*/*.yaml"} {
		files, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if len(out) < 10 {
		f.Fatalf("found %d shipped YAML files; expected the recipes/ and profiles/ trees", len(out))
	}
	return out
}

// FuzzParse: no input panics the parser, and whatever it accepts survives
// ToYAML (the `values` output) and a second Parse unchanged, so `values`
// never prints something that reads back differently.
func FuzzParse(f *testing.F) {
	for _, b := range shippedYAML(f) {
		f.Add(b)
	}
	for _, s := range []string{"", "a: &x [*x]", "a: 'yes'\nb: \"0x10\"\nc: '1e3'", "<<: {a: 1}\nb: 2", "- 1\n- [2, {c: d}]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := tree.Parse("f.yaml", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		out, err := tree.ToYAML(v)
		if err != nil {
			t.Fatalf("ToYAML of a parsed tree: %v", err)
		}
		again, err := tree.Parse("f.yaml", out)
		if err != nil {
			t.Fatalf("ToYAML output does not parse: %v\n%s", err, out)
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("round trip changed the tree:\n%s\n%s\nYAML:\n%s", a, b, out)
		}
	})
}
