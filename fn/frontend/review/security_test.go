package review_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// docs splits a render into decoded documents.
func docs(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	rd := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, yaml.Unmarshal(doc, &m))
		if m != nil {
			out = append(out, m)
		}
	}
}

func encode(t *testing.T, ds []map[string]any) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, d := range ds {
		y, err := yaml.Marshal(d)
		require.NoError(t, err)
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes()
}

// at walks a decoded document by keys and list indices.
func at(v any, path ...any) map[string]any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v.(map[string]any)
}

func byKind(ds []map[string]any, kind string) map[string]any {
	for _, d := range ds {
		if d["kind"] == kind {
			return d
		}
	}
	return nil
}

func workerPod(ds []map[string]any) map[string]any {
	return at(byKind(ds, "RayCluster"), "spec", "workerGroupSpecs", 0, "template", "spec")
}

func workerContainer(ds []map[string]any) map[string]any {
	return at(workerPod(ds), "containers", 0)
}

// Each one-line privilege or scope change of the issue appears by name in
// the review summary, text and markdown, not as `~ RayCluster/...`.
func TestEveryPrivilegeChangeIsNamed(t *testing.T) {
	// The 64-node run with the shared services it reaches (the ns-tools
	// Deployment and Service, rendered by ultra-tools).
	manifests := filepath.Join(testenv.RepoRoot(t), "examples", "runs-repo", "manifests")
	base := []byte(testenv.ReadFile(t, filepath.Join(manifests, "ultra-64n.yaml")) + testenv.ReadFile(t, filepath.Join(manifests, "ultra-tools.yaml")))
	for _, tc := range []struct {
		name string
		edit func(ds []map[string]any) []map[string]any
		want []string
	}{
		{"privileged", func(ds []map[string]any) []map[string]any {
			workerContainer(ds)["securityContext"] = map[string]any{"privileged": true}
			return ds
		}, []string{"privileged: (none) → ray-worker"}},
		{"capability", func(ds []map[string]any) []map[string]any {
			workerContainer(ds)["securityContext"] = map[string]any{"capabilities": map[string]any{"add": []any{"SYS_ADMIN"}}}
			return ds
		}, []string{"capabilities: (none) → add SYS_ADMIN"}},
		{"hostPath", func(ds []map[string]any) []map[string]any {
			p := workerPod(ds)
			p["volumes"] = append(p["volumes"].([]any), map[string]any{"name": "host", "hostPath": map[string]any{"path": "/var/run/docker.sock"}})
			return ds
		}, []string{"hostPath: (none) → /var/run/docker.sock", "volume types:"}},
		{"host network", func(ds []map[string]any) []map[string]any {
			workerPod(ds)["hostNetwork"] = true
			return ds
		}, []string{"hostNetwork: (none) → true"}},
		{"host PID", func(ds []map[string]any) []map[string]any {
			workerPod(ds)["hostPID"] = true
			return ds
		}, []string{"hostPID: (none) → true"}},
		{"host port", func(ds []map[string]any) []map[string]any {
			workerContainer(ds)["ports"] = []any{map[string]any{"containerPort": 22, "hostPort": 22}}
			return ds
		}, []string{"hostPorts: (none) → ray-worker:22"}},
		{"UID 0", func(ds []map[string]any) []map[string]any {
			workerPod(ds)["securityContext"] = map[string]any{"runAsUser": 0}
			return ds
		}, []string{"runAsUser: (none) → pod=0"}},
		{"seccomp unconfined", func(ds []map[string]any) []map[string]any {
			workerPod(ds)["securityContext"] = map[string]any{"seccompProfile": map[string]any{"type": "Unconfined"}}
			return ds
		}, []string{"seccomp: (none) → pod=Unconfined"}},
		{"service account", func(ds []map[string]any) []map[string]any {
			workerPod(ds)["serviceAccountName"] = "cluster-admin-sa"
			return ds
		}, []string{"serviceAccount: (none) → cluster-admin-sa"}},
		{"another team's secret", func(ds []map[string]any) []map[string]any {
			c := workerContainer(ds)
			c["envFrom"] = []any{map[string]any{"secretRef": map[string]any{"name": "other-team-creds"}}}
			return ds
		}, []string{"other-team-creds"}},
		{"control-plane toleration", func(ds []map[string]any) []map[string]any {
			workerPod(ds)["tolerations"] = []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}}
			return ds
		}, []string{"tolerations:", "node-role.kubernetes.io/control-plane Exists :NoSchedule"}},
		{"node placement", func(ds []map[string]any) []map[string]any {
			workerPod(ds)["nodeName"] = "control-plane-0"
			return ds
		}, []string{"nodeName: (none) → control-plane-0"}},
		{"a Deployment", func(ds []map[string]any) []map[string]any {
			d := byKind(ds, "Deployment")
			y, _ := yaml.Marshal(d)
			var c map[string]any
			_ = yaml.Unmarshal(y, &c)
			at(c, "metadata")["name"] = "miner"
			return append(ds, c)
		}, []string{"+ Deployment ×1", "Deployment/rl-team/miner"}},
		{"LoadBalancer head service", func(ds []map[string]any) []map[string]any {
			at(byKind(ds, "Service"), "spec")["type"] = "LoadBalancer"
			return ds
		}, []string{" type: ClusterIP → LoadBalancer"}},
		{"move to kube-system", func(ds []map[string]any) []map[string]any {
			for _, d := range ds {
				at(d, "metadata")["namespace"] = "kube-system"
			}
			return ds
		}, []string{"namespaces rl-team → kube-system (MOVES)", "- RayCluster/rl-team/ultra-64n-training", "+ RayCluster/kube-system/ultra-64n-training"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, err := review.Parse("r", "old.yaml", base)
			require.NoError(t, err)
			cur, err := review.Parse("r", "new.yaml", encode(t, tc.edit(docs(t, base))))
			require.NoError(t, err)
			s := review.Diff(review.Render{"r": old}, review.Render{"r": cur})
			require.Len(t, s.Runs, 1)
			text, md := s.Text(), s.Markdown()
			for _, w := range tc.want {
				require.Contains(t, text, w, "text:\n%s", text)
			}
			field := strings.Fields(strings.TrimPrefix(tc.want[0], "+ "))[0]
			require.Contains(t, md, strings.TrimSuffix(field, ":"), "markdown:\n%s", md)
		})
	}
}

// The Pod Security level is the upstream library's, per run: a privileged
// worker makes the run need the privileged level, and the diff says so.
func TestPodSecurityLevelRises(t *testing.T) {
	base := []byte(testenv.ReadFile(t, filepath.Join(testenv.RepoRoot(t), "examples", "runs-repo", "manifests", "qwen3-math-4n.yaml")))
	old, err := review.Parse("r", "old.yaml", base)
	require.NoError(t, err)
	ds := docs(t, base)
	job := byKind(ds, "RayJob")
	c := at(job, "spec", "rayClusterSpec", "workerGroupSpecs", 0, "template", "spec", "containers", 0)
	c["securityContext"] = map[string]any{"privileged": true}
	cur, err := review.Parse("r", "new.yaml", encode(t, ds))
	require.NoError(t, err)
	require.Equal(t, "privileged", cur.PodSecurity)
	d := review.Diff(review.Render{"r": old}, review.Render{"r": cur}).Runs[0]
	if old.PodSecurity != "privileged" {
		require.True(t, d.LevelRose(), "%s → %s", old.PodSecurity, cur.PodSecurity)
	}
}
