package schema_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// scan is the render-time scanner (fn/analyse/secrets): the committed outputs are
// held to the same rule every render is.
func scan(t *testing.T, data []byte) []string {
	t.Helper()
	fs, err := secrets.ScanYAML(data)
	require.NoError(t, err)
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// Rendered output never carries a secret: every golden output, the KRM
// function's goldens and the committed examples/ tree.
func TestNoSecretsInOutputs(t *testing.T) {
	root := testenv.RepoRoot(t)
	var files []string
	for _, dir := range []string{"tests/golden", "fn/frontend/krm/testdata", "examples"} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
	}
	require.GreaterOrEqual(t, len(files), 10)
	refs := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, f)
		require.Empty(t, scan(t, data), rel)
		refs += strings.Count(string(data), "secretKeyRef:") + strings.Count(string(data), "secretRef:")
	}
	require.NotZero(t, refs, "the outputs reference secrets by secretKeyRef/secretRef")
}

// The scanner itself finds what it is meant to find.
func TestSecretScannerCatchesPlantedSecrets(t *testing.T) {
	for name, doc := range map[string]string{
		"hf token":     "env: [{name: X, value: hf_abcdefghijklmnopqrstuvwxyz}]",
		"github token": "a: ghp_abcdefghijklmnopqrstuvwxyz0123",
		"api key":      "a: sk-abcdefghijklmnopqrstuvwx",
		"aws key":      "a: AKIAABCDEFGHIJKLMNOP",
		"pem":          "a: |\n  -----BEGIN RSA PRIVATE KEY-----\n",
		"env literal":  "env: [{name: WANDB_API_KEY, value: abc}]",
		"password":     "env: [{name: DB_PASSWORD, value: hunter2}]",
	} {
		require.NotEmpty(t, scan(t, []byte(doc)), name)
	}
	require.Empty(t, scan(t, []byte("env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: s, key: k}}}, {name: HF_HOME, value: /x}]")))
}
