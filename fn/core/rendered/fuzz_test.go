package rendered

import "testing"

// Decode reads rendered streams from users (preflight -f): no input panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: List\nitems: [1, {kind: A, metadata: {name: b}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Decode("f.yaml", data) // never panics
	})
}
