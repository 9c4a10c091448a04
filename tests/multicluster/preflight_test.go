package multicluster_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/multicluster"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// preflight on the manager with both workers, before the run is applied:
// the manager's MultiKueue setup is sound, worker-1 holds everything the
// run needs and 16 GPUs of quota, worker-2 the same but 8 GPUs of quota,
// less than the run's 16: preflight names worker-1 as the one that can
// take the run and says why worker-2 cannot. A worker the manager's
// MultiKueueConfig does not list cannot either. No kubeconfig Secret's
// data is printed.
func TestPreflightAcrossClusters(t *testing.T) {
	f := multicluster.Shared(t)
	ctx := context.Background()
	ns := "mk-preflight"
	r := render(t, "mk-pf", ns)
	require.NoError(t, f.Queue(ctx, ns, r.podSecurity, "lab-queue", "lab-preflight", []int{16, 8}, waitFor))
	for _, w := range f.Workers {
		everythingTheRunNeeds(t, w.Env, ns, r.docs)
	}
	dir := t.TempDir()
	kc, err := f.Kubeconfig(dir)
	require.NoError(t, err)
	stream, err := emit.Stream(r.docs)
	require.NoError(t, err)
	file := filepath.Join(dir, "run.yaml")
	require.NoError(t, os.WriteFile(file, stream, 0o600))
	args := []string{"preflight", "-f", file, "--kubeconfig", kc, "--context", f.Manager.Name}
	for _, w := range f.Workers {
		args = append(args, "--worker", w.Name+"="+w.Name)
	}

	code, out, errs := clirun.Run(args...)
	t.Logf("preflight across the fleet:\n%s", out)
	require.Equal(t, 0, code, "a worker can take the run: exit 0\nstdout:\n%s\nstderr:\n%s", out, errs)
	for _, want := range []string{
		"ok           ClusterQueue lab-preflight", "carries AdmissionCheck " + multicluster.Check,
		"ok           AdmissionCheck " + multicluster.Check, "ok           MultiKueueConfig " + multicluster.Check,
		"ok           MultiKueueCluster worker-1", "ok           Secret kueue-system/worker-2-kubeconfig",
		"\nWORKER worker-1\n", "ok           LocalQueue " + ns + "/lab-queue", "needs 16 nvidia.com/gpu; 16 of 16 free",
		"worker worker-1 can take the run now",
		"worker worker-2 cannot take the run now:\n  LocalQueue " + ns + "/lab-queue: ClusterQueue lab-preflight: ",
		"needs 16 nvidia.com/gpu; 8 of 8 free: more than the whole nominal quota, and ClusterQueue lab-preflight is in no cohort to borrow from",
		"1 of 2 workers can take the run now",
	} {
		assert.Contains(t, out, want)
	}
	manager, _, _ := strings.Cut(out, "\nWORKER ")
	assert.NotContains(t, manager, "ExtendedResource", "nothing runs on the manager: its section asks nothing of Pods")
	for _, secret := range []string{"client-key-data", "BEGIN", "certificate-authority-data"} {
		assert.NotContains(t, out+errs, secret, "a kubeconfig Secret's data is never read, let alone printed")
	}

	// The same as JSON, and a worker the MultiKueueConfig does not list.
	code, out, errs = clirun.Run(append(args, "--worker", "worker-9="+f.Workers[0].Name, "-o", "json")...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	var rep struct {
		Takers  []string `json:"canTakeTheRun"`
		Workers []struct {
			Name   string   `json:"name"`
			WhyNot []string `json:"whyNot"`
		} `json:"workers"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, []string{"worker-1"}, rep.Takers)
	require.Len(t, rep.Workers, 3)
	assert.Contains(t, strings.Join(rep.Workers[2].WhyNot, "\n"), "MultiKueueConfig "+multicluster.Check+" does not list it")

	// No worker that can take it: exit 1.
	code, out, _ = clirun.Run(args[0], args[1], args[2], args[3], args[4], args[5], args[6], "--worker", "worker-2=worker-2")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "0 of 1 workers can take the run now")
}

// everythingTheRunNeeds makes on env what the run's prerequisites name
// (fn/analyse/prereq), as a platform team would: ServiceAccounts, Bound
// PVCs, Secrets, ConfigMaps, DeviceClasses, a DeviceClass serving the
// GPUs (DRA extended resources) and a stand-in for KAI's Queue CRD with
// the run's queue. The LocalQueue is Fleet.Queue's.
func everythingTheRunNeeds(t *testing.T, env *operator.Env, ns string, docs []rendered.Doc) {
	t.Helper()
	prerequisites(t, env, ns, docs)
	objs := make([]any, len(docs))
	for i := range docs {
		objs[i] = docs[i]
	}
	pre, err := prereq.FromObjects(objs)
	require.NoError(t, err)
	ctx := context.Background()
	create := func(o client.Object) {
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err, "%T %s", o, o.GetName())
		}
	}
	for _, p := range pre {
		switch p.Kind {
		case "PersistentVolumeClaim":
			var pvc corev1.PersistentVolumeClaim
			require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: p.Name}, &pvc))
			// No PV controller runs here: the test binds it as the controller would.
			pvc.Status.Phase = corev1.ClaimBound
			require.NoError(t, env.Client.Status().Update(ctx, &pvc))
		case "Secret":
			create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name}})
		case "ConfigMap":
			create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name}})
		case "DeviceClass":
			create(&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: p.Name}})
		case prereq.ExtendedResourceKind:
			name := p.Name
			create(&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(p.Name, "/", "-") + ".example.com"},
				Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: &name}})
		case "Queue":
			kaiQueue(t, env, p.Name)
		}
	}
}

// kaiQueue installs a minimal stand-in for KAI's Queue CRD
// (scheduling.run.ai/v2, cluster-scoped) and the queue.
func kaiQueue(t *testing.T, env *operator.Env, name string) {
	t.Helper()
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "queues.scheduling.run.ai"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "scheduling.run.ai", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "queues", Singular: "queue", Kind: "Queue", ListKind: "QueueList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v2", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true)}}}},
		},
	}
	data, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	require.NoError(t, err)
	u := &unstructured.Unstructured{Object: data}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	if err := env.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	q := &unstructured.Unstructured{}
	q.SetAPIVersion("scheduling.run.ai/v2")
	q.SetKind("Queue")
	q.SetName(name)
	require.NoError(t, operator.Wait(ctx, 30*time.Second, "KAI queue "+name+" created", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Create(ctx, q.DeepCopy())
		if err == nil || apierrors.IsAlreadyExists(err) {
			return true, "", nil
		}
		return false, err.Error(), nil
	}))
}
