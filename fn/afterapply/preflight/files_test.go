package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// Rendered files and stdin are read within a rendered run's size, their
// objects in file order; a file or stream with no object, one over the
// size, or one with an object that does not decode as its kind is an error
// naming it.
func TestReadRendered(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
		return p
	}
	a := write("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
	b := write("b.yaml", "apiVersion: v1\nkind: Secret\nmetadata: {name: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	empty := write("empty.yaml", "# nothing\n")
	const claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: roce, namespace: team}\n" +
		"spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: roce.example.com, count: eight}}]}}}\n"
	badClaim := write("claim.yaml", claim)
	badJob := write("job.yaml", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j, namespace: team}\n"+
		"spec: {rayClusterSpec: {headGroupSpec: {template: {spec: {containers: nope}}}}}\n")
	for _, tc := range []struct {
		name  string
		stdin string
		files []string
		kinds []string
		err   string
	}{
		{name: "files in order", files: []string{a, b}, kinds: []string{"ConfigMap/a", "Secret/b", "ConfigMap/c"}},
		{name: "stdin", stdin: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n", files: []string{"-"}, kinds: []string{"ConfigMap/s"}},
		{name: "no object", files: []string{empty}, err: empty + ": no Kubernetes object found; expected rendered manifests"},
		{name: "stdin over the size", stdin: strings.Repeat("#", source.MaxRenderSize+1), files: []string{"-"}, err: "stdin: over the"},
		{name: "a missing file", files: []string{filepath.Join(dir, "none.yaml")}, err: "none.yaml: cannot read"},
		{name: "a claim's count of the wrong type", files: []string{a, badClaim},
			err: badClaim + ": ResourceClaimTemplate team/roce: json: cannot unmarshal string into Go struct field ExactDeviceRequest.spec.spec.devices.requests.exactly.count of type int64"},
		{name: "a job's containers of the wrong type", files: []string{badJob}, err: badJob + ": RayJob/j: does not decode as RayJob: "},
		{name: "the wrong shape on stdin", stdin: claim, files: []string{"-"}, err: "stdin: ResourceClaimTemplate team/roce: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, err := ReadRendered(strings.NewReader(tc.stdin), tc.files)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			var kinds []string
			for _, d := range docs {
				kinds = append(kinds, d.Kind+"/"+d.Name)
			}
			assert.Equal(t, tc.kinds, kinds)
		})
	}
}
