package secrets_test

import (
	"reflect"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
)

// Any bytes: the scanner never panics, is deterministic, and every finding
// says where and what (its message is built from fixed text, names and
// paths, never from the value it found).
func FuzzScanYAML(f *testing.F) {
	f.Add([]byte("env: [{name: DB_PASS, value: hunter2}]"))
	f.Add([]byte("spec: {entrypoint: \"export HF_TOKEN=abc\\n\"}"))
	f.Add([]byte("metadata: {labels: {db-password: x}, annotations: {a: 'postgres://u:p@h/x'}}"))
	f.Add([]byte("a: AKIAABCDEFGHIJKLMNOP\n---\nb: [ghp_abcdefghijklmnopqrstuvwxyz0123]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, errA := secrets.ScanYAML(data)
		b, errB := secrets.ScanYAML(data)
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
			t.Fatal("two scans of the same input differ")
		}
		for _, f := range a {
			if f.What == "" {
				t.Fatalf("finding without a message: %+v", f)
			}
		}
	})
}
