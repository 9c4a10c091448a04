package krminputs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krminputs"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// inputsTree is a git work tree holding a recipe with a defaults chain, a
// profile, a kustomization with the generated block's markers and its
// run, and an empty kpt package.
func inputsTree(t *testing.T) string {
	t.Helper()
	tree := t.TempDir()
	for name, content := range map[string]string{
		"configs/base.yaml":    "a: 1\n",
		"configs/r.yaml":       "defaults: base.yaml\nb: 2\n",
		"profiles/p.yaml":      "image: x\n",
		"k/kustomization.yaml": "kind: Kustomization\n" + krminputs.BeginMarker + "\n" + krminputs.EndMarker + "\n",
		"k/run.yaml": "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata: {name: r}\n" +
			"spec: {recipe: ../configs/r.yaml, profile: ../profiles/p.yaml, user: a}\n",
		"kpt/Kptfile": "kind: Kptfile\n",
	} {
		p := filepath.Join(tree, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(tree, "kpt", "inputs"), 0o755))
	testenv.GitCheckout(t, tree)
	return tree
}

// Execute prints, writes or checks a kustomization's block or a kpt
// package's inputs/; a directory flag it cannot use is a FlagError naming
// the flag, and Check says what is stale and how to fix it.
func TestExecute(t *testing.T) {
	kustomize := func(tree string, mode krminputs.Mode) krminputs.Options {
		return krminputs.Options{RunFiles: []string{filepath.Join(tree, "k", "run.yaml")}, Kustomization: filepath.Join(tree, "k"), Root: tree, Mode: mode}
	}
	kpt := func(tree string, mode krminputs.Mode) krminputs.Options {
		o := kustomize(tree, mode)
		o.Kpt = filepath.Join(tree, "kpt")
		return o
	}
	// written runs o's Write, then tracks what it wrote.
	written := func(t *testing.T, tree string, o krminputs.Options) {
		require.NoError(t, krminputs.Execute(o))
		testenv.GitAdd(t, tree)
	}
	cases := []struct {
		name   string
		opts   func(t *testing.T, tree string) krminputs.Options
		err    string   // "" none; ErrStale's text for ErrStale
		flag   string   // the FlagError's flag
		stdout string   // in stdout
		stderr []string // in stderr
	}{
		{name: "kustomize: print the block", opts: func(_ *testing.T, tree string) krminputs.Options { return kustomize(tree, krminputs.Print) },
			stdout: "  - ../configs/base.yaml\n  - ../configs/r.yaml\n"},
		{name: "kustomize: a stale block", opts: func(_ *testing.T, tree string) krminputs.Options { return kustomize(tree, krminputs.Check) },
			err: "the inputs are stale", stderr: []string{"kustomization.yaml: the inputs block is stale; run nrl-k8s kustomize-inputs --write\n", "\n+  - ../configs/r.yaml\n"}},
		{name: "kustomize: written, then fresh", opts: func(t *testing.T, tree string) krminputs.Options {
			written(t, tree, kustomize(tree, krminputs.Write))
			require.Contains(t, testenv.ReadFile(t, filepath.Join(tree, "k", "kustomization.yaml")), "  - ../profiles/p.yaml\n")
			return kustomize(tree, krminputs.Check)
		}},
		{name: "kustomize: no markers to write between", opts: func(t *testing.T, tree string) krminputs.Options {
			require.NoError(t, os.WriteFile(filepath.Join(tree, "k", "kustomization.yaml"), []byte("kind: Kustomization\n"), 0o644))
			return kustomize(tree, krminputs.Write)
		}, err: "kustomization.yaml: "},
		{name: "kpt: print the ConfigMaps", opts: func(_ *testing.T, tree string) krminputs.Options { return kpt(tree, krminputs.Print) },
			stdout: "---\napiVersion: v1\nkind: ConfigMap\n"},
		{name: "kpt: missing ConfigMaps", opts: func(_ *testing.T, tree string) krminputs.Options { return kpt(tree, krminputs.Check) },
			err: "the inputs are stale", stderr: []string{"kpt/inputs/nrl-files.yaml: stale or missing\n"}},
		{name: "kpt: written, then fresh", opts: func(t *testing.T, tree string) krminputs.Options {
			written(t, tree, kpt(tree, krminputs.Write))
			return kpt(tree, krminputs.Check)
		}},
		{name: "kpt: a generated ConfigMap no run needs", opts: func(t *testing.T, tree string) krminputs.Options {
			written(t, tree, kpt(tree, krminputs.Write))
			old := testenv.ReadFile(t, filepath.Join(tree, "kpt", "inputs", "nrl-files.yaml"))
			require.NoError(t, os.WriteFile(filepath.Join(tree, "kpt", "inputs", "nrl-old.yaml"), []byte(old), 0o644))
			testenv.GitAdd(t, tree)
			return kpt(tree, krminputs.Check)
		}, err: "the inputs are stale", stderr: []string{"nrl-old.yaml: no run reads these files any more\nrun nrl-k8s kustomize-inputs --kpt "}},
		{name: "a root that is not there", opts: func(_ *testing.T, tree string) krminputs.Options {
			o := kustomize(tree, krminputs.Print)
			o.Root = filepath.Join(tree, "none")
			return o
		}, flag: "--root", err: "--root: "},
		{name: "a kustomization outside the root", opts: func(t *testing.T, tree string) krminputs.Options {
			o := kustomize(tree, krminputs.Print)
			o.Kustomization = filepath.Dir(tree)
			return o
		}, flag: "-k", err: "-k: the kustomization directory is outside --root"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts(t, inputsTree(t))
			var stdout, stderr bytes.Buffer
			o.Stdout, o.Stderr = &stdout, &stderr
			err := krminputs.Execute(o)
			var flagErr *krminputs.FlagError
			require.Equal(t, tc.flag != "", errors.As(err, &flagErr), "a FlagError: %v", err)
			switch {
			case tc.flag != "":
				require.Equal(t, tc.flag, flagErr.Flag)
				require.ErrorContains(t, err, tc.err)
			case tc.err == krminputs.ErrStale.Error():
				require.ErrorIs(t, err, krminputs.ErrStale)
			case tc.err != "":
				require.ErrorContains(t, err, tc.err)
			default:
				require.NoError(t, err)
			}
			require.Contains(t, stdout.String(), tc.stdout)
			for _, want := range tc.stderr {
				require.Contains(t, stderr.String(), want)
			}
			if tc.err == "" {
				require.Empty(t, stderr.String())
			}
		})
	}
}
