package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The privilege changes a hostile pull request could try, each one line of a profile or run:
// render-all --check (against the base branch's manifests) names each one
// and fails when the run's Pod Security level rises or its namespace
// changes, unless the repository's review-allow.yaml permits it; diff
// names each one too.
func TestReviewNamesPrivilegeChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		profile func(string) string
		run     string
		want    []string
		gate    string // the refusal, "" when the change alone passes --check
		allow   string
	}{
		{name: "privileged worker",
			profile: func(p string) string {
				return strings.Replace(p, "                - name: ray-worker\n", "                - name: ray-worker\n                  securityContext: {privileged: true}\n", 1)
			},
			want:  []string{"privileged: (none) → ray-worker"},
			gate:  "Pod Security level rises from",
			allow: "runs:\n  good:\n    podSecurity: privileged\n"},
		{name: "host network and PID",
			profile: func(p string) string {
				return strings.Replace(p, "              tolerations:", "              hostNetwork: true\n              hostPID: true\n              tolerations:", 1)
			},
			want:  []string{"hostNetwork: (none) → true", "hostPID: (none) → true"},
			gate:  "Pod Security level rises from",
			allow: "runs:\n  good:\n    podSecurity: privileged\n"},
		{name: "hostPath mount",
			profile: func(p string) string {
				return strings.Replace(p, "              tolerations:", "              volumes: [{name: h, hostPath: {path: /etc}}]\n              tolerations:", 1)
			},
			want:  []string{"hostPath: (none) → /etc"},
			gate:  "Pod Security level rises from",
			allow: "runs:\n  good:\n    podSecurity: privileged\n"},
		{name: "another team's secret and a service account",
			profile: func(p string) string {
				return strings.Replace(p, "              tolerations:", "              serviceAccountName: admin\n              volumes: [{name: s, secret: {secretName: other-team-creds}}]\n              tolerations:", 1)
			},
			want: []string{"serviceAccount: (none) → admin", "secrets: (none) → other-team-creds"}},
		{name: "move to kube-system",
			run:   "  namespace: kube-system\n",
			want:  []string{"namespaces default → kube-system (MOVES)"},
			gate:  "the run's namespaces change from [default] to [kube-system]",
			allow: "runs:\n  good:\n    namespaces: [kube-system]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			require.Equal(t, 0, w.run("render-all", ".").code)
			base, err := os.ReadFile(filepath.Join(w.repo, "manifests", "good.yaml"))
			require.NoError(t, err)
			w.file("base/manifests/good.yaml", string(base))
			if tc.profile != nil {
				w.file("configs/p.infra.yaml", tc.profile(profileYAML))
			}
			if tc.run != "" {
				w.file("runs/good/run.yaml", runYAML("good", tc.run))
			}
			r := w.run("render-all", ".")
			require.Equal(t, 0, r.code, r.stderr)

			r = w.run("render-all", ".", "--check", "--base", "base")
			clean(t, r)
			noCommandLines(t, "stderr", r.stderr)
			require.Contains(t, r.stderr, "good: security and scope:")
			for _, want := range tc.want {
				require.Contains(t, r.stderr, want)
			}
			if tc.gate == "" {
				require.Equal(t, 0, r.code, r.stderr)
			} else {
				require.Equal(t, 1, r.code, r.stderr)
				require.Contains(t, r.stderr, tc.gate)
				w.file("review-allow.yaml", "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: ReviewAllow\n"+tc.allow)
				r = w.run("render-all", ".", "--check", "--base", "base")
				require.Equal(t, 0, r.code, "the allow-list permits it\n%s", r.stderr)
			}

			for _, format := range []string{"text", "markdown"} {
				r = w.run("diff", "base/manifests", "manifests", "--output", format)
				require.Equal(t, 0, r.code, r.stderr)
				noCommandLines(t, format, r.stdout)
				for _, want := range tc.want {
					field := strings.Fields(want)[0]
					require.Contains(t, r.stdout, strings.TrimSuffix(field, ":"), format)
				}
			}
		})
	}
}
