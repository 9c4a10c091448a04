package secrets_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
)

func TestName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"GITHUB_PAT", true}, {"WANDB_KEY", true}, {"NGC_KEY", true}, {"DB_PASS", true},
		{"HF_AUTH", true}, {"SSH_KEY", true}, {"HF_TOKEN", true}, {"WANDB_API_KEY", true},
		{"AWS_SECRET_ACCESS_KEY", true}, {"DB_PASSWORD", true}, {"GCP_CREDENTIALS", true},
		{"hf-token", true}, {"api-key", true}, {"apiKey", true}, {"HFTOKEN", true},
		// Not credentials: words that contain a credential word.
		{"PATH", false}, {"PYTHONPATH", false}, {"PASSTHROUGH", false}, {"TOKENIZERS_PARALLELISM", false},
		{"HF_HOME", false}, {"KEY_PATH", false}, {"NCCL_IB_HCA", false}, {"AUTHOR", false},
		{"app.kubernetes.io/managed-by", false}, {"kai.scheduler/queue", false}, {"MAX_TOKENS", false},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, secrets.Name(tc.name)) })
	}
}

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"aws", "AKIAABCDEFGHIJKLMNOP", true},
		{"github classic", "ghp_abcdefghijklmnopqrstuvwxyz0123", true},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghij", true},
		{"hugging face", "hf_abcdefghijklmnopqrstuvwxyz0123", true},
		{"nvidia", "nvapi-abcdefghijklmnopqrstuvwxyz012345", true},
		{"url with password", "postgres://admin:hunter2@db:5432/x", true},
		{"pem", "-----BEGIN OPENSSH PRIVATE KEY-----\nabc", true},
		{"url without password", "https://huggingface.co/Qwen/Qwen3", false},
		{"url with user only", "ssh://git@github.com/x", false},
		{"url password from a variable", "postgres://admin:${DB_PASS}@db/x", false},
		{"image", "nvcr.io/nvidia/nemo-rl:v0.4.0", false},
		{"short hf_ word", "hf_home", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := secrets.Value(tc.value)
			require.Equal(t, tc.want, got)
		})
	}
}

// Every kind of finding, and no message ever repeats the value.
func TestScan(t *testing.T) {
	const marker = "hunter2SECRETMARKER"
	for _, tc := range []struct {
		name string
		doc  string
		want string // a substring of the one finding's path
	}{
		{"env literal", "env: [{name: DB_PASS, value: " + marker + "}]", "env[0].value (DB_PASS)"},
		{"env url", "env: [{name: DATABASE_URL, value: 'postgres://admin:" + marker + "@db/x'}]", "env[0].value"},
		{"export in entrypoint", "spec: {entrypoint: \"set -e\\nexport HF_TOKEN=" + marker + "\\npython x.py\"}", "spec.entrypoint"},
		{"label", "metadata: {labels: {db-password: " + marker + "}}", "metadata.labels.db-password"},
		{"annotation", "spec: {template: {metadata: {annotations: {github-pat: " + marker + "}}}}", "metadata.annotations.github-pat"},
		{"token under any name", "data: {note: ghp_" + marker + "abcdefghijkl}", "data.note"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := secrets.ScanYAML([]byte(tc.doc))
			require.NoError(t, err)
			require.Len(t, fs, 1, "%v", fs)
			require.Contains(t, fs[0].Path, tc.want)
			require.NotContains(t, fs[0].String(), marker)
		})
	}
	for name, doc := range map[string]string{
		"secretKeyRef":       "env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: s, key: k}}}]",
		"env reference":      "env: [{name: HF_TOKEN, value: $(HF_TOKEN_FROM_SECRET)}]",
		"export a reference": "entrypoint: \"export HF_TOKEN=${HF_TOKEN}\\nexport WANDB_API_KEY=\\\"$WANDB_API_KEY\\\"\"",
		"harmless env":       "env: [{name: HF_HOME, value: /mnt/hf}, {name: TOKENIZERS_PARALLELISM, value: 'false'}]",
	} {
		fs, err := secrets.ScanYAML([]byte(doc))
		require.NoError(t, err, name)
		require.Empty(t, fs, name)
	}
	_, err := secrets.ScanYAML([]byte("a: [\n"))
	require.Error(t, err, "a stream that does not parse is not silently clean")
	require.False(t, strings.Contains(err.Error(), "SECRET"))
}
