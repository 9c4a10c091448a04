package schema_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	yaml "go.yaml.in/yaml/v3"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// tokenShapes are the shapes of real credentials: Hugging Face, GitHub,
// OpenAI-style API keys, AWS access key ids, PEM private keys.
var tokenShapes = regexp.MustCompile(`\bhf_[A-Za-z0-9]{20,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bsk-[A-Za-z0-9_-]{20,}|\bAKIA[0-9A-Z]{16}\b|-----BEGIN [A-Z ]*PRIVATE KEY-----`)

// scan returns every secret-looking value in a YAML stream: a token shape
// anywhere, or an env entry with a credential-looking name and a literal
// value (it must come from a secretKeyRef instead).
func scan(data []byte) []string {
	var found []string
	for _, m := range tokenShapes.FindAllString(string(data), -1) {
		found = append(found, "token-shaped string "+m[:min(len(m), 12)]+"…")
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var doc any
		if err := dec.Decode(&doc); err != nil {
			break
		}
		walkEnv(doc, func(name, value string) {
			if check.LooksSecret(name) && value != "" {
				found = append(found, "literal value for "+name)
			}
		})
	}
	return found
}

func walkEnv(v any, fn func(name, value string)) {
	switch t := v.(type) {
	case map[string]any:
		if name, ok := t["name"].(string); ok {
			if value, ok := t["value"].(string); ok {
				fn(name, value)
			}
		}
		for _, c := range t {
			walkEnv(c, fn)
		}
	case []any:
		for _, c := range t {
			walkEnv(c, fn)
		}
	}
}

// Rendered output never carries a secret: every golden output, the KRM
// function's goldens and the committed examples/ tree.
func TestNoSecretsInOutputs(t *testing.T) {
	root := testenv.RepoRoot(t)
	var files []string
	for _, dir := range []string{"tests/golden", "fn/krm/testdata", "examples"} {
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
		require.Empty(t, scan(data), rel)
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
		require.NotEmpty(t, scan([]byte(doc)), name)
	}
	require.Empty(t, scan([]byte("env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: s, key: k}}}, {name: HF_HOME, value: /x}]")))
}
