package emit

import (
	"encoding/json"
	"testing"
)

// FuzzMarshal: any JSON object, decoded as ToDoc decodes, must encode to
// sigs.k8s.io/yaml.Marshal's bytes (or fail where it fails).
func FuzzMarshal(f *testing.F) {
	f.Add(`{"a":1,"b":[true,null,"x"],"c":{"d":1e21}}`)
	f.Add(`{"s":"yes","t":"1:20","u":"multi\nline","v":-0,"w":12345678901234567890}`)
	f.Fuzz(func(t *testing.T, js string) {
		var data map[string]any
		if json.Unmarshal([]byte(js), &data) != nil || data == nil {
			return
		}
		sameAsSigsYAML(t, data)
	})
}
