package chartgen_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/runcheck"
)

// liveCluster is a ClientProvider over a fake dynamic client holding objs:
// what the chart's lookup sees during helm upgrade.
type liveCluster struct{ client *dynfake.FakeDynamicClient }

var rayGVR = map[string]schema.GroupVersionResource{
	"RayJob":     {Group: "ray.io", Version: "v1", Resource: "rayjobs"},
	"RayCluster": {Group: "ray.io", Version: "v1", Resource: "rayclusters"},
}

func newLiveCluster(objs ...runtime.Object) liveCluster {
	lists := map[schema.GroupVersionResource]string{}
	for kind, gvr := range rayGVR {
		lists[gvr] = kind + "List"
	}
	return liveCluster{dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, objs...)}
}

func (l liveCluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	return l.client.Resource(rayGVR[kind]), true, nil
}

// helmUpgrade renders the chart as helm upgrade does (IsUpgrade, lookup
// against the cluster).
func helmUpgrade(t *testing.T, vals map[string]any, live liveCluster) error {
	t.Helper()
	c := loadChart(t)
	caps := *chartutil.DefaultCapabilities
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.34.0", Major: "1", Minor: "34"}
	rv, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: "my-run", Namespace: "team-a", Revision: 2, IsUpgrade: true}, &caps)
	require.NoError(t, err)
	_, err = engine.RenderWithClientProvider(c, rv, live)
	return err
}

// TestUpgradeRefused: helm upgrade of a run whose RayJob (rayjob mode) or
// RayClusters (raycluster mode) exist fails and says why and what to do;
// with none in the cluster (a run already uninstalled by hand) it renders.
func TestUpgradeRefused(t *testing.T) {
	for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
		r := run{profile: "generic-single-node-8gpu", mode: mode, user: "ann", namespace: "team-a"}
		out, _, err := helmTemplate(loadChart(t), r.values(t), "team-a")
		require.NoError(t, err)
		objs, err := runcheck.Parse([]byte(out))
		require.NoError(t, err)
		var live []runtime.Object
		var names []string
		for _, o := range objs {
			if _, ray := rayGVR[o.Kind]; !ray {
				continue
			}
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ray.io/v1", "kind": o.Kind,
				"metadata": map[string]any{"name": o.Name, "namespace": o.Namespace}}}
			if o.Kind == "RayJob" {
				u.Object["status"] = map[string]any{"jobDeploymentStatus": "Running"}
			}
			live = append(live, u)
			names = append(names, o.Kind+" team-a/"+o.Name+" exists")
		}
		require.NotEmpty(t, live)
		vals := r.values(t)
		vals["image"] = "registry.example/nemo-rl:v2"
		err = helmUpgrade(t, vals, newLiveCluster(live...))
		require.Error(t, err, mode)
		for _, n := range names {
			assert.Contains(t, err.Error(), n, "%s: the error names every live RayJob and RayCluster of the run", mode)
		}
		assert.Contains(t, err.Error(), "A change is a new run: helm install NEW-NAME", mode)
		assert.Contains(t, err.Error(), "(Running)", "a RayJob's state")
		assert.Contains(t, err.Error(), "KubeRay starts a RayJob once and ignores a changed spec afterwards")
		if mode == runparams.RayCluster {
			require.Len(t, names, 2)
			assert.Contains(t, err.Error(), "KubeRay does not roll a RayCluster's pods when its template changes")
		}
		assert.Equal(t, 1, strings.Count(err.Error(), "nemo-rl-run: helm upgrade of run"), "one message")
		require.NoError(t, helmUpgrade(t, vals, newLiveCluster()), "nothing of the run in the cluster: the upgrade renders")
	}
}
