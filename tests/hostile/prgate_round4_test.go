package hostile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const clusterAdmin = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: pwn}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{kind: ServiceAccount, name: default, namespace: default}]
`

// `kubectl apply -f manifests/` applies every .yaml, .yml and .json file
// there: a pull request that adds one beside the renders gets it applied
// without any run's review covering it. render-all --check refuses every
// such file no run renders, except the kustomization it maintains (or a
// user's kustomization.yaml that holds nothing kubectl can apply).
func TestCheckRefusesStrayManifests(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		refused             bool
		flags               []string
	}{
		{name: "yml", file: "pwn.yml", content: clusterAdmin, refused: true},
		{name: "json", file: "pwn.json", content: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"pwn"}}`, refused: true},
		{name: "upper-case yaml", file: "pwn.YAML", content: clusterAdmin, refused: true},
		{name: "yaml of no run, without render-all's label", file: "notes.yaml", content: clusterAdmin, refused: true},
		{name: "kustomization.yaml with a second document", file: "kustomization.yaml", content: "resources: [good.yaml]\n---\n" + clusterAdmin, refused: true},
		{name: "kustomization.yml", file: "kustomization.yml", content: "resources: [good.yaml]\n", refused: true},
		{name: "a user's kustomization.yaml", file: "kustomization.yaml", content: "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [good.yaml]\n"},
		{name: "a README", file: "README.md", content: "kind: ClusterRoleBinding\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			require.Equal(t, 0, w.run("render-all", ".").code)
			w.git("add", "-A")
			w.git("commit", "-qm", "base")
			w.git("branch", "-M", "main")
			w.git("checkout", "-qb", "pr")
			w.file(filepath.Join("manifests", tc.file), tc.content)
			w.git("add", "-A")
			w.git("commit", "-qm", "pr")

			r := w.run(append([]string{"render-all", ".", "--check", "--base-ref", "main"}, tc.flags...)...)
			clean(t, r)
			if !tc.refused {
				require.Equal(t, 0, r.code, r.stderr)
				require.NotContains(t, r.stderr, tc.file)
				return
			}
			require.Equal(t, 1, r.code, r.stderr)
			require.Contains(t, r.stderr, "manifests/"+tc.file+": ")
			require.Contains(t, r.stderr, "refused: `kubectl apply -f manifests/` applies every .json, .yaml, .yml file there")

			// render-all itself leaves it alone and says so.
			r = w.run("render-all", ".")
			require.Equal(t, 0, r.code, r.stderr)
			require.Contains(t, r.stderr, "manifests/"+tc.file+": ")
			require.Contains(t, r.stderr, "left alone (render-all --check refuses it)")
			_, err := os.Stat(filepath.Join(w.repo, "manifests", tc.file))
			require.NoError(t, err)
		})
	}

	// The kustomization render-all maintains is no stray.
	w := newWorld(t)
	require.Equal(t, 0, w.run("render-all", ".", "--kustomization").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "base")
	r := w.run("render-all", ".", "--check", "--kustomization")
	require.Equal(t, 0, r.code, r.stderr)
}
