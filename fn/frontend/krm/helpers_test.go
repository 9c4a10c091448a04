package krm_test

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
)

// repoRoot is where recipes/ and profiles/ live, relative to this package.
const repoRoot = "../../.."

// filesCM is an input ConfigMap holding repository files of one directory.
func filesCM(t testing.TB, name, dir string, names ...string) *yaml.RNode {
	t.Helper()
	files := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(path.Join(dir, n))))
		require.NoError(t, err)
		files[n] = b
	}
	cm, err := krm.FilesConfigMap(name, dir, files)
	require.NoError(t, err)
	return cm
}

// Input ConfigMaps of the shipped examples.
func qwenFiles(t testing.TB) []*yaml.RNode {
	return []*yaml.RNode{
		filesCM(t, "nrl-recipes", "recipes/examples/configs", "grpo_math_1B.yaml"),
		filesCM(t, "nrl-recipes-llm-performance", "recipes/examples/configs/recipes/llm/performance",
			"grpo-qwen3-30ba3b-4n4g-async-1off.yaml", "grpo-qwen3-30ba3b-4n4g.yaml"),
		filesCM(t, "nrl-profiles-gb300", "profiles/gb300", "qwen3_30b_math_4n_4gpu.gb300.infra.yaml"),
	}
}

func ultraFiles(t testing.TB, profile string) []*yaml.RNode {
	return []*yaml.RNode{
		filesCM(t, "nrl-recipes", "recipes/examples/configs", "grpo_ultra_64n4g_pipeclean.yaml"),
		filesCM(t, "nrl-profiles-gb300", "profiles/gb300", profile),
	}
}

func node(t testing.TB, s string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(s)
	require.NoError(t, err)
	return n
}

const qwenRun = `apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: qwen3-30b-math-gb300
spec:
  recipe: recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml
  profile: profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml
  user: alice
  namespace: default
`

const ultra64Run = `apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: ultra-64n-gb300
spec:
  recipe: recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml
  profile: profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml
  mode: raycluster
  runId: pc1
  user: alice
  namespace: default
`

// resourceList writes a ResourceList as kustomize and kpt send it.
func resourceList(t testing.TB, fnConfig *yaml.RNode, items []*yaml.RNode) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, kio.ByteWriter{
		Writer:                &buf,
		KeepReaderAnnotations: true,
		WrappingAPIVersion:    kio.ResourceListAPIVersion,
		WrappingKind:          kio.ResourceListKind,
		FunctionConfig:        fnConfig,
	}.Write(items))
	return buf.Bytes()
}
