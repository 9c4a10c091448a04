package kueue

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

func TestMultiKueueSetupReaders(t *testing.T) {
	u := func(o map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: o} }
	t.Run("KubeconfigSecret", func(t *testing.T) {
		for _, tc := range []struct {
			name              string
			source            map[string]any
			secret, elsewhere string
		}{
			{"a Secret", map[string]any{"kubeConfig": map[string]any{"locationType": "Secret", "location": "w1-kc"}}, "w1-kc", ""},
			{"Secret by default", map[string]any{"kubeConfig": map[string]any{"location": "w1-kc"}}, "w1-kc", ""},
			{"a path", map[string]any{"kubeConfig": map[string]any{"locationType": "Path", "location": "/etc/kc"}}, "", "locationType Path /etc/kc"},
			{"a ClusterProfile", map[string]any{"clusterProfileRef": map[string]any{"name": "p"}}, "", "ClusterProfile p"},
			{"nothing", nil, "", "no spec.clusterSource"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				secret, elsewhere := KubeconfigSecret(u(map[string]any{"spec": map[string]any{"clusterSource": tc.source}}))
				assert.Equal(t, tc.secret, secret)
				assert.Equal(t, tc.elsewhere, elsewhere)
			})
		}
	})
	t.Run("MultiKueueCheck", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			spec   map[string]any
			mk     bool
			config string
		}{
			{"MultiKueue's", map[string]any{"controllerName": "kueue.x-k8s.io/multikueue",
				"parameters": map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "c"}}, true, "c"},
			{"parameters of another kind", map[string]any{"controllerName": "kueue.x-k8s.io/multikueue",
				"parameters": map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "c"}}, true, ""},
			{"another controller", map[string]any{"controllerName": "kueue.x-k8s.io/provisioning-request"}, false, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mk, config := MultiKueueCheck(u(map[string]any{"spec": tc.spec}))
				assert.Equal(t, tc.mk, mk)
				assert.Equal(t, tc.config, config)
			})
		}
	})
	t.Run("Active, bounded", func(t *testing.T) {
		active, why := Active(u(map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Active", "status": "False", "reason": "BadConfig", "message": strings.Repeat("x", 5000)}}}}))
		assert.False(t, active)
		assert.True(t, strings.HasPrefix(why, "BadConfig: xxx"), why)
		assert.LessOrEqual(t, len(why), 2*scheduler.MaxReported+10)
		active, why = Active(u(map[string]any{}))
		assert.False(t, active)
		assert.Equal(t, "no Active condition yet", why)
	})
	assert.Equal(t, []string{"a", "b"}, QueueChecks(u(map[string]any{"spec": map[string]any{"admissionChecksStrategy": map[string]any{
		"admissionChecks": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}, map[string]any{}}}}})))
}

func activeStatus(status string) map[string]any {
	return map[string]any{"conditions": []any{map[string]any{"type": "Active", "status": status, "reason": "R", "message": "said by the test"}}}
}

// soundManager is a MultiKueue manager whose LocalQueue a/lab dispatches
// to workers w1 and w2, each Active with its kubeconfig Secret, changed by
// edit.
func soundManager(edit func(gets map[string]map[string]any)) map[string]map[string]any {
	kv := vocab.KueueAPIVersion
	gets := map[string]map[string]any{
		pathOf(LocalQueues, "a", "lab"): obj(kv, "LocalQueue", map[string]any{"name": "lab", "namespace": "a"},
			map[string]any{"spec": map[string]any{"clusterQueue": "cq"}}),
		pathOf(ClusterQueues, "", "cq"): obj(kv, "ClusterQueue", map[string]any{"name": "cq"}, map[string]any{"spec": map[string]any{
			"admissionChecksStrategy": map[string]any{"admissionChecks": []any{map[string]any{"name": "mk"}}}}}),
		pathOf(AdmissionChecks, "", "mk"): obj(kv, "AdmissionCheck", map[string]any{"name": "mk"}, map[string]any{
			"spec": map[string]any{"controllerName": vocab.MultiKueueControllerName,
				"parameters": map[string]any{"apiGroup": vocab.KueueGroup, "kind": "MultiKueueConfig", "name": "mkc"}},
			"status": activeStatus("True")}),
		pathOf(MultiKueueConfigs, "", "mkc"): obj(kv, "MultiKueueConfig", map[string]any{"name": "mkc"},
			map[string]any{"spec": map[string]any{"clusters": []any{"w1", "w2"}}}),
	}
	for _, w := range []string{"w1", "w2"} {
		gets[pathOf(MultiKueueClusters, "", w)] = obj(kv, "MultiKueueCluster", map[string]any{"name": w}, map[string]any{
			"spec":   map[string]any{"clusterSource": map[string]any{"kubeConfig": map[string]any{"locationType": "Secret", "location": w + "-kc"}}},
			"status": activeStatus("True")})
		gets[pathOf(secrets, SystemNamespace, w+"-kc")] = obj("v1", "Secret", map[string]any{"name": w + "-kc"}, nil)
	}
	if edit != nil {
		edit(gets)
	}
	return gets
}

// The manager's setup behind the run's LocalQueue is judged object by
// object, in the order MultiKueue reaches them, and says which workers it
// dispatches to; a kubeconfig Secret is only asked whether it exists
// (fakeReader refuses a Get of a Secret).
func TestPreflightDispatch(t *testing.T) {
	const ok1, ok2 = "ok MultiKueueCluster w1: Active", "ok Secret w1-kc: exists"
	head := []string{"ok ClusterQueue cq: carries AdmissionCheck mk", "ok AdmissionCheck mk: Active", "ok MultiKueueConfig mkc: lists w1, w2", ok1, ok2}
	unlisted := "MultiKueueConfig mkc does not list it: MultiKueue never dispatches there"
	for _, tc := range []struct {
		name  string
		edit  func(map[string]map[string]any)
		deny  string
		lines []string
		// named is Workers.Named; nil: the setup names no worker.
		named map[string]string
	}{
		{name: "sound", lines: append(head, "ok MultiKueueCluster w2: Active", "ok Secret w2-kc: exists"),
			named: map[string]string{"w1": "", "w2": ""}},
		{name: "w2 not Active", edit: func(g map[string]map[string]any) {
			g[pathOf(MultiKueueClusters, "", "w2")]["status"] = activeStatus("False")
		},
			lines: append(head, "missing MultiKueueCluster w2: not Active (R: said by the test): MultiKueue does not dispatch there", "ok Secret w2-kc: exists"),
			named: map[string]string{"w1": "", "w2": "MultiKueueCluster w2 is not Active on the manager: R: said by the test"}},
		{name: "w2 absent", edit: func(g map[string]map[string]any) { delete(g, pathOf(MultiKueueClusters, "", "w2")) },
			lines: append(head, "missing MultiKueueCluster w2: not found"),
			named: map[string]string{"w1": "", "w2": "MultiKueueCluster w2 is not Active on the manager: MultiKueueCluster missing not found"}},
		{name: "a kubeconfig Secret missing", edit: func(g map[string]map[string]any) { delete(g, pathOf(secrets, SystemNamespace, "w2-kc")) },
			lines: append(head, "ok MultiKueueCluster w2: Active", "missing Secret w2-kc: not found in kueue-system"),
			named: map[string]string{"w1": "", "w2": ""}},
		{name: "a kubeconfig from a ClusterProfile", edit: func(g map[string]map[string]any) {
			g[pathOf(MultiKueueClusters, "", "w2")]["spec"] = map[string]any{"clusterSource": map[string]any{"clusterProfileRef": map[string]any{"name": "p"}}}
		}, lines: append(head, "ok MultiKueueCluster w2: Active; its kubeconfig comes from ClusterProfile p (not checked)"),
			named: map[string]string{"w1": "", "w2": ""}},
		{name: "the config refused", deny: pathOf(MultiKueueConfigs, "", "mkc"),
			lines: []string{head[0], head[1], "cannot tell MultiKueueConfig mkc: no permission to read it: access refused"}},
		{name: "the config lists no cluster", edit: func(g map[string]map[string]any) { g[pathOf(MultiKueueConfigs, "", "mkc")]["spec"] = map[string]any{} },
			lines: []string{head[0], head[1], "missing MultiKueueConfig mkc: lists no cluster"}, named: map[string]string{}},
		{name: "the check not Active, naming no config", edit: func(g map[string]map[string]any) {
			g[pathOf(AdmissionChecks, "", "mk")]["status"] = activeStatus("False")
			g[pathOf(AdmissionChecks, "", "mk")]["spec"].(map[string]any)["parameters"] = nil
		}, lines: []string{head[0], "missing AdmissionCheck mk: spec.parameters name no MultiKueueConfig"}},
		{name: "no MultiKueue check", edit: func(g map[string]map[string]any) {
			g[pathOf(AdmissionChecks, "", "mk")]["spec"].(map[string]any)["controllerName"] = "example.com/other"
		}, lines: []string{"missing ClusterQueue cq: carries no AdmissionCheck with controllerName " + vocab.MultiKueueControllerName}},
		{name: "the check unread", edit: func(g map[string]map[string]any) { delete(g, pathOf(AdmissionChecks, "", "mk")) },
			lines: []string{"missing ClusterQueue cq: carries no AdmissionCheck with controllerName " + vocab.MultiKueueControllerName +
				" (spec.admissionChecksStrategy): Kueue admits the run on the manager, where no KubeRay runs it; AdmissionCheck mk missing not found"}},
		{name: "the ClusterQueue absent", edit: func(g map[string]map[string]any) { delete(g, pathOf(ClusterQueues, "", "cq")) },
			lines: []string{"missing ClusterQueue cq: not found"}},
		{name: "no LocalQueue: its own line says so", edit: func(g map[string]map[string]any) { delete(g, pathOf(LocalQueues, "a", "lab")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := scheduler.PreflightRun{Queues: map[string]string{"a/RayJob/j": "lab", "a/RayCluster/c": "lab"}}
			w, lines, err := Integration{}.PreflightDispatch(context.Background(), fakeReader{deny: tc.deny, gets: soundManager(tc.edit)}, run)
			require.NoError(t, err)
			require.Len(t, lines, len(tc.lines))
			for i, l := range lines {
				assert.True(t, strings.HasPrefix(string(l.State)+" "+l.Kind+" "+l.Name+": "+l.Detail, tc.lines[i]), "line %d: %s %s %s: %s", i, l.State, l.Kind, l.Name, l.Detail)
			}
			assert.Equal(t, tc.named != nil, w.Known)
			if tc.named != nil {
				assert.Equal(t, tc.named, w.Named)
				assert.Equal(t, unlisted, w.Unlisted)
			}
		})
	}
}
