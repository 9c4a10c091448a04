package hostile

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Round 5: preflight never says "ok" where a read it rests on was refused;
// the PR gate reads a run's state from its spec, refuses every road that
// would forge the state annotation, names a started Kueue run's restart,
// and refuses a stray manifest at any depth of manifests/.

// deviceRun is run1 in ml: a CPU head and one 4-GPU worker claiming 8
// RoCE NICs of class roce.
const deviceRun = `apiVersion: ray.io/v1
kind: RayJob
metadata: {name: run1, namespace: ml, labels: {app.kubernetes.io/instance: run1}}
spec:
  entrypoint: python x.py
  rayClusterSpec:
    headGroupSpec:
      template: {spec: {containers: [{name: ray-head, image: img:1, resources: {requests: {cpu: "1"}}}]}}
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        template:
          spec:
            resourceClaims: [{name: roce, resourceClaimTemplateName: roce}]
            containers: [{name: ray-worker, image: img:1, resources: {limits: {nvidia.com/gpu: "4"}, claims: [{name: roce}]}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: roce, namespace: ml}
spec: {spec: {devices: {requests: [{name: nics, exactly: {deviceClassName: roce, count: 8}}]}}}
`

// deviceAPI is a cluster where deviceRun fits: one node with 4 GPUs and
// 8 RoCE NICs, nothing else running.
func deviceAPI() *fakeAPI {
	class := `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"roce"},"spec":{"selectors":[{"cel":{"expression":"device.driver == \"roce\""}}]}}`
	var devices []string
	for i := range 8 {
		devices = append(devices, fmt.Sprintf(`{"name":"nic%d"}`, i))
	}
	slice := `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"n0-roce"},"spec":{"driver":"roce","nodeName":"n0","pool":{"name":"n0","generation":1,"resourceSliceCount":1},"devices":[` + strings.Join(devices, ",") + `]}}`
	return &fakeAPI{answers: map[string]http.HandlerFunc{
		"/api/v1/namespaces/ml":                       apiReply(200, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml","labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`),
		"/api/v1/nodes":                               apiList("v1", "NodeList", `{"metadata":{"name":"n0"},"status":{"allocatable":{"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":"4"}}}`),
		"/api/v1/pods":                                apiList("v1", "PodList"),
		"/apis/resource.k8s.io/v1/resourceslices":     apiList("resource.k8s.io/v1", "ResourceSliceList", slice),
		"/apis/resource.k8s.io/v1/deviceclasses":      apiList("resource.k8s.io/v1", "DeviceClassList", class),
		"/apis/resource.k8s.io/v1/deviceclasses/roce": apiReply(200, class),
		"/apis/resource.k8s.io/v1/resourceclaims":     apiList("resource.k8s.io/v1", "ResourceClaimList"),
		"/apis/ray.io/v1":                             apiReply(200, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"ray.io/v1","resources":[{"name":"rayjobs","namespaced":true,"kind":"RayJob","verbs":["get"]}]}`),
		"/apis/resource.k8s.io/v1":                    apiReply(200, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"resource.k8s.io/v1","resources":[{"name":"resourceclaimtemplates","namespaced":true,"kind":"ResourceClaimTemplate","verbs":["get"]}]}`),
	}}
}

// workerLine is preflight's line for run1's worker group.
func workerLine(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Nodes RayJob/run1 worker group gpu") {
			return l
		}
	}
	require.Fail(t, "no worker group line", out)
	return ""
}

// A 403 on any kind placement reads makes the pod group's line "cannot
// tell", naming the read and that access was refused, never "ok", and the
// command exits as it does for any "cannot tell" (0; 1 with
// --require-all); the cluster that answers every read says "ok".
func TestPreflightNeverOKOnADeniedRead(t *testing.T) {
	for _, tc := range []struct {
		name, deny, named string
		queued            bool // run1 labelled with Kueue's LocalQueue lq
	}{
		{name: "nothing denied"},
		{name: "Kueue's objects (a queued run)", deny: "/apis/kueue.x-k8s.io/", named: "Kueue's LocalQueue ml/lq", queued: true},
		{name: "ResourceSlices", deny: "/apis/resource.k8s.io/v1/resourceslices", named: "ResourceSlices"},
		{name: "DeviceClasses alone", deny: "/apis/resource.k8s.io/v1/deviceclasses", named: "DeviceClasses"},
		{name: "Pods", deny: "/api/v1/pods", named: "pods already bound"},
		{name: "ResourceClaims", deny: "/apis/resource.k8s.io/v1/resourceclaims", named: "ResourceClaims already allocated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			c := deviceAPI()
			switch {
			case strings.HasSuffix(tc.deny, "/"):
				c.prefixes = map[string]http.HandlerFunc{tc.deny: apiStatus(403, "Forbidden")}
			case tc.deny != "":
				c.answers[tc.deny] = apiStatus(403, "Forbidden")
			}
			kc := w.serve(c)
			run := deviceRun
			if tc.queued {
				run = strings.Replace(run, "labels: {app.kubernetes.io/instance: run1}", "labels: {app.kubernetes.io/instance: run1, kueue.x-k8s.io/queue-name: lq}", 1)
			}
			w.file("run.yaml", run)
			r := w.quick("preflight", "-f", "run.yaml", "--nodes", "--kubeconfig", kc)
			line := workerLine(t, r.stdout)
			strict := w.quick("preflight", "-f", "run.yaml", "--nodes", "--require-all", "--kubeconfig", kc)
			if tc.deny == "" {
				require.True(t, strings.HasPrefix(line, "ok"), line)
				require.Contains(t, line, "all 1 placed")
				require.Equal(t, 0, r.code, r.stdout+r.stderr)
				return
			}
			require.True(t, strings.HasPrefix(line, "cannot tell"), line)
			require.Contains(t, line, tc.named)
			require.Contains(t, line, "403 Forbidden", "why: access, not an error")
			require.Equal(t, 0, r.code, "a cannot tell exits 0\n%s%s", r.stdout, r.stderr)
			require.Equal(t, 1, strict.code, "and 1 with --require-all\n%s%s", strict.stdout, strict.stderr)
		})
	}
	t.Run("Nodes", func(t *testing.T) {
		w := newWorld(t)
		c := deviceAPI()
		c.answers["/api/v1/nodes"] = apiStatus(403, "Forbidden")
		kc := w.serve(c)
		w.file("run.yaml", deviceRun)
		r := w.quick("preflight", "-f", "run.yaml", "--nodes", "--kubeconfig", kc)
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		require.Contains(t, r.stdout, "cannot tell  Nodes (all)")
		require.NotContains(t, r.stdout, "Nodes RayJob/run1", "no pod group is judged without the nodes")
	})
}

// forgedState adds the state annotation to a rendered RayJob's metadata,
// as a hand edit (or an older render) could.
func forgedState(t *testing.T, manifest string) string {
	t.Helper()
	out := strings.Replace(manifest, "kind: RayJob\nmetadata:\n", "kind: RayJob\nmetadata:\n  annotations: {nemo-rl.nvidia.com/state: stopped}\n", 1)
	require.NotEqual(t, manifest, out, "a RayJob to annotate")
	return out
}

// The gate's state is the spec's: every road by which a profile would
// write the state annotation fails the pull request's render, naming the
// field and the state parameter; and a manifest carrying the annotation
// on a running RayJob (a hand edit) still reads as running, so an edit of
// its entrypoint is a started run's edit, not a stop.
func TestGateStateFromTheSpec(t *testing.T) {
	for _, tc := range []struct{ name, old, new, field string }{
		{"profile annotations", "image: img:1\n", "image: img:1\nannotations: {nemo-rl.nvidia.com/state: stopped}\n", "annotations.nemo-rl.nvidia.com/state"},
		{"kuberay.training.annotations", "    name: ${user:}-c\n", "    name: ${user:}-c\n    annotations: {nemo-rl.nvidia.com/state: stopped}\n", "kuberay.training.annotations.nemo-rl.nvidia.com/state"},
		{"kuberay.training.labels", "    name: ${user:}-c\n", "    name: ${user:}-c\n    labels: {nemo-rl.nvidia.com/state: stopped}\n", "kuberay.training.labels.nemo-rl.nvidia.com/state"},
		{"worker pod template", "              annotations: {kai.scheduler/topology: t}\n", "              annotations: {kai.scheduler/topology: t, nemo-rl.nvidia.com/state: stopped}\n",
			"kuberay.training.spec.workerGroupSpecs[0].template.metadata.annotations.nemo-rl.nvidia.com/state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.openPR(t, "base: good runs")
			profile, err := os.ReadFile(filepath.Join(w.repo, "configs", "p.infra.yaml"))
			require.NoError(t, err)
			forged := strings.Replace(string(profile), tc.old, tc.new, 1)
			require.NotEqual(t, string(profile), forged)
			w.file("configs/p.infra.yaml", forged)
			w.file("runs/good/run.yaml", runYAML("good", "  overrides: [+policy.max_total_sequence_length=512]\n"))
			w.git("add", "-A")
			w.git("commit", "-qm", "pr: annotate the running run stopped, edit its entrypoint")
			r := w.run("render-all", ".", "--check", "--base-ref", "main")
			clean(t, r)
			require.Equal(t, 1, r.code, r.stderr)
			require.Contains(t, r.stderr, "good: error: configs/p.infra.yaml: "+tc.field+": ")
			require.Contains(t, r.stderr, "expected the state parameter (spec.state stopped)")
		})
	}

	t.Run("a hand-forged manifest", func(t *testing.T) {
		w := newWorld(t)
		w.openPR(t, "base: good runs")
		base := string(w.committed("main", "manifests/good.yaml"))
		w.file("runs/good/run.yaml", runYAML("good", "  overrides: [+policy.max_total_sequence_length=512]\n"))
		require.Equal(t, 0, w.run("render-all", ".").code)
		cur, err := os.ReadFile(filepath.Join(w.repo, "manifests", "good.yaml"))
		require.NoError(t, err)
		w.file("old/good.yaml", forgedState(t, base))
		w.file("new/good.yaml", forgedState(t, string(cur)))
		r := w.run("diff", "old/good.yaml", "new/good.yaml")
		clean(t, r)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "started run RayJob/default/good: spec.entrypoint", "running by its spec, annotated or not")
		require.NotContains(t, r.stdout, "stopped by this change")
	})
}

// Scaling a started Kueue run (worker replicas 2 -> 1) is no edit that
// never reaches it: Kueue finds the job no longer matches its admitted
// Workload and KubeRay makes a new cluster, a restart from step 0. The
// gate refuses it saying so, and the ways that keep the run's progress.
func TestGateNamesAKueueRestart(t *testing.T) {
	w := newWorld(t)
	w.file("configs/p.infra.yaml", "scheduler:\n  kind: kueue\n  queue: lq\n"+strings.Replace(profileYAML, "              annotations: {kai.scheduler/topology: t}\n", "              annotations: {}\n", 1))
	w.openPR(t, "base: a Kueue run")
	w.file("configs/r.yaml", strings.Replace(recipeYAML, "num_nodes: 2", "num_nodes: 1", 1))
	profile, err := os.ReadFile(filepath.Join(w.repo, "configs", "p.infra.yaml"))
	require.NoError(t, err)
	w.file("configs/p.infra.yaml", strings.Replace(string(profile), "replicas: 2", "replicas: 1", 1))
	require.Equal(t, 0, w.run("render-all", ".").code)
	w.git("add", "-A")
	w.git("commit", "-qm", "pr: scale the running run to 1 worker")
	r := w.run("render-all", ".", "--check", "--base-ref", "main")
	clean(t, r)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "good: refused: the run has started (the base branch runs it) and Kueue admitted it")
	require.Contains(t, r.stderr, "spec.rayClusterSpec.workerGroupSpecs[0].replicas")
	require.Contains(t, r.stderr, "a restart from step 0")
	require.Contains(t, r.stderr, "stop it (spec.state: stopped)")
	require.NotContains(t, r.stderr, "never reach it")
	require.Contains(t, w.diffWithBase(), "restart     RayJob/default/good: spec.rayClusterSpec.workerGroupSpecs[0].replicas")
}

// A hand-written manifest below a subfolder of manifests/ (which a Flux
// Kustomization on that path applies), at any depth and whatever its
// name, and a symlink anywhere, are refused by name like a stray at the
// top.
func TestGateRefusesStraysAtAnyDepth(t *testing.T) {
	for _, tc := range []struct {
		name, path, shown string
		link              string // the symlink's target, "" for a file
	}{
		{name: "one folder down", path: "team/pwn.yaml", shown: "manifests/team/pwn.yaml"},
		{name: "three folders down", path: "a/b/c/pwn.yml", shown: "manifests/a/b/c/pwn.yml"},
		{name: "a kustomization in a folder", path: "team/kustomization.yaml", shown: "manifests/team/kustomization.yaml"},
		{name: "any extension", path: "team/pwn.txt", shown: "manifests/team/pwn.txt"},
		{name: "a hidden folder", path: ".x/pwn.yaml", shown: "manifests/.x/pwn.yaml"},
		{name: "an odd name", path: "team/pwn\x1b[2J.yaml", shown: `manifests/team/pwn\x1b[2J.yaml`},
		{name: "a symlink at the top", path: "pwn.yml", shown: "manifests/pwn.yml", link: "../configs/p.infra.yaml"},
		{name: "a symlink to a folder", path: "elsewhere", shown: "manifests/elsewhere", link: "../configs"},
		{name: "a symlink in a folder", path: "team/x.yaml", shown: "manifests/team/x.yaml", link: "../../configs/p.infra.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.openPR(t, "base")
			if tc.link != "" {
				w.link(filepath.Join("manifests", tc.path), tc.link)
			} else {
				w.file(filepath.Join("manifests", tc.path), clusterAdmin)
			}
			w.git("add", "-A")
			w.git("commit", "-qm", "pr")
			r := w.run("render-all", ".", "--check", "--base-ref", "main")
			clean(t, r)
			require.Equal(t, 1, r.code, r.stderr)
			t.Log(r.stderr)
			require.Contains(t, r.stderr, tc.shown+": ")
			require.Contains(t, r.stderr, "refused: ")
			require.NotContains(t, r.stderr, "\x1b", "a name is never printed raw")
		})
	}
}
