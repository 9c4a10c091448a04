package review

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// rayCluster is a RayCluster "c" whose head asks for GPUs or not, with
// workers as the workerGroupSpecs YAML.
func rayCluster(headGPUs bool, workers string) string {
	head := "limits: {cpu: 1}"
	if headGPUs {
		head = "limits: {nvidia.com/gpu: 4}"
	}
	return `apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: c}
spec:
  headGroupSpec:
    template:
      spec:
        containers:
        - {name: h, image: img:h, resources: {` + head + `}}
  workerGroupSpecs:` + workers + "\n"
}

// gpuWorker is one worker group g of replicas pods with gpus each.
func gpuWorker(replicas, gpus int) string {
	return fmt.Sprintf(`
  - groupName: g
    replicas: %d
    template:
      spec:
        containers:
        - {name: w, image: img:w, resources: {limits: {nvidia.com/gpu: %d}}}`, replicas, gpus)
}

// Pods are counted as KubeRay starts them (replicas clamped, times hosts,
// none when suspended), GPUs per container by limit else request; the
// ceiling is the autoscaler's.
func TestParseCounting(t *testing.T) {
	const worker = `
  - groupName: %s
    replicas: %s
    numOfHosts: %s
    %s
    template:
      spec:
        containers:
        - name: w
          image: img:w
          resources: {%s}`
	w := func(args ...any) string { return fmt.Sprintf(worker, args...) }
	autoscaling := func(doc string) string {
		return strings.Replace(doc, "spec:\n  headGroupSpec:", "spec:\n  enableInTreeAutoscaling: true\n  headGroupSpec:", 1)
	}
	cases := []struct {
		name    string
		doc     string
		nodes   int64
		gpus    int64
		ceiling *Totals // nil: equal to nodes and gpus
	}{
		{"replicas below minReplicas start minReplicas", rayCluster(false, w("g", "4", "1", "minReplicas: 16\n    maxReplicas: 16", "limits: {nvidia.com/gpu: 8}")), 16, 128, nil},
		{"replicas above maxReplicas start maxReplicas", rayCluster(false, w("g", "2147483647", "1", "maxReplicas: 4", "limits: {nvidia.com/gpu: 8}")), 4, 32, nil},
		{"autoscaling reports its ceiling", autoscaling(rayCluster(false, w("g", "2", "1", "maxReplicas: 6", "limits: {nvidia.com/gpu: 8}"))), 2, 16, &Totals{Nodes: 6, GPUs: 48}},
		{"a second GPU container counts", rayCluster(false, strings.Replace(w("g", "2", "1", "", "limits: {nvidia.com/gpu: 4}"), "        - name: w\n", "        - {name: s, image: img:s, resources: {limits: {nvidia.com/gpu: 2}}}\n        - name: w\n", 1)), 2, 12, nil},
		{"replicas times hosts", rayCluster(false, w("g", "3", "2", "", "limits: {nvidia.com/gpu: 4}")), 6, 24, nil},
		{"requests when no limit", rayCluster(false, w("g", "2", "1", "", "requests: {nvidia.com/gpu: 8}")), 2, 16, nil},
		{"suspended group", rayCluster(false, w("g", "2", "1", "suspend: true", "limits: {nvidia.com/gpu: 4}")), 0, 0, nil},
		{"cpu workers are no GPU nodes", rayCluster(false, w("g", "5", "1", "", "limits: {cpu: 4}")), 0, 0, nil},
		{"head with GPUs counts", rayCluster(true, w("g", "1", "1", "", "limits: {nvidia.com/gpu: 4}")), 2, 8, nil},
		{"deployment with GPUs", `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: c, image: img:d, resources: {limits: {nvidia.com/gpu: 1}}}
`, 2, 2, nil},
		{"deployment without replicas runs the API server's one", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c, image: img:d, resources: {limits: {nvidia.com/gpu: 2}}}]}}}\n", 1, 2, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse("r", "r.yaml", []byte(tc.doc))
			require.NoError(t, err)
			want := Totals{Nodes: tc.nodes, GPUs: tc.gpus}
			assert.Equal(t, want, r.Totals())
			if tc.ceiling != nil {
				want = *tc.ceiling
			}
			assert.Equal(t, want, r.Ceiling())
		})
	}
}

// What Parse records beside the counts: objects keyed by kind, namespace
// and name, namespaces and images sorted and unique, entrypoints, when a
// Ray object's pods come, and the Pod Security level only with pods.
func TestParseFacts(t *testing.T) {
	job := func(labels, spec string) string {
		return "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j, namespace: lab, labels: {" + labels + "}}\nspec:\n  entrypoint: python x.py\n" + spec
	}
	const cluster = "  rayClusterSpec:\n    headGroupSpec: {template: {spec: {containers: [{name: h, image: img:h}]}}}\n"
	cases := []struct {
		name string
		doc  string
		want func(t *testing.T, r *RunFacts)
	}{
		{"comment-only and empty documents are skipped", "# Source: x\n---\n---\nkind: A\nmetadata: {name: a}\n", func(t *testing.T, r *RunFacts) {
			assert.Equal(t, []string{"A/a"}, tree.SortedKeys(r.Objects))
			assert.Empty(t, r.PodSecurity, "no pods, no level")
		}},
		{"namespaced refs and namespaces", "kind: A\nmetadata: {name: a, namespace: z}\n---\nkind: A\nmetadata: {name: a, namespace: b}\n---\nkind: A\nmetadata: {name: a}\n", func(t *testing.T, r *RunFacts) {
			assert.Equal(t, []string{"A/a", "A/b/a", "A/z/a"}, tree.SortedKeys(r.Objects))
			assert.Equal(t, []string{"b", "z"}, r.Namespaces)
		}},
		{"images sorted and unique", rayCluster(false, gpuWorker(1, 1)+strings.Replace(gpuWorker(1, 1), "groupName: g", "groupName: h", 1)), func(t *testing.T, r *RunFacts) {
			assert.Equal(t, []string{"img:h", "img:w"}, r.Images)
			assert.Equal(t, "baseline", r.PodSecurity, "pods, a level")
		}},
		{"a job on a listed cluster has an entrypoint and no pods", job("", "  clusterSelector: {ray.io/cluster: c}\n"), func(t *testing.T, r *RunFacts) {
			assert.Equal(t, map[string]string{"RayJob/lab/j": "python x.py"}, r.Entrypoints)
			assert.Empty(t, r.Pods)
		}},
		{"suspended", job("", "  suspend: true\n"+cluster), func(t *testing.T, r *RunFacts) {
			assert.Equal(t, "suspended: KubeRay creates its pods once spec.suspend is set to false", r.Scheduling["RayJob/lab/j admission"])
		}},
		{"queued in Kueue, whether suspended or not", job("kueue.x-k8s.io/queue-name: q", "  suspend: true\n"+cluster), func(t *testing.T, r *RunFacts) {
			assert.Equal(t, "queued: Kueue's LocalQueue q admits it, then KubeRay creates its pods", r.Scheduling["RayJob/lab/j admission"])
		}},
		{"running at once", job("", cluster), func(t *testing.T, r *RunFacts) {
			assert.NotContains(t, r.Scheduling, "RayJob/lab/j admission")
		}},
		{"an integer float64 cannot hold is read from the YAML", rayCluster(false, strings.Replace(gpuWorker(1, 1), "      spec:\n", "      spec:\n        securityContext: {runAsUser: 9007199254740993}\n", 1)), func(t *testing.T, r *RunFacts) {
			assert.Equal(t, "pod=9007199254740993", r.Security["RayCluster/c workers runAsUser"], "%v", r.Security)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse("r", "r.yaml", []byte(tc.doc))
			require.NoError(t, err)
			tc.want(t, r)
		})
	}
}

// Every error names the file, the document (1-based, empty ones not
// counted) and, once known, the object, and what was expected.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"not yaml", "kind: [a\n", "bad.yaml: document 1"},
		{"not an object", "- a\n- b\n", "bad.yaml: document 1"},
		{"no kind", "metadata: {name: x}\n", "bad.yaml: document 1: kind and metadata.name are required"},
		{"no name", "---\nkind: ConfigMap\nmetadata: {name: ok}\n---\n# c\n---\nkind: Service\n", "bad.yaml: document 2: kind and metadata.name are required"},
		{"duplicate", "kind: A\nmetadata: {name: x}\n---\nkind: A\nmetadata: {name: x}\n", "A/x appears twice"},
		{"bad quantity", "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: c}\nspec:\n  headGroupSpec:\n    template:\n      spec:\n        containers:\n        - {name: h, resources: {limits: {nvidia.com/gpu: lots}}}\n",
			"bad.yaml: document 1 (RayCluster/c):"},
		{"wrong type", "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j}\nspec: {entrypoint: [1, 2]}\n", "expected a ray.io/v1 RayJob"},
		{"wrong deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: lab}\nspec: {replicas: many}\n", "bad.yaml: document 1 (Deployment/lab/d): "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad", "bad.yaml", []byte(tc.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A number is decoded through JSON only when float64 holds it exactly.
func TestExactNumbers(t *testing.T) {
	for _, tc := range []struct {
		json string
		want bool
	}{
		{`{"a":[1,-2,123456789012345]}`, true},
		{`{"a":1234567890123456}`, false},
		{`{"a":-1234567890123456}`, false},
		{`{"a":1e3}`, false},
		{`{"a":"1234567890123456789"}`, true},
	} {
		assert.Equal(t, tc.want, exactNumbers([]byte(tc.json)), tc.json)
	}
}

// TestParseTruncated: a render cut anywhere (a bad merge, a half-written
// file) parses or fails with an error, never a panic.
func TestParseTruncated(t *testing.T) {
	file := filepath.Join(testenv.RepoRoot(t), "examples", "runs-repo", "manifests", "ultra-64n.yaml")
	data := []byte(testenv.ReadFile(t, file))
	for i := 0; i < len(data); i += 173 {
		r, err := Parse("r", "r.yaml", data[:i])
		if err != nil {
			assert.Contains(t, err.Error(), "r.yaml: document ")
			continue
		}
		_ = Diff(Render{"r": r}, Render{}).Markdown()
	}
}
