package krm_test

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krmframework"
)

// FuzzResourceList feeds raw bytes to the function exactly as `nrl-k8s fn`
// reads stdin (krm.Execute: kyaml's ResourceList reader, Process's body,
// the splicing writer). No input may panic; a failure must leave an error,
// and a success must write a ResourceList that reads back and means the
// same as framework.Execute with Processor (rendered documents decoded and
// encoded again by kyaml).
func FuzzResourceList(f *testing.F) {
	f.Add(resourceList(f, node(f, qwenRun), qwenFiles(f)))
	f.Add(resourceList(f, node(f, ultra64Run), ultraFiles(f, "ultra_64n_pipeclean.gb300.infra.yaml")))
	f.Add(resourceList(f, nil, append(qwenFiles(f), node(f, qwenRun))))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"))
	f.Add([]byte("kind: ResourceList\nitems: [{kind: ConfigMap}]\nfunctionConfig: {kind: NemoRLRun}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: &out, KeepReaderAnnotations: true}
		err := krm.Execute(rw)
		var ref bytes.Buffer
		refErr := framework.Execute(krmframework.Processor{}, &kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: &ref, KeepReaderAnnotations: true})
		if (err == nil) != (refErr == nil) {
			t.Fatalf("Execute: %v; framework.Execute: %v", err, refErr)
		}
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error")
			}
			return
		}
		if _, err := (&kio.ByteReader{Reader: bytes.NewReader(out.Bytes())}).Read(); err != nil {
			t.Fatalf("the function wrote a ResourceList that does not read back: %v\n%s", err, out.Bytes())
		}
		var got, want any
		if err := sigsyaml.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("output does not decode: %v", err)
		}
		if err := sigsyaml.Unmarshal(ref.Bytes(), &want); err != nil {
			t.Fatalf("reference output does not decode: %v", err)
		}
		gb, _ := sigsyaml.Marshal(got)
		wb, _ := sigsyaml.Marshal(want)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("Execute and framework.Execute disagree:\n%s\n---\n%s", gb, wb)
		}
	})
}
