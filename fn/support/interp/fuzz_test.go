package interp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

var interpRE = regexp.MustCompile(`[^\s"']*\$\{[^\n]*`)

// seedStrings are the interpolations the shipped profiles and recipes use.
func seedStrings(f *testing.F) []string {
	root := testenv.RepoRoot(f)
	files, _ := filepath.Glob(filepath.Join(root, "profiles", "*", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(root, "recipes", "examples", "configs", "*.yaml"))
	seen := map[string]bool{}
	var out []string
	for _, file := range append(files, more...) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range interpRE.FindAllString(string(b), -1) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	if len(out) < 5 {
		f.Fatalf("found %d interpolations in the shipped files; expected many", len(out))
	}
	return out
}

func env(name string) (string, bool) {
	if name == "HOME" {
		return "/home/alice", true
	}
	return "", false
}

// FuzzResolveString resolves one raw string placed at several depths of a
// small tree that has things to point at.
func FuzzResolveString(f *testing.F) {
	for _, s := range seedStrings(f) {
		f.Add(s)
	}
	for _, s := range []string{`\${VAR}`, "${.x}", "${..a.b}", "${add:1,${mul:2,3}}", "${oc.env:HOME,'d'}", "${user:}", "${max:1,2.5}", "${div:1,0}", "${a.${k}}", "${", "$${x}}", `${oc.env:"X",${n}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		root := tree.NewMap()
		inner := tree.NewMap()
		inner.Set("x", s)
		inner.Set("b", int64(3))
		root.Set("a", inner)
		root.Set("k", "b")
		root.Set("n", int64(2))
		root.Set("l", []any{s, "${n}"})
		root.Set("s", s)
		v, err := interp.Resolve(root, interp.Options{User: "alice", Env: env})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if _, ok := v.(*tree.Map); !ok {
			t.Fatalf("resolved root is a %s; expected a mapping", tree.KindOf(v))
		}
		// The input is not modified: resolving again gives the same answer.
		if again, err := interp.Resolve(root, interp.Options{User: "alice", Env: env}); err != nil || !equal(v, again) {
			t.Fatalf("second resolution differs: %v", err)
		}
	})
}

// FuzzResolveYAML resolves whole documents: reference chains, cycles and
// interpolation bombs must end in an error, not a hang or an OOM.
func FuzzResolveYAML(f *testing.F) {
	root := testenv.RepoRoot(f)
	files, _ := filepath.Glob(filepath.Join(root, "profiles", "*", "*.yaml"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("a: ${b}\nb: ${a}"))
	f.Add([]byte("a0: xx\na1: ${a0}${a0}\na2: ${a1}${a1}\na3: ${a2}${a2}"))
	f.Add([]byte("a0: [1, 2]\na1: ['${a0}', '${a0}']\na2: ['${a1}', '${a1}']"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := tree.Parse("f.yaml", data)
		if err != nil {
			return
		}
		_, _ = interp.Resolve(doc, interp.Options{User: "alice", Env: env})
	})
}

func equal(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// TestInterpolationBombFails pins the fix for what fuzzing found: keys that
// each repeat the previous one twice grow 2^n from a few bytes of input and
// killed the process with an OOM; now they fail with an error.
func TestInterpolationBombFails(t *testing.T) {
	for name, doc := range map[string]string{
		"strings": bomb(`a%d: ${a%d}${a%d}`, "a0: xxxxxxxxxxxxxxxx"),
		"lists":   bomb(`a%d: ['${a%d}', '${a%d}']`, "a0: [xxxxxxxxxxxxxxxx]"),
		"one key": "a: " + strings.Repeat("x", 1<<16) + "\nb: " + strings.Repeat("${a}", 1<<10),
	} {
		t.Run(name, func(t *testing.T) {
			root, err := tree.Parse("f.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			_, err = interp.Resolve(root, interp.Options{})
			if err == nil || !strings.Contains(err.Error(), "resolution produces more than") {
				t.Fatalf("got %v; expected the size limit error", err)
			}
		})
	}
}

func bomb(line, first string) string {
	lines := []string{first}
	for i := 1; i < 48; i++ {
		lines = append(lines, fmt.Sprintf(line, i, i-1, i-1))
	}
	return strings.Join(lines, "\n")
}
