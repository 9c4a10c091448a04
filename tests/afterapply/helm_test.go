package afterapply

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The chart's releases against the operator tier with the real helm CLIs:
// what `helm install`, `upgrade`, `rollback` and `uninstall` do to the
// objects the API server holds while KubeRay's reconcilers act on them.

// helmCLI runs one helm command against the tier; it returns the combined
// output and the error.
type helmCLI struct {
	bin, kubeconfig, ns string
}

func newHelm(t *testing.T, tool, kubeconfig, ns string) helmCLI {
	t.Helper()
	return helmCLI{bin: testenv.Tool(t, tool), kubeconfig: kubeconfig, ns: ns}
}

func (h helmCLI) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := helmEnv(t, h.bin, append(args, "--kubeconfig", h.kubeconfig, "-n", h.ns)...).CombinedOutput()
	return string(out), err
}

func (h helmCLI) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.run(t, args...)
	require.NoError(t, err, "helm %s:\n%s", strings.Join(args, " "), out)
	return out
}

// history is `helm history` as (revision, status, description) triples.
func (h helmCLI) history(t *testing.T, release string) []string {
	t.Helper()
	out := h.must(t, "history", release, "-o", "json")
	var revs []struct {
		Revision    int    `json:"revision"`
		Status      string `json:"status"`
		Description string `json:"description"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &revs), out)
	var got []string
	for _, r := range revs {
		got = append(got, strings.Join([]string{strconv.Itoa(r.Revision), r.Status, r.Description}, " "))
	}
	return got
}

func chartDir(t *testing.T) string {
	return filepath.Join(testenv.RepoRoot(t), "charts", "nemo-rl-run")
}

// gone waits until the object is deleted (KubeRay removes its finalizers).
func gone(t *testing.T, env *operator.Env, obj client.Object, ns, name string) {
	t.Helper()
	require.NoError(t, operator.Wait(context.Background(), 60*time.Second, "deletion of "+name, func(context.Context) (bool, string, error) {
		return !exists(t, env, obj, ns, name), "still there", nil
	}))
}

func unstructuredOf(apiVersion, kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

const (
	ultraProfile = "gb300-ultra-64n-pipeclean"
	sandbox      = "alice-ultra-pipeclean-ns-tools"
)

// TestHelmSharedServices: the Ultra profile's sandbox as a release of its
// own (mode=services) and two runs of the profile beside it, under Helm 3
// and 4: the runs install side by side, uninstalling one leaves the other
// run and the sandbox as they were, and the sandbox goes with its own
// release, last. The negative controls: a run asking for the sandbox
// (deployments=true) and a second services release of the same names are
// refused at install.
func TestHelmSharedServices(t *testing.T) {
	env := operator.Shared(t)
	eachHelm(t, env, "svc-", func(t *testing.T, h helmCLI, ns string, _ bool) {
		chart := chartDir(t)
		base := []string{chart, "--set", "profile=" + ultraProfile, "--set", "user=alice"}

		notes := h.must(t, append([]string{"install", sandbox}, append(base, "--set", "mode=services", "--set", "image=registry.example/skills-sandbox:v2")...)...)
		assert.Contains(t, notes, "NeMo-RL shared services of user alice")
		var dep appsv1.Deployment
		require.True(t, exists(t, env, &dep, ns, sandbox))
		require.Equal(t, sandbox, dep.Annotations["meta.helm.sh/release-name"], "the services release owns the Deployment")
		require.Equal(t, "registry.example/skills-sandbox:v2", dep.Spec.Template.Spec.Containers[0].Image)
		var svc corev1.Service
		require.True(t, exists(t, env, &svc, ns, sandbox))
		svcUID := svc.UID

		for _, run := range []string{"ultra-a", "ultra-b"} {
			out := h.must(t, append([]string{"install", run}, base...)...)
			// NOTES looked the sandbox up on the server.
			assert.Contains(t, out, "found: Deployment "+sandbox+" (release "+sandbox+")", run)
			manifest := h.must(t, "get", "manifest", run)
			assert.NotContains(t, manifest, "kind: Deployment", run)
			assert.NotContains(t, manifest, "kind: Service\n", run)
			require.True(t, exists(t, env, &rayv1.RayJob{}, ns, run))
		}

		// Negative controls: neither a run nor a second services release
		// can take the sandbox over.
		out, err := h.run(t, append([]string{"install", "ultra-c"}, append(base, "--set", "deployments=true")...)...)
		require.Error(t, err, out)
		assert.Contains(t, out, "at '/deployments': value must be false")
		out, err = h.run(t, append([]string{"install", "alice-sandbox-2"}, append(base, "--set", "mode=services")...)...)
		require.Error(t, err, out)
		assert.Contains(t, out, sandbox)
		assert.Contains(t, out, "exists and cannot be imported into the current release")

		h.must(t, "uninstall", "ultra-a")
		gone(t, env, &rayv1.RayJob{}, ns, "ultra-a")
		gone(t, env, unstructuredOf("resource.nvidia.com/v1beta1", "ComputeDomain"), ns, "compute-domain-ultra-a-training")
		require.True(t, exists(t, env, &rayv1.RayJob{}, ns, "ultra-b"), "uninstalling ultra-a left ultra-b's RayJob")
		require.True(t, exists(t, env, unstructuredOf("resource.nvidia.com/v1beta1", "ComputeDomain"), ns, "compute-domain-ultra-b-training"))
		require.True(t, exists(t, env, unstructuredOf("resource.k8s.io/v1", "ResourceClaimTemplate"), ns, "roce-ultra-b-training"))
		require.True(t, exists(t, env, &dep, ns, sandbox), "uninstalling a run left the sandbox")
		require.True(t, exists(t, env, &svc, ns, sandbox))
		require.Equal(t, svcUID, svc.UID, "the same Service, never re-created")

		h.must(t, "uninstall", "ultra-b")
		gone(t, env, &rayv1.RayJob{}, ns, "ultra-b")
		require.True(t, exists(t, env, &dep, ns, sandbox))
		h.must(t, "uninstall", sandbox)
		gone(t, env, &appsv1.Deployment{}, ns, sandbox)
		gone(t, env, &corev1.Service{}, ns, sandbox)
	})
}

// TestHelmTwoRunsEveryProfile: two run releases of every packaged profile
// (rayjob mode, Helm 3) install side by side in one namespace and uninstall
// one after the other; the first uninstall leaves every object of the
// second.
func TestHelmTwoRunsEveryProfile(t *testing.T) {
	env := operator.Shared(t)
	kc := kubeconfig(t, env)
	ctx := context.Background()
	var meta chartgen.Meta
	require.NoError(t, json.Unmarshal([]byte(testenv.ReadFile(t, filepath.Join(chartDir(t), chartgen.MetaFile))), &meta))
	ns := "two-runs"
	require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
	h := newHelm(t, "NRL_HELM3", kc, ns)
	names := make([]string, 0, len(meta.Profiles))
	for name := range meta.Profiles {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			runs := []string{"p" + strconv.Itoa(i) + "-a", "p" + strconv.Itoa(i) + "-b"}
			objects := map[string][]string{}
			for _, run := range runs {
				h.must(t, "install", run, chartDir(t), "--set", "profile="+name, "--set", "user=alice")
				objects[run] = manifestObjects(t, h.must(t, "get", "manifest", run))
				require.NotEmpty(t, objects[run])
			}
			h.must(t, "uninstall", runs[0])
			gone(t, env, &rayv1.RayJob{}, ns, runs[0])
			for _, o := range objects[runs[1]] {
				kind, name, _ := strings.Cut(o, "/")
				u := unstructuredOf(apiVersionOf(kind), kind)
				assert.True(t, exists(t, env, u, ns, name), "%s of %s after uninstalling %s", o, runs[1], runs[0])
			}
			h.must(t, "uninstall", runs[1])
			gone(t, env, &rayv1.RayJob{}, ns, runs[1])
		})
	}
}

// manifestObjects are the kind/name pairs of a release manifest.
func manifestObjects(t *testing.T, manifest string) []string {
	t.Helper()
	var out []string
	for _, doc := range strings.Split(manifest, "\n---") {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if strings.TrimSpace(doc) == "" {
			continue
		}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &o), doc)
		if o.Kind != "" {
			out = append(out, o.Kind+"/"+o.Metadata.Name)
		}
	}
	return out
}

func apiVersionOf(kind string) string {
	switch kind {
	case "RayJob", "RayCluster":
		return "ray.io/v1"
	case "ComputeDomain":
		return "resource.nvidia.com/v1beta1"
	case "ResourceClaimTemplate":
		return "resource.k8s.io/v1"
	case "Deployment":
		return "apps/v1"
	}
	return "v1"
}

// TestHelmUpgradeAndRollback: what helm upgrade and helm rollback do to a
// live run while KubeRay reconciles it, under Helm 3 and 4 (the chart
// README, "Upgrades and rollbacks"):
//
//   - upgrade with a changed override, while the RayJob exists: refused by
//     the chart's guard (lookup) with its message; no revision is recorded
//     and the RayJob is untouched (same generation and entrypoint);
//   - rollback to revision 1 after that refusal: Helm records revision 2,
//     re-applying revision 1's manifest, which is what the server holds: the
//     RayJob is untouched;
//   - raycluster mode: the upgrade is refused naming the RayCluster;
//   - once the RayJob is gone (deleted by hand, or by a GitOps prune), an
//     upgrade is a new run: the guard finds nothing, Helm re-creates the
//     RayJob with the new spec and KubeRay starts it afresh;
//   - rollback of that run to revision 1: rollback renders no template, so
//     no guard runs: Helm patches the live RayJob's spec back, and KubeRay,
//     which starts a RayJob once, keeps running the job it started (same
//     RayCluster): the object and what runs now disagree. Hence the README:
//     never roll back a run, install the old values under a new name;
//   - a services release's upgrade (a new sandbox image) is a plain
//     Deployment update: the same Deployment and Service, a new pod
//     template (the tier runs no Deployment controller, so the rollout
//     itself is the cluster's ReplicaSets).
func TestHelmUpgradeAndRollback(t *testing.T) {
	env := operator.Shared(t)
	ctx := context.Background()
	eachHelm(t, env, "upgrade-", func(t *testing.T, h helmCLI, ns string, helm4 bool) {
		chart := chartDir(t)
		run := []string{chart, "--set", "profile=generic-single-node-8gpu", "--set", "user=alice"}

		h.must(t, append([]string{"install", "up"}, run...)...)
		cluster, err := env.RayClusterOf(ctx, ns, "up", 60*time.Second)
		require.NoError(t, err)
		var before rayv1.RayJob
		require.True(t, exists(t, env, &before, ns, "up"))

		out, err := h.run(t, append([]string{"upgrade", "up"}, append(run, "--set-json", `overrides=["grpo.max_num_steps=3"]`)...)...)
		require.Error(t, err, out)
		assert.Contains(t, out, "nemo-rl-run: helm upgrade of run up: RayJob "+ns+"/up exists")
		assert.Contains(t, out, "KubeRay starts a RayJob once and ignores a changed spec afterwards, so this upgrade would change nothing that runs. A change is a new run: helm install NEW-NAME")
		assert.Equal(t, []string{"1 deployed Install complete"}, h.history(t, "up"), "a refused upgrade records no revision")
		var after rayv1.RayJob
		require.True(t, exists(t, env, &after, ns, "up"))
		assert.Equal(t, before.Generation, after.Generation)
		assert.Equal(t, before.Spec.Entrypoint, after.Spec.Entrypoint)
		assert.NotContains(t, after.Spec.Entrypoint, "grpo.max_num_steps=3")

		// Rollback to revision 1, which the server holds. Helm 3 patches
		// (three-way merge): nothing differs, nothing changes. Helm 4
		// applies server-side and KubeRay's reconciler has since written
		// .spec.rayClusterSpec.workerGroupSpecs as its own field manager
		// (here the test binary's, in a cluster kuberay-operator): the
		// apply conflicts and the rollback fails, changing nothing.
		out, err = h.run(t, "rollback", "up", "1")
		if helm4 {
			require.Error(t, err, out)
			assert.Contains(t, out, "conflict occurred while applying object "+ns+"/up ray.io/v1, Kind=RayJob")
			assert.Contains(t, out, ".spec.rayClusterSpec.workerGroupSpecs")
		} else {
			require.NoError(t, err, out)
			hist := h.history(t, "up")
			require.Len(t, hist, 2)
			assert.Equal(t, "2 deployed Rollback to 1", hist[1])
		}
		require.True(t, exists(t, env, &after, ns, "up"))
		assert.Equal(t, before.Generation, after.Generation, "rolling back to what the server holds changes nothing")
		assert.Equal(t, before.Spec.Entrypoint, after.Spec.Entrypoint)

		upgradeRayClusterRefused(t, h, ns, run)

		// The RayJob is gone: the upgrade is a new run.
		require.NoError(t, env.Client.Delete(ctx, &after))
		gone(t, env, &rayv1.RayJob{}, ns, "up")
		h.must(t, append([]string{"upgrade", "up"}, append(run, "--set-json", `overrides=["grpo.max_num_steps=3"]`)...)...)
		var rerun rayv1.RayJob
		require.True(t, exists(t, env, &rerun, ns, "up"))
		assert.NotEqual(t, before.UID, rerun.UID, "a new RayJob")
		assert.Contains(t, rerun.Spec.Entrypoint, "grpo.max_num_steps=3")
		cluster3, err := env.RayClusterOf(ctx, ns, "up", 60*time.Second)
		require.NoError(t, err)
		assert.NotEqual(t, cluster, cluster3, "KubeRay started the new RayJob on a cluster of its own")

		// Rollback of the live re-run: no guard; the object is patched
		// back, KubeRay keeps what it started. Helm 4 conflicts with
		// KubeRay's fields as above unless forced.
		if helm4 {
			out, err = h.run(t, "rollback", "up", "1")
			require.Error(t, err, out)
			assert.Contains(t, out, "conflict occurred while applying object "+ns+"/up ray.io/v1, Kind=RayJob")
			h.must(t, "rollback", "up", "1", "--force-conflicts")
		} else {
			h.must(t, "rollback", "up", "1")
		}
		var rolled rayv1.RayJob
		require.True(t, exists(t, env, &rolled, ns, "up"))
		assert.Equal(t, rerun.UID, rolled.UID, "rollback patches, it does not re-create")
		assert.NotContains(t, rolled.Spec.Entrypoint, "grpo.max_num_steps=3", "the spec is revision 1's again")
		assert.Greater(t, rolled.Generation, rerun.Generation)
		// KubeRay ignores the change: the same cluster runs the
		// started job (give its reconciler a moment to act, if it would).
		time.Sleep(2 * time.Second)
		require.True(t, exists(t, env, &rolled, ns, "up"))
		assert.Equal(t, cluster3, rolled.Status.RayClusterName, "KubeRay did not restart the job for the rolled-back spec")
		h.must(t, "uninstall", "up")
		gone(t, env, &rayv1.RayJob{}, ns, "up")

		upgradeServicesRelease(t, env, h, ns, chart)
	})
}

// upgradeRayClusterRefused: in raycluster mode the upgrade guard names the
// RayCluster and the training RayJob, and refuses.
func upgradeRayClusterRefused(t *testing.T, h helmCLI, ns string, run []string) {
	// raycluster mode: the RayCluster is guarded too.
	rc := append(append([]string(nil), run...), "--set", "mode=raycluster")
	h.must(t, append([]string{"install", "uc"}, rc...)...)
	out, err := h.run(t, append([]string{"upgrade", "uc"}, append(rc, "--set", "runId=r2")...)...)
	require.Error(t, err, out)
	// Its RayCluster and its training RayJob both exist: both named.
	assert.Contains(t, out, "nemo-rl-run: helm upgrade of run uc: RayCluster "+ns+"/uc-training exists")
	assert.Contains(t, out, "RayJob "+ns+"/uc exists")
	assert.Contains(t, out, "KubeRay does not roll a RayCluster's pods when its template changes")
	h.must(t, "uninstall", "uc")
}

// upgradeServicesRelease: a services release upgrades and rolls back as
// any Deployment does (the same Deployment and Service, a new pod template).
func upgradeServicesRelease(t *testing.T, env *operator.Env, h helmCLI, ns, chart string) {
	// A services release upgrades as any Deployment does.
	svc := []string{chart, "--set", "profile=" + ultraProfile, "--set", "user=alice", "--set", "mode=services"}
	h.must(t, append([]string{"install", sandbox}, append(svc, "--set", "image=registry.example/skills-sandbox:v2")...)...)
	var dep1, dep2 appsv1.Deployment
	var svc1, svc2 corev1.Service
	require.True(t, exists(t, env, &dep1, ns, sandbox))
	require.True(t, exists(t, env, &svc1, ns, sandbox))
	h.must(t, append([]string{"upgrade", sandbox}, append(svc, "--set", "image=registry.example/skills-sandbox:v3")...)...)
	require.True(t, exists(t, env, &dep2, ns, sandbox))
	require.True(t, exists(t, env, &svc2, ns, sandbox))
	assert.Equal(t, dep1.UID, dep2.UID)
	assert.Equal(t, svc1.UID, svc2.UID)
	assert.Equal(t, "registry.example/skills-sandbox:v3", dep2.Spec.Template.Spec.Containers[0].Image)
	assert.Greater(t, dep2.Generation, dep1.Generation, "a new pod template: the Deployment controller rolls it out")
	assert.Equal(t, svc1.Spec, svc2.Spec)
	h.must(t, "rollback", sandbox, "1")
	require.True(t, exists(t, env, &dep2, ns, sandbox))
	assert.Equal(t, "registry.example/skills-sandbox:v2", dep2.Spec.Template.Spec.Containers[0].Image, "a services release rolls back as a Deployment does")
	h.must(t, "uninstall", sandbox)
}

// eachHelm runs body once under the pinned Helm 3 and once under Helm 4,
// each in a privileged namespace of its own: prefix + "helm3" or "helm4".
func eachHelm(t *testing.T, env *operator.Env, prefix string, body func(t *testing.T, h helmCLI, ns string, helm4 bool)) {
	t.Helper()
	kc := kubeconfig(t, env)
	for _, tool := range []string{"NRL_HELM3", "NRL_HELM4"} {
		t.Run(tool, func(t *testing.T) {
			ns := prefix + strings.ToLower(strings.TrimPrefix(tool, "NRL_"))
			require.NoError(t, env.CreateNamespace(context.Background(), ns, "privileged"))
			body(t, newHelm(t, tool, kc, ns), ns, tool == "NRL_HELM4")
		})
	}
}
