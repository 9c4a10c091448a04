package krm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krmframework"
)

// Execute writes the rendered documents as text; framework.Execute with
// Processor decodes them and has kyaml encode them again. On every golden
// input the two must write the same bytes, errors included: the splice is
// an optimisation, not a second format.
func TestExecuteMatchesFrameworkExecute(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*/input.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		require.NoError(t, err)
		for _, keep := range []bool{true, false} {
			t.Run(filepath.Base(filepath.Dir(in)), func(t *testing.T) {
				var got, want bytes.Buffer
				err := krm.Execute(&kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: &got, KeepReaderAnnotations: keep})
				refErr := framework.Execute(krmframework.Processor{}, &kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: &want, KeepReaderAnnotations: keep})
				require.Equal(t, refErr == nil, err == nil, "Execute: %v; framework.Execute: %v", err, refErr)
				require.Equal(t, want.String(), got.String())
			})
		}
	}
}

// Standalone mode (kyaml's NoWrap, no reader annotations): bare documents,
// pass-through items first, documents separated as yaml encoders do.
func TestExecuteUnwrapped(t *testing.T) {
	data, err := os.ReadFile("testdata/pass-through/input.yaml")
	require.NoError(t, err)
	var got, want bytes.Buffer
	rw := func(w *bytes.Buffer) *kio.ByteReadWriter {
		return &kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: w, NoWrap: true}
	}
	require.NoError(t, krm.Execute(rw(&got)))
	require.NoError(t, framework.Execute(krmframework.Processor{}, rw(&want)))
	require.Equal(t, want.String(), got.String())
	require.NotContains(t, got.String(), "kind: ResourceList")
	require.Greater(t, strings.Count(got.String(), "\n---\n"), 1)
	require.NotContains(t, got.String(), "nrl-k8s-rendered-documents")
}

func TestExecuteRejectsFlowStyle(t *testing.T) {
	var out bytes.Buffer
	err := krm.Execute(&kio.ByteReadWriter{Reader: strings.NewReader("kind: ResourceList\nitems: []\n"), Writer: &out, Style: 1})
	require.ErrorContains(t, err, "Style must be 0")
	require.Empty(t, out.String())
}
