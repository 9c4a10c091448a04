package krm_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krmframework"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
)

// Golden cases in the kpt functions catalog style: testdata/<case>/ holds
// input.yaml (the ResourceList kustomize or kpt sends, functionConfig
// included) and .expected/output.yaml (the ResourceList the function
// writes back, results included). The inputs are built from the
// repository's recipes and profiles, so TestGoldenInputs keeps them in sync
// with those files; `make golden` rewrites inputs and outputs.
const expectedOutput = ".expected/output.yaml"

// goldenInputs builds each case's input ResourceList.
func goldenInputs(t *testing.T) map[string][]byte {
	qwen := node(t, qwenRun)
	ultra48 := node(t, strings.NewReplacer(
		"ultra-64n-gb300", "ultra-48n-gb300",
		"ultra_64n_pipeclean", "ultra_48n_pipeclean",
	).Replace(ultra64Run))

	passThrough := []*yaml.RNode{
		node(t, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"),
	}
	passThrough = append(passThrough, qwenFiles(t)...)
	passThrough = append(passThrough,
		node(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unrelated\n  namespace: team-a\ndata:\n  key: value\n"),
		node(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  annotations:\n    note: kept as is # even comments\nspec:\n  size: 3\n"),
	)

	multi := []*yaml.RNode{
		filesCM(t, "nrl-recipes", "recipes/examples/configs", "grpo_math_1B.yaml", "grpo_ultra_64n4g_pipeclean.yaml"),
		filesCM(t, "nrl-recipes-llm-performance", "recipes/examples/configs/recipes/llm/performance",
			"grpo-qwen3-30ba3b-4n4g-async-1off.yaml", "grpo-qwen3-30ba3b-4n4g.yaml"),
		filesCM(t, "nrl-profiles-gb300", "profiles/gb300",
			"qwen3_30b_math_4n_4gpu.gb300.infra.yaml", "ultra_64n_pipeclean.gb300.infra.yaml"),
		node(t, ultra64Run),
	}

	badRun := node(t, strings.Replace(qwenRun, "  recipe:", "  recipee:", 1))

	return map[string][]byte{
		"qwen-rayjob":       resourceList(t, qwen, notLocal(t, qwenFiles(t))),
		"ultra-raycluster":  resourceList(t, ultra48, ultraFiles(t, "ultra_48n_pipeclean.gb300.infra.yaml")),
		"pass-through":      resourceList(t, qwen, passThrough),
		"missing-base-file": resourceList(t, qwen, qwenFiles(t)[1:]),
		"bad-run":           resourceList(t, badRun, passThrough[:1]),
		"multiple-runs":     resourceList(t, qwen, multi),
		"kpt-package":       resourceList(t, kptFunctionConfig(t), kptPackage(t)),
	}
}

// notLocal drops the local-config annotation: such inputs are consumed
// (removed from the output) instead of kept.
func notLocal(t testing.TB, items []*yaml.RNode) []*yaml.RNode {
	for _, n := range items {
		if err := n.PipeE(yaml.ClearAnnotation(vocab.LocalConfigAnnotation)); err != nil {
			panic(err)
		}
	}
	return items
}

// kptPackage is examples/kpt as kpt fn render hands it to a function: every
// file of the package an item with kpt's path and index annotations (both
// forms), local config included, and the objects a previous render wrote.
func kptPackage(t *testing.T) []*yaml.RNode {
	var items []*yaml.RNode
	add := func(n *yaml.RNode, p string) {
		for _, kv := range [][2]string{
			{kioutil.LegacyIndexAnnotation, "0"}, {kioutil.LegacyPathAnnotation, p}, //nolint:staticcheck // kpt packages carry both forms
			{kioutil.IndexAnnotation, "0"}, {kioutil.PathAnnotation, p},
		} {
			require.NoError(t, n.PipeE(yaml.SetAnnotation(kv[0], kv[1])))
		}
		items = append(items, n)
	}
	kptfile, err := os.ReadFile(filepath.Join(repoRoot, "examples/kpt/Kptfile"))
	require.NoError(t, err)
	add(node(t, string(kptfile)), "Kptfile")
	for _, cm := range kptExampleInputs(t) {
		add(cm, "inputs/"+cm.GetName()+".yaml")
	}
	add(kptFunctionConfig(t), "run.yaml")
	add(node(t, "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: from-an-earlier-render\n  labels:\n    app.kubernetes.io/managed-by: nrl-k8s\n"),
		"qwen3-30b-math-gb300/rayjob_from-an-earlier-render.yaml")
	return items
}

func kptFunctionConfig(t *testing.T) *yaml.RNode {
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples/kpt/run.yaml"))
	require.NoError(t, err)
	return node(t, string(b))
}

// kptExampleInputs are examples/kpt/inputs/*.yaml: the qwen files as
// local-config ConfigMaps, and where the run's file is below the package
// root the files-dir annotations name (the repository's root, two levels
// up from the kpt package, where kpt's own path annotation says run.yaml).
func kptExampleInputs(t *testing.T) []*yaml.RNode {
	runFiles, err := krm.RunFilesConfigMap("nrl-run-files", map[string]string{"qwen3-30b-math-gb300": "examples/kpt/run.yaml"})
	require.NoError(t, err)
	return append(qwenFiles(t), runFiles)
}

func TestGoldenInputs(t *testing.T) {
	for name, rl := range goldenInputs(t) {
		t.Run(name, func(t *testing.T) {
			golden.File(t, filepath.Join("testdata", name, "input.yaml"), rl)
		})
	}
	t.Run("examples/kpt/inputs", func(t *testing.T) {
		for _, cm := range kptExampleInputs(t) {
			s, err := cm.String()
			require.NoError(t, err)
			golden.File(t, filepath.Join(repoRoot, "examples/kpt/inputs", cm.GetName()+".yaml"), []byte(s))
		}
	})
}

// TestGoldenKRM runs every testdata/<case>/ through the command `nrl-k8s
// fn` is (command.Build: the ResourceList on stdin, kept reader
// annotations), so the goldens are the function's real stdout. For error
// cases the golden is the ResourceList with its error results: the
// processor wrapper turns the failure that must accompany them into
// success, so the checker compares output; exit 1 itself is pinned by
// fn/frontend/cli's TestFnCommand on the same fixtures.
func TestGoldenKRM(t *testing.T) {
	checker := frameworktestutil.CommandResultsChecker{
		TestDataDirectory:        "testdata",
		ConfigInputFilename:      "input.yaml", // the functionConfig is inside the ResourceList
		InputFilenameGlob:        "input.yaml",
		ExpectedOutputFilename:   expectedOutput,
		UpdateExpectedFromActual: golden.Updating(),
		Command: func() *cobra.Command {
			// Called in the case directory.
			in, err := os.ReadFile("input.yaml")
			require.NoError(t, err)
			c := command.Build(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
				err := krmframework.Process(rl)
				var results framework.Results
				if err != nil && errors.As(err, &results) && results.ExitCode() == 1 {
					return nil
				}
				if err == nil && rl.Results.ExitCode() != 0 {
					return errors.New("error results but Process returned nil")
				}
				return err
			}), command.StandaloneDisabled, false)
			c.SetIn(bytes.NewReader(in))
			return c
		},
	}
	if golden.Updating() {
		for name := range goldenInputs(t) {
			require.NoError(t, os.MkdirAll(filepath.Join("testdata", name, ".expected"), 0o755))
		}
	}
	checker.Assert(t)
	require.Len(t, checker.TestCasesRun(), len(goldenInputs(t)), "every case folder has an input.yaml")
}
