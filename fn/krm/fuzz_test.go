package krm_test

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/krm"
)

// FuzzResourceList feeds raw bytes to the function exactly as `nrl-k8s fn`
// reads stdin (kyaml's ResourceList reader, then Process, then the
// writer). No input may panic; a failure must leave an error result, and a
// success must write a ResourceList that reads back.
func FuzzResourceList(f *testing.F) {
	f.Add(resourceList(f, node(f, qwenRun), qwenFiles(f)))
	f.Add(resourceList(f, node(f, ultra64Run), ultraFiles(f, "ultra_64n_pipeclean.gb300.infra.yaml")))
	f.Add(resourceList(f, nil, append(qwenFiles(f), node(f, qwenRun))))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"))
	f.Add([]byte("kind: ResourceList\nitems: [{kind: ConfigMap}]\nfunctionConfig: {kind: NemoRLRun}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: &out, KeepReaderAnnotations: true}
		err := framework.Execute(krm.Processor{}, rw)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error")
			}
			return
		}
		if _, err := (&kio.ByteReader{Reader: bytes.NewReader(out.Bytes())}).Read(); err != nil {
			t.Fatalf("the function wrote a ResourceList that does not read back: %v\n%s", err, out.Bytes())
		}
	})
}
