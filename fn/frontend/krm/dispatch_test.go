package krm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	syaml "sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
)

// The KRM function (as `nrl-k8s fn --files ROOT --runs FILE`) renders a run
// that MultiKueue dispatches as the CLI does: tests/golden/h100-multikueue's
// objects, spec.managedBy included.
func TestGeneratorRendersTheDispatchedRun(t *testing.T) {
	dir := filepath.Join(repoRoot, "tests", "golden", "h100-multikueue")
	opts, err := krm.NewGenerator(krm.GeneratorInputs{Root: repoRoot, RunFiles: []string{filepath.Join(dir, "run.yaml")}, Dir: ".",
		RootName: "--files", RunName: func(int) string { return "--runs" }})
	require.NoError(t, err)
	var out bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: bytes.NewBufferString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"), Writer: &out}
	require.NoError(t, krm.ExecuteWith(rw, nil, opts))
	var got struct {
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, syaml.Unmarshal(out.Bytes(), &got))
	want, err := os.ReadFile(filepath.Join(dir, "expected", "rayjob.yaml"))
	require.NoError(t, err)
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(want), OmitReaderAnnotations: true}).Read()
	require.NoError(t, err)
	require.Len(t, got.Items, len(nodes), out.String())
	for i, n := range nodes {
		var w map[string]any
		require.NoError(t, syaml.Unmarshal([]byte(n.MustString()), &w))
		// The function's own: where kustomize or kpt writes each item.
		meta := got.Items[i]["metadata"].(map[string]any)
		ann := meta["annotations"].(map[string]any)
		delete(ann, "config.kubernetes.io/path")
		delete(ann, "internal.config.kubernetes.io/path")
		if len(ann) == 0 {
			delete(meta, "annotations")
		}
		require.Equal(t, w, got.Items[i])
	}
	require.Contains(t, out.String(), "managedBy: kueue.x-k8s.io/multikueue")
}
