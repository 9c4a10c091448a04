package review_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/golden"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// committed parses the example repository's committed manifests, the
// renders of the three shipped GB300 profiles and of the ultra profiles'
// shared services (render-all --check in fn/frontend/renderall keeps them
// current).
func committed(t *testing.T) review.Render {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(t), "examples", "runs-repo", "manifests")
	out := review.Render{}
	for _, name := range []string{"qwen3-math-4n", "ultra-48n", "ultra-64n", "ultra-tools"} {
		file := filepath.Join(dir, name+".yaml")
		r, err := review.Parse(name, file, []byte(testenv.ReadFile(t, file)))
		require.NoError(t, err)
		out[name] = r
	}
	return out
}

func TestParseShippedProfiles(t *testing.T) {
	runs := committed(t)
	cases := []struct {
		run     string
		nodes   int64
		gpus    int64
		images  []string
		objects []string
		facts   map[string]string
	}{
		{
			run: "qwen3-math-4n", nodes: 4, gpus: 16,
			images: []string{"nvcr.io/nvidian/nemo-rl:664d29c-49528955"},
			objects: []string{
				"ComputeDomain/rl-team/compute-domain-qwen3-math-4n-training",
				"RayJob/rl-team/qwen3-math-4n",
				"ResourceClaimTemplate/rl-team/roce-qwen3-math-4n-training",
			},
			facts: map[string]string{
				"RayJob/rl-team/qwen3-math-4n queue":                                     "rl",
				"RayJob/rl-team/qwen3-math-4n workers topology":                          "gb300-topology",
				"RayJob/rl-team/qwen3-math-4n workers required-placement":                "nvidia.com/gpu.clique",
				"RayJob/rl-team/qwen3-math-4n workers claim roce-channel":                "roce-qwen3-math-4n-training",
				"ResourceClaimTemplate/rl-team/roce-qwen3-math-4n-training request roce": "8 × roce.networking.k8s.aws",
			},
		},
		{
			// noDeployments: the shared services are ultra-tools'.
			run: "ultra-64n", nodes: 64, gpus: 256,
			images: []string{"nvcr.io/nvidian/nemo-rl:nightly-ultra-49267394"},
			objects: []string{
				"ComputeDomain/rl-team/compute-domain-ultra-64n-training",
				"RayCluster/rl-team/ultra-64n-training",
				"RayJob/rl-team/ultra-64n",
				"ResourceClaimTemplate/rl-team/roce-ultra-64n-training",
			},
			facts: map[string]string{
				"RayCluster/rl-team/ultra-64n-training scheduler":                            "kai-scheduler",
				"RayCluster/rl-team/ultra-64n-training queue":                                "backfill",
				"RayCluster/rl-team/ultra-64n-training workers topology":                     "gb300-topology",
				"RayCluster/rl-team/ultra-64n-training workers claim compute-domain-channel": "compute-domain-ultra-64n-training",
				"ComputeDomain/rl-team/compute-domain-ultra-64n-training numNodes":           "0",
			},
		},
		{
			run: "ultra-48n", nodes: 48, gpus: 192,
			images: []string{"nvcr.io/nvidian/nemo-rl:nightly-ultra-49267394"},
			facts: map[string]string{
				"RayJob/rl-team/ultra-48n queue": "backfill",
			},
		},
		{
			// onlyDeployments: the services both ultra runs reach by name.
			run: "ultra-tools", nodes: 0, gpus: 0,
			images: []string{"nvcr.io/nvidian/nemo-rl:skills-sandbox-latest"},
			objects: []string{
				"Deployment/rl-team/alice-ultra-pipeclean-ns-tools",
				"Service/rl-team/alice-ultra-pipeclean-ns-tools",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.run, func(t *testing.T) {
			r := runs[tc.run]
			require.NotNil(t, r)
			assert.Equal(t, review.Totals{Nodes: tc.nodes, GPUs: tc.gpus}, r.Totals())
			assert.Equal(t, tc.images, r.Images)
			if tc.objects != nil {
				var got []string
				for ref := range r.Objects {
					got = append(got, ref)
				}
				assert.ElementsMatch(t, tc.objects, got)
			}
			for k, v := range tc.facts {
				got, ok := r.Scheduling[k]
				if !ok {
					got = r.DRA[k]
				}
				assert.Equal(t, v, got, k)
			}
			// The head asks for no GPUs, so it is no node of the run.
			for _, p := range r.Pods {
				if p.Group == "head" {
					assert.Zero(t, p.GPUsPerPod, p.Owner)
				}
			}
		})
	}
	assert.Equal(t, review.Totals{Nodes: 116, GPUs: 464}, runs.Totals())
}

func sprintf(format string, args ...any) string {
	s := format
	for _, a := range args {
		s = strings.Replace(s, "%s", a.(string), 1)
	}
	return s
}

// fixture copies the example runs repository with the recipes and the
// GB300 profiles it references into a temp dir, keeping the relative layout
// so the run files' ../../../../ paths resolve to the copies.
func fixture(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	tmp := t.TempDir()
	for _, dir := range []string{"examples/runs-repo", "recipes", "profiles/gb300"} {
		copyTree(t, filepath.Join(root, dir), filepath.Join(tmp, dir))
	}
	return tmp
}

func copyTree(t *testing.T, src, dst string) { t.Helper(); testenv.CopyDir(t, src, dst) }

// editLine replaces exactly one line of file, so each case is the one-line
// profile change a pull request would make.
func editLine(t *testing.T, file, old, replacement string) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	n := 0
	for i, l := range lines {
		if l == old {
			lines[i] = replacement
			n++
		}
	}
	require.Equal(t, 1, n, "%s: expected exactly one line %q", file, old)
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644))
}

// renderFixture renders the fixture's runs as render-all does.
func renderFixture(t *testing.T, tmp string) review.Render {
	t.Helper()
	runs, err := renderall.Discover(source.Disk{}, filepath.Join(tmp, "examples", "runs-repo"))
	require.NoError(t, err)
	res := renderall.Render(source.Disk{}, runs)
	require.Empty(t, res.Failed(), "%v", res.Diags)
	out := review.Render{}
	for name, data := range res.Files {
		r, err := review.Parse(name, name+".yaml", data)
		require.NoError(t, err)
		out[name] = r
	}
	return out
}

const ultra64 = "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml"

// TestGoldenSummary: a one-line change of the ultra 64n profile against the
// committed manifests; the numbers are asserted, the whole text and
// markdown summaries are golden files under testdata/.
func TestGoldenSummary(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		check    func(t *testing.T, d review.RunDiff)
	}{
		{
			name: "replicas", old: "          replicas: 64", new: "          replicas: 80",
			check: func(t *testing.T, d review.RunDiff) {
				assert.Equal(t, review.Totals{Nodes: 64, GPUs: 256}, d.Before)
				assert.Equal(t, review.Totals{Nodes: 80, GPUs: 320}, d.After)
				assert.Equal(t, []string{"RayCluster/rl-team/ultra-64n-training"}, d.ObjectsChanged)
				// A fifth segment changes no scheduling or DRA fact.
				assert.Empty(t, d.Scheduling)
				assert.Empty(t, d.DRA)
				assert.Empty(t, d.ImagesAdded)
			},
		},
		{
			name: "image", old: "image: nvcr.io/nvidian/nemo-rl:nightly-ultra-49267394", new: "image: nvcr.io/nvidian/nemo-rl:nightly-ultra-49300001",
			check: func(t *testing.T, d review.RunDiff) {
				assert.Equal(t, d.Before, d.After)
				assert.Equal(t, []string{"nvcr.io/nvidian/nemo-rl:nightly-ultra-49267394"}, d.ImagesRemoved)
				assert.Equal(t, []string{"nvcr.io/nvidian/nemo-rl:nightly-ultra-49300001"}, d.ImagesAdded)
			},
		},
		{
			name: "queue", old: "      kai.scheduler/queue: backfill", new: "      kai.scheduler/queue: rl",
			check: func(t *testing.T, d review.RunDiff) {
				assert.Equal(t, []review.FieldChange{{Key: "RayCluster/rl-team/ultra-64n-training queue", Before: "backfill", After: "rl"}}, d.Scheduling)
			},
		},
		{
			// 42, not 64: the ultra recipe's parallelism fits 42 - 26 generation
			// nodes, not 64 - 26 (docs/nrl-k8s.md §5.2).
			name: "entrypoint", old: "      cluster.num_nodes=58 \\", new: "      cluster.num_nodes=42 \\",
			check: func(t *testing.T, d review.RunDiff) {
				require.Len(t, d.Entrypoints, 1)
				assert.Equal(t, "RayJob/rl-team/ultra-64n", d.Entrypoints[0].Job)
				assert.Contains(t, d.Entrypoints[0].Diff, "-  cluster.num_nodes=58 \\\n+  cluster.num_nodes=42 \\\n")
				assert.Equal(t, []string{"RayJob/rl-team/ultra-64n"}, d.ObjectsChanged)
			},
		},
		{
			name: "topology", old: "                kai.scheduler/topology-required-placement: nvidia.com/gpu.clique",
			new: "                kai.scheduler/topology-preferred-placement: nvidia.com/gpu.clique",
			check: func(t *testing.T, d review.RunDiff) {
				assert.Equal(t, []review.FieldChange{
					{Key: "RayCluster/rl-team/ultra-64n-training workers preferred-placement", After: "nvidia.com/gpu.clique"},
					{Key: "RayCluster/rl-team/ultra-64n-training workers required-placement", Before: "nvidia.com/gpu.clique"},
				}, d.Scheduling)
			},
		},
	}
	old := committed(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmp := fixture(t)
			editLine(t, filepath.Join(tmp, ultra64), tc.old, tc.new)
			s := review.Diff(old, renderFixture(t, tmp))
			require.Len(t, s.Runs, 1)
			assert.Equal(t, 3, s.Unchanged) // qwen3-math-4n, ultra-48n, ultra-tools
			d := s.Runs[0]
			assert.Equal(t, "ultra-64n", d.Name)
			assert.Equal(t, review.Changed, d.Status)
			tc.check(t, d)
			golden.File(t, filepath.Join("testdata", tc.name+".txt"), []byte(s.Text()))
			golden.File(t, filepath.Join("testdata", tc.name+".md"), []byte(s.Markdown()))
		})
	}
}

// A pull request adding 150 runs and moving one run to another registry:
// the comment fits GitHub's 65,536 characters, the registry change comes
// first, and the runs left out are counted with where the full text is.
func TestMarkdownFitsAComment(t *testing.T) {
	base := committed(t)
	file := filepath.Join(testenv.RepoRoot(t), "examples", "runs-repo", "manifests", "qwen3-math-4n.yaml")
	render := testenv.ReadFile(t, file)
	cur := review.Render{}
	for name, r := range base {
		cur[name] = r
	}
	for i := range 150 {
		name := fmt.Sprintf("a-sweep-%03d", i)
		r, err := review.Parse(name, name, []byte(strings.ReplaceAll(render, "qwen3-math-4n", name)))
		require.NoError(t, err)
		cur[name] = r
	}
	moved, err := review.Parse("ultra-64n", "ultra-64n", []byte(strings.ReplaceAll(testenv.ReadFile(t, filepath.Join(filepath.Dir(file), "ultra-64n.yaml")), "nvcr.io/", "registry.example.net/")))
	require.NoError(t, err)
	cur["ultra-64n"] = moved

	s := review.Diff(base, cur)
	full := s.Markdown()
	require.Greater(t, len(full), 65536, "the uncut summary is over the limit, or the test proves nothing")
	text, left := s.MarkdownWithin(65536, "summary-full.md")
	require.LessOrEqual(t, len(text), 65536)
	require.Positive(t, left)
	require.Contains(t, text, fmt.Sprintf("_%d runs left out here (", left))
	require.Contains(t, text, "the full summary is `summary-full.md`._")
	require.Contains(t, text, "Images change in 1 existing run: `ultra-64n`.")
	require.NotContains(t, text, "Security, scope", "a registry change is no security change; it ranks below them")
	require.Contains(t, text, "150 runs new or removed")
	first := strings.Index(text, "\n#### ")
	require.True(t, strings.HasPrefix(text[first:], "\n#### `ultra-64n` (changed)"), "the image change is the first table")
	require.Contains(t, text, "registry.example.net/")
	require.True(t, strings.HasPrefix(full, text[:first]), "the cut text is the full text's beginning")
}

// TestQueuedRunCountsAtItsSize: a RayJob suspended by hand or queued in
// Kueue has no pods yet; the review counts it at the size it runs at (a
// queued 16-GPU run is not 0 GPUs) and says when its pods come.
func TestQueuedRunCountsAtItsSize(t *testing.T) {
	const job = `apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: j
  labels: {%s}
spec:
  entrypoint: python x.py
  %s
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {containers: [{name: h, image: img:h}]}}
    workerGroupSpecs:
    - groupName: g
      replicas: 2
      template: {spec: {containers: [{name: w, image: img:w, resources: {limits: {nvidia.com/gpu: 8}}}]}}
`
	running, err := review.Parse("r", "r.yaml", []byte(sprintf(job, "", "")))
	require.NoError(t, err)
	for _, tc := range []struct{ name, labels, suspend, says string }{
		{"suspended", "", "suspend: true", "suspended: KubeRay creates its pods once spec.suspend is set to false"},
		{"queued in Kueue", "kueue.x-k8s.io/queue-name: lab-queue", "", "queued: Kueue's LocalQueue lab-queue admits it, then KubeRay creates its pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held, err := review.Parse("r", "r.yaml", []byte(sprintf(job, tc.labels, tc.suspend)))
			require.NoError(t, err)
			assert.Equal(t, review.Totals{Nodes: 2, GPUs: 16}, held.Totals())
			s := review.Diff(review.Render{"r": running}, review.Render{"r": held})
			require.Len(t, s.Runs, 1)
			assert.Equal(t, s.Runs[0].Before, s.Runs[0].After, "holding a run back moves no GPUs")
			assert.Equal(t, []string{"RayJob/j: " + tc.says}, s.Runs[0].Admission)
			assert.Contains(t, s.Text(), "admission   RayJob/j: "+tc.says+"\n")
			assert.Contains(t, s.Markdown(), "| admission: `RayJob/j` |  | "+tc.says+" |")
		})
	}
}
