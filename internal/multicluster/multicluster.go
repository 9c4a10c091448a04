// Package multicluster runs a MultiKueue fleet in one test process: a
// manager cluster (a real kube-apiserver and Kueue v0.17.0's manager with
// its multiKueue configuration, no KubeRay: it only queues the job object)
// and worker clusters (each a kube-apiserver, Kueue's manager and KubeRay
// v1.5.0's reconcilers in-process, as internal/kueue's tier). It installs
// what a platform team installs on the manager: one kubeconfig Secret per
// worker in kueue-system (key "kubeconfig", the worker's API server with
// embedded client certificate, which Kueue's validation requires; reached
// through a relay the tests can cut, lost.go), a
// MultiKueueCluster per worker naming it, a MultiKueueConfig listing them
// and the AdmissionCheck whose controller is MultiKueue's.
//
// Test-only, as internal/kueue.
package multicluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// Check is the name of the manager's AdmissionCheck and of the
// MultiKueueConfig it names.
const Check = "nrl-multikueue"

// User is who the manager's Kueue is to a worker's API server (the
// kubeconfig in the worker's Secret authenticates it).
const User = "system:serviceaccount:kueue-system:multikueue-manager"

// Cluster is one cluster of the fleet.
type Cluster struct {
	// Name is the worker's MultiKueueCluster name ("manager" for the manager).
	Name  string
	Env   *operator.Env
	Kueue *kueue.Kueue
}

// Fleet is a running manager and its workers.
type Fleet struct {
	Manager Cluster
	Workers []Cluster
	// Clusters is how long the clusters took to start (API servers,
	// KubeRay, Kueue; in parallel); Up until MultiKueue was connected too.
	Clusters, Up time.Duration
	// relays carry the manager's requests to each worker (Lose).
	relays []*relay
}

// Start starts the manager and workers worker clusters (in parallel),
// installs the MultiKueue objects on the manager and waits until the
// AdmissionCheck is active (every worker connected).
func Start(assets, dir string, workers int) (*Fleet, error) {
	begin := time.Now()
	f := &Fleet{Workers: make([]Cluster, workers)}
	errs := make([]error, workers+1)
	var wg sync.WaitGroup
	start := func(c *Cluster, i int, name string, bare bool) {
		defer wg.Done()
		c.Name = name
		opts := apiserver.Options{AggregatorRouting: true}
		var err error
		if bare {
			c.Env, err = operator.StartBare(assets, opts)
		} else {
			c.Env, err = operator.StartWith(assets, opts)
		}
		if err != nil {
			errs[i] = fmt.Errorf("cluster %s: %w", name, err)
			return
		}
		c.Kueue, err = kueue.StartWith(c.Env, dir, kueue.Options{MultiKueue: bare})
		if err != nil {
			errs[i] = fmt.Errorf("cluster %s: %w", name, err)
		}
	}
	wg.Add(workers + 1)
	go start(&f.Manager, 0, "manager", true)
	for i := range f.Workers {
		go start(&f.Workers[i], i+1, fmt.Sprintf("worker-%d", i+1), false)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, f.Stop())
	}
	f.Clusters = time.Since(begin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.connect(ctx); err != nil {
		return nil, errors.Join(err, f.Stop())
	}
	f.Up = time.Since(begin)
	return f, nil
}

// connect installs, on the manager, a kubeconfig Secret and a
// MultiKueueCluster per worker, the MultiKueueConfig and the
// AdmissionCheck, and waits for the AdmissionCheck to be active.
func (f *Fleet) connect(ctx context.Context) error {
	m := f.Manager.Env
	var names []any
	for _, w := range f.Workers {
		_, direct, err := w.Env.Server.AsUser(User)
		if err != nil {
			return err
		}
		r, kc, err := viaRelay(direct)
		if err != nil {
			return fmt.Errorf("the kubeconfig of %s: %w", w.Name, err)
		}
		f.relays = append(f.relays, r)
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: kueue.Namespace, Name: w.Name + "-kubeconfig"},
			Data:       map[string][]byte{"kubeconfig": kc},
		}
		if err := m.Client.Create(ctx, secret); err != nil {
			return fmt.Errorf("the kubeconfig Secret of %s: %w", w.Name, err)
		}
		if err := create(ctx, m, map[string]any{
			"apiVersion": vocab.KueueAPIVersion, "kind": "MultiKueueCluster", "metadata": map[string]any{"name": w.Name},
			"spec": map[string]any{"clusterSource": map[string]any{"kubeConfig": map[string]any{
				"locationType": "Secret", "location": secret.Name}}},
		}); err != nil {
			return err
		}
		names = append(names, w.Name)
	}
	for _, o := range []map[string]any{
		{"apiVersion": vocab.KueueAPIVersion, "kind": "MultiKueueConfig", "metadata": map[string]any{"name": Check},
			"spec": map[string]any{"clusters": names}},
		{"apiVersion": vocab.KueueAPIVersion, "kind": "AdmissionCheck", "metadata": map[string]any{"name": Check},
			"spec": map[string]any{"controllerName": vocab.MultiKueueControllerName, "parameters": map[string]any{
				"apiGroup": vocab.KueueGroup, "kind": "MultiKueueConfig", "name": Check}}},
	} {
		if err := create(ctx, m, o); err != nil {
			return err
		}
	}
	return operator.Wait(ctx, 90*time.Second, "AdmissionCheck "+Check+" active (MultiKueue connected to every worker)",
		func(ctx context.Context) (bool, string, error) {
			return activeCondition(ctx, m, "AdmissionCheck", Check)
		})
}

// Queue sets up namespace ns for runs on the whole fleet: the namespace
// on every cluster, enforcing Pod Security level podSecurity; on each
// worker the ClusterQueue cq with gpus[i] nvidia.com/gpu and the
// LocalQueue local (kueue.Queue); on the manager a ClusterQueue cq holding
// the workers' quota together and gated by the MultiKueue AdmissionCheck,
// and the LocalQueue local. It waits until the manager's ClusterQueue is
// active.
func (f *Fleet) Queue(ctx context.Context, ns, podSecurity, local, cq string, gpus []int, timeout time.Duration) error {
	if len(gpus) != len(f.Workers) {
		return fmt.Errorf("queue: %d GPU quotas for %d workers", len(gpus), len(f.Workers))
	}
	m := f.Manager.Env
	for _, c := range append([]Cluster{f.Manager}, f.Workers...) {
		if err := c.Env.CreateNamespace(ctx, ns, podSecurity); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	total := 0
	for i, w := range f.Workers {
		if err := kueue.Queue(ctx, w.Env, ns, local, cq, fmt.Sprint(gpus[i]), timeout); err != nil {
			return fmt.Errorf("%s: %w", w.Name, err)
		}
		total += gpus[i]
	}
	for _, o := range []map[string]any{
		{"apiVersion": vocab.KueueAPIVersion, "kind": "ResourceFlavor", "metadata": map[string]any{"name": kueue.Flavor}},
		{"apiVersion": vocab.KueueAPIVersion, "kind": "ClusterQueue", "metadata": map[string]any{"name": cq},
			"spec": map[string]any{
				"namespaceSelector": map[string]any{},
				"admissionChecksStrategy": map[string]any{"admissionChecks": []any{
					map[string]any{"name": Check}}},
				"resourceGroups": []any{map[string]any{
					"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
					"flavors": []any{map[string]any{"name": kueue.Flavor, "resources": []any{
						map[string]any{"name": "cpu", "nominalQuota": "2000"},
						map[string]any{"name": "memory", "nominalQuota": "200Ti"},
						map[string]any{"name": "nvidia.com/gpu", "nominalQuota": fmt.Sprint(total)},
					}}},
				}},
			}},
		{"apiVersion": vocab.KueueAPIVersion, "kind": "LocalQueue", "metadata": map[string]any{"name": local, "namespace": ns},
			"spec": map[string]any{"clusterQueue": cq}},
	} {
		if err := create(ctx, m, o); err != nil {
			return err
		}
	}
	return operator.Wait(ctx, timeout, "the manager's ClusterQueue "+cq+" active", func(ctx context.Context) (bool, string, error) {
		return activeCondition(ctx, m, "ClusterQueue", cq)
	})
}

// create creates o on env unless it exists.
func create(ctx context.Context, env *operator.Env, o map[string]any) error {
	u := &unstructured.Unstructured{Object: o}
	if err := env.Server.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// activeCondition reads the Active condition of the cluster-scoped Kueue
// object kind/name.
func activeCondition(ctx context.Context, env *operator.Env, kind, name string) (bool, string, error) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(vocab.KueueAPIVersion)
	u.SetKind(kind)
	if err := env.Server.Client.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		return false, "", err
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Active" {
			return m["status"] == "True", fmt.Sprintf("Active=%v %v: %v", m["status"], m["reason"], m["message"]), nil
		}
	}
	return false, "no Active condition", nil
}

// Stop stops every started cluster.
func (f *Fleet) Stop() error {
	var errs []error
	for _, r := range f.relays {
		r.cut()
	}
	for _, c := range append([]Cluster{f.Manager}, f.Workers...) {
		if c.Kueue != nil {
			errs = append(errs, c.Kueue.Stop())
		}
		if c.Env != nil {
			errs = append(errs, c.Env.Stop())
		}
	}
	return errors.Join(errs...)
}

var shared = fixtures.Env[*Fleet]{
	Name: "the multicluster tier",
	Start: func(t testing.TB) (*Fleet, error) {
		assets, err := apiserver.Assets()
		if err != nil {
			return nil, fixtures.Missing(err)
		}
		dir, err := kueue.Dir()
		if err != nil {
			return nil, fixtures.Missing(err)
		}
		f, err := Start(assets, dir, 2)
		if err == nil {
			t.Logf("MultiKueue fleet (manager and %d workers, Kueue %s): clusters up in %s, MultiKueue connected in %s",
				len(f.Workers), kueue.Version, f.Clusters.Round(time.Millisecond), f.Up.Round(time.Millisecond))
		}
		return f, err
	},
	Stop: (*Fleet).Stop,
}

// OptIn names the variable that runs the tier (make multicluster-test sets
// it): three API servers and three Kueue managers cost about 1.5 CPU-minutes,
// which cold CI, already over its budget, does not have
// (docs/multicluster.md, "The tier").
const OptIn = "NRL_MULTICLUSTER"

// Shared is the test package's fleet, started once (a manager and two
// workers). It skips unless OptIn is 1; then it is skipped or failed as
// fixtures.Env says (NRL_REQUIRE_APISERVER=1: a missing part fails).
func Shared(t testing.TB) *Fleet {
	t.Helper()
	if os.Getenv(OptIn) != "1" {
		t.Skipf("opt-in: %s=1 (make multicluster-test) starts a manager and two worker clusters", OptIn)
	}
	return shared.Get(t)
}

// StopShared stops the fleet if one was started; call it from TestMain
// after m.Run.
func StopShared() error { return shared.StopStarted() }
