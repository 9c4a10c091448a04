// Package operator runs KubeRay v1.5.0's own RayCluster and RayJob
// reconcilers (package controllers/ray, the code the kuberay-operator
// binary runs) against the real kube-apiserver and etcd of
// internal/apiserver, started as a cluster's are: ServiceAccount and
// PodSecurity admission on. What a test applies is reconciled by KubeRay
// for real: it creates the RayCluster of a RayJob, the head and worker
// Pods and the head Service, and the API server admits or refuses each as
// it would in a cluster. There is no kubelet, scheduler or controller
// manager: Pods stay Pending until a test marks them Running and Ready
// (MarkRunningReady, as KubeRay's own envtest suite does), and the Ray
// dashboard is a recording stand-in (Dashboard).
//
// Test-only: only _test.go files import this package, so the CLI never
// links KubeRay's controllers (TestCLIDoesNotLinkTheOperator). A test
// package shares one Env: tests call Shared(t), and the package's
// TestMain calls StopShared after m.Run.
package operator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	ray "github.com/ray-project/kuberay/ray-operator/controllers/ray"
	rayutils "github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/policy"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
)

// ReconcileConcurrency is how many objects each reconciler works on at
// once. kuberay-operator's default is 1; tests put each run in its own
// namespace and reconcile them in parallel.
const ReconcileConcurrency = 4

// UserAgent is kuberay-operator v1.5.0's (its main.go: "kuberay-operator/"
// and its version); the API server takes the part before "/" as the field
// manager of KubeRay's writes.
const UserAgent = "kuberay-operator/v1.5.0"

// User is who KubeRay's reconcilers are to the API server: the username of
// kuberay-operator's ServiceAccount in a default install
// (policy.DefaultKubeRayUser).
const User = policy.DefaultKubeRayUser

// Env is a running API server with KubeRay's reconcilers attached.
type Env struct {
	// Server is the API server (its Client has no KubeRay types).
	Server *apiserver.Server
	// Client reads and writes typed objects, KubeRay's included, directly
	// (no cache: what a test reads is what the server holds).
	Client client.Client
	// Dashboard is the Ray dashboard KubeRay's RayJob reconciler talks to.
	Dashboard *Dashboard
	// Up is how long the API server took to be ready (CRDs served);
	// Reconciling how long until KubeRay's caches had synced too.
	Up, Reconciling time.Duration

	cancel context.CancelFunc
	done   chan error
}

// Scheme is the scheme of the Env's clients and KubeRay's manager:
// client-go's built-in types and KubeRay's, as kuberay-operator's main
// registers them (a fresh scheme, so the process-wide one stays as it was).
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("client-go scheme: %w", err)
	}
	if err := rayv1.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("KubeRay scheme: %w", err)
	}
	return s, nil
}

// StartWith starts an API server from the binaries in assets (see
// apiserver.Assets) with cluster admission and opts, then KubeRay's
// RayCluster and RayJob reconcilers against it, and returns once their
// caches have synced.
func StartWith(assets string, opts apiserver.Options) (*Env, error) {
	begin := time.Now()
	opts.ClusterAdmission = true
	srv, err := apiserver.StartWith(assets, opts)
	if err != nil {
		return nil, err
	}
	env, err := attach(srv)
	if err != nil {
		return nil, errors.Join(err, srv.Stop())
	}
	env.Up, env.Reconciling = srv.Ready, time.Since(begin)
	return env, nil
}

// attach starts KubeRay's manager against srv, set up as kuberay-operator's
// main sets it up minus what a test does not want: no metrics or health
// listeners, no leader election, no webhooks, no batch scheduler plugins
// (KubeRay's default: our runs name their scheduler in the pod template).
func attach(srv *apiserver.Server) (*Env, error) {
	setLogger()
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	jobs, err := submitterJobSelector()
	if err != nil {
		return nil, err
	}
	// KubeRay authenticates as its ServiceAccount's username, the one the
	// started-run policy lets through by default (tests/kueue,
	// TestStartedRunPolicy). kuberay-operator's main sets this user agent,
	// so the API server records its writes under field manager
	// "kuberay-operator" as in a cluster (not under this test binary's name).
	userCfg, _, err := srv.AsUser(User)
	if err != nil {
		return nil, err
	}
	mgrCfg := rest.CopyConfig(userCfg)
	mgrCfg.UserAgent = UserAgent
	mgr, err := ctrl.NewManager(mgrCfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{ByObject: map[client.Object]cache.ByObject{&batchv1.Job{}: {Label: jobs}}},
		// Controller names are process-wide in controller-runtime; a
		// second Env in the same test binary reuses KubeRay's.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("KubeRay's manager: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	dash := NewDashboard()
	if err := ray.NewReconciler(ctx, mgr, ray.RayClusterReconcilerOptions{}).SetupWithManager(mgr, ReconcileConcurrency); err != nil {
		cancel()
		return nil, fmt.Errorf("KubeRay's RayCluster reconciler: %w", err)
	}
	if err := ray.NewRayJobReconciler(ctx, mgr, ray.RayJobReconcilerOptions{}, dash).SetupWithManager(mgr, ReconcileConcurrency); err != nil {
		cancel()
		return nil, fmt.Errorf("KubeRay's RayJob reconciler: %w", err)
	}
	c, err := newClient(srv, scheme)
	if err != nil {
		cancel()
		return nil, err
	}
	env := &Env{Server: srv, Client: c, Dashboard: dash, cancel: cancel, done: make(chan error, 1)}
	go func() { env.done <- mgr.Start(ctx) }()
	syncCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		cancel()
		return nil, fmt.Errorf("KubeRay's caches did not sync within a minute: %w", <-env.done)
	}
	return env, nil
}

// newClient is the Env's typed client for srv.
func newClient(srv *apiserver.Server, scheme *runtime.Scheme) (client.Client, error) {
	// Tests create fleets of hundreds of Nodes and poll Pods: client-go's
	// default limiter (5 QPS) would make that minutes.
	cfg := rest.CopyConfig(srv.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", srv.Config.Host, err)
	}
	return c, nil
}

// StartBare is StartWith without KubeRay's reconcilers: a cluster that
// stores RayJobs and RayClusters but never acts on them (a MultiKueue
// manager cluster, which only queues the job object). Its Dashboard is nil.
func StartBare(assets string, opts apiserver.Options) (*Env, error) {
	begin := time.Now()
	setLogger()
	opts.ClusterAdmission = true
	srv, err := apiserver.StartWith(assets, opts)
	if err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, errors.Join(err, srv.Stop())
	}
	c, err := newClient(srv, scheme)
	if err != nil {
		return nil, errors.Join(err, srv.Stop())
	}
	env := &Env{Server: srv, Client: c, cancel: func() {}, done: make(chan error, 1)}
	env.done <- nil // no manager runs; Stop reads this in its place
	env.Up, env.Reconciling = srv.Ready, time.Since(begin)
	return env, nil
}

// submitterJobSelector is kuberay-operator's cache selector for batch Jobs
// (main.go's cacheSelectors): it only watches the submitter Jobs it creates.
func submitterJobSelector() (labels.Selector, error) {
	req, err := labels.NewRequirement(rayutils.KubernetesCreatedByLabelKey, selection.Equals, []string{rayutils.ComponentName})
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*req), nil
}

// Stop stops KubeRay's reconcilers, then the API server.
func (e *Env) Stop() error {
	e.cancel()
	err := <-e.done
	return errors.Join(err, e.Server.Stop())
}

// LogEnv names the variable that sends KubeRay's and controller-runtime's
// logs to stderr (they are dropped otherwise: a reconciler logs every
// pass, and refusals are asserted from Events, not logs).
const LogEnv = "NRL_OPERATOR_LOG"

var loggerOnce sync.Once

func setLogger() {
	loggerOnce.Do(func() {
		l := logr.Discard()
		if os.Getenv(LogEnv) == "1" {
			l = funcr.New(func(prefix, args string) {
				fmt.Fprintln(os.Stderr, prefix, args)
			}, funcr.Options{})
		}
		logf.SetLogger(l)
	})
}

var shared = fixtures.Env[*Env]{
	Name: "the operator tier",
	Start: func(t testing.TB) (*Env, error) {
		assets, err := apiserver.Assets()
		if err != nil {
			return nil, fixtures.Missing(err)
		}
		env, err := StartWith(assets, apiserver.Options{})
		if err == nil {
			t.Logf("kube-apiserver %s (cluster admission) ready in %s, KubeRay reconciling in %s",
				apiserver.Version, env.Up.Round(time.Millisecond), env.Reconciling.Round(time.Millisecond))
		}
		return env, err
	},
	Stop: (*Env).Stop,
}

// Shared returns the test package's Env, starting it on first use
// (skipped or failed as fixtures.Env says).
func Shared(t testing.TB) *Env {
	t.Helper()
	return shared.Get(t)
}

// StopShared stops the shared Env if one was started; call it from
// TestMain after m.Run.
func StopShared() error { return shared.StopStarted() }
