// Package apiserver runs a real kube-apiserver and etcd (envtest) with the
// custom resources nrl-k8s renders installed, for tests that ask the API
// server itself what it admits. The binaries come from hack/apiserver.sh.
//
// A test package shares one server: tests call Shared(t), and the package's
// TestMain calls StopShared after m.Run so the processes never outlive it.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Version is the kube-apiserver hack/apiserver.sh builds (k8s.io/kubernetes
// in hack/apiserver/go.mod); the cache folder is named after it.
const Version = "v1.36.3"

// FieldManager is the server-side apply field manager of every apply.
const FieldManager = "nrl-k8s"

// CRDFiles are the CRDs installed before a server is handed out: KubeRay's
// and the NVIDIA DRA driver's ComputeDomain, the files fn/analyse/schema embeds.
var CRDFiles = []string{
	"ray.io_rayclusters.yaml",
	"ray.io_rayjobs.yaml",
	"resource.nvidia.com_computedomains.yaml",
}

// Server is a running API server with the CRDs installed.
type Server struct {
	env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	// Up is how long etcd and kube-apiserver took to answer; Ready how
	// long until the CRDs were served too.
	Up, Ready time.Duration
}

// Assets is the folder holding kube-apiserver and etcd: $KUBEBUILDER_ASSETS
// when set, else the versioned cache folder hack/apiserver.sh builds into.
// It returns an error saying how to build them when they are missing.
func Assets() (string, error) {
	dir, err := testenv.ToolDir("KUBEBUILDER_ASSETS", "kube-apiserver-"+Version)
	if err != nil {
		return "", err
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if fi, err := os.Stat(filepath.Join(dir, bin)); err != nil || fi.IsDir() {
			return "", fmt.Errorf("no %s in %s; build the pinned kube-apiserver and etcd with "+
				"`eval \"$(./hack/apiserver.sh)\"` (or run `make apiserver-test`)", bin, dir)
		}
	}
	return dir, nil
}

// Options change how a server is started.
type Options struct {
	// ClusterAdmission runs the API server with its default admission
	// plugins, as a real cluster does. envtest passes
	// --disable-admission-plugins=ServiceAccount (without the controller
	// manager nothing creates a namespace's "default" ServiceAccount, so
	// every Pod would be refused); with this set the flag is dropped, so
	// ServiceAccount admission refuses a Pod whose ServiceAccount does not
	// exist and PodSecurity admission enforces a namespace's
	// pod-security.kubernetes.io/enforce label. The caller creates the
	// ServiceAccounts, "default" included.
	ClusterAdmission bool
	// AggregatorRouting makes the API server reach a Service's endpoints
	// (its EndpointSlices' addresses) instead of its ClusterIP, for
	// webhooks and aggregated APIs alike (--enable-aggregator-routing):
	// with no kube-proxy, that is how an admission webhook served by a
	// test process is reached through the Service its configuration names.
	AggregatorRouting bool
	// MemoryLimit is the kube-apiserver's soft memory limit (GOMEMLIMIT,
	// "900MiB"), "" for none. The server's live heap grows with the
	// objects it caches; with Go's default GOGC its heap then runs up to
	// twice that before a collection, most of it garbage the test never
	// reads (the cluster day: about 500 MB live, 1.2 GB resident).
	MemoryLimit string
}

// StartWith starts a server from the binaries in assets and installs the
// CRDs.
func StartWith(assets string, opts Options) (*Server, error) {
	begin := time.Now()
	crds, err := readCRDs()
	if err != nil {
		return nil, err
	}
	existing := false
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		UseExistingCluster:       &existing,
		ControlPlaneStartTimeout: time.Minute,
	}
	if opts.ClusterAdmission {
		env.ControlPlane.GetAPIServer().Configure().Disable("disable-admission-plugins")
	}
	if opts.AggregatorRouting {
		env.ControlPlane.GetAPIServer().Configure().Set("enable-aggregator-routing", "true")
	}
	cfg, err := startWithLimit(env, opts.MemoryLimit)
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd from %s: %w", assets, err)
	}
	s := &Server{env: env, Config: cfg, Up: time.Since(begin)}
	if err := s.install(crds); err != nil {
		_ = env.Stop()
		return nil, err
	}
	s.Ready = time.Since(begin)
	return s, nil
}

// startWithLimit starts env's processes with GOMEMLIMIT=limit in their
// environment: envtest starts them with this process's environment and
// offers no other way to give them one. The variable is restored at once;
// starts are serialised so that no other start sees it.
func startWithLimit(env *envtest.Environment, limit string) (*rest.Config, error) {
	if limit == "" {
		return env.Start()
	}
	startMu.Lock()
	defer startMu.Unlock()
	old, had := os.LookupEnv("GOMEMLIMIT")
	if err := os.Setenv("GOMEMLIMIT", limit); err != nil {
		return nil, err
	}
	defer func() {
		if had {
			_ = os.Setenv("GOMEMLIMIT", old)
		} else {
			_ = os.Unsetenv("GOMEMLIMIT")
		}
	}()
	return env.Start()
}

// startMu serialises startWithLimit's starts.
var startMu sync.Mutex

// Stop stops the server's processes and removes their data.
func (s *Server) Stop() error { return s.env.Stop() }

// WriteKubeconfig writes a kubeconfig for the server's admin user into dir
// and returns its path, for tests that drive a CLI (KUBECONFIG=path).
func (s *Server) WriteKubeconfig(dir string) (string, error) {
	file := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(file, s.env.KubeConfig, 0o600); err != nil {
		return "", fmt.Errorf("write kubeconfig: %w", err)
	}
	return file, nil
}

// AsUser is a REST config and a kubeconfig for user name, authenticated by
// a client certificate and a member of system:masters (allowed what the
// admin is), so admission sees the name as request.userInfo.username: a
// controller a test runs in-process is who its ServiceAccount would be in
// a cluster.
func (s *Server) AsUser(name string) (*rest.Config, []byte, error) {
	u, err := s.env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("user %s: %w", name, err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig of user %s: %w", name, err)
	}
	// The admin's rate limits too (envtest sets 1,000 QPS): a user's
	// config comes with client-go's default 5 QPS, which starved KubeRay
	// of its writes when it reconciles every shipped run at once.
	cfg := u.Config()
	cfg.QPS, cfg.Burst = s.Config.QPS, s.Config.Burst
	return cfg, kc, nil
}

// install applies the CRDs server-side (the RayJob CRD is 1.3 MB: a
// client-side apply would not fit its last-applied annotation) and waits
// until they are served.
func (s *Server) install(crds []*apiextensionsv1.CustomResourceDefinition) error {
	c, err := client.New(s.Config, client.Options{})
	if err != nil {
		return fmt.Errorf("client for %s: %w", s.Config.Host, err)
	}
	s.Client = c
	ctx := context.Background()
	for _, crd := range crds {
		u, err := toUnstructured(crd)
		if err != nil {
			return err
		}
		if err := s.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.Name, err)
		}
	}
	if err := envtest.WaitForCRDs(s.Config, crds, envtest.CRDInstallOptions{
		PollInterval: 100 * time.Millisecond, MaxTime: time.Minute,
	}); err != nil {
		return fmt.Errorf("wait for the CRDs to be served: %w", err)
	}
	return nil
}

// EnsureNamespace creates a namespace unless it exists.
func (s *Server) EnsureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := s.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// DryRunApply server-side applies u with dryRun=All: the server decodes,
// defaults, validates and admits it, and stores nothing. The error is the
// server's (an *apierrors.StatusError), wrapped with the object's identity.
// A namespaced object without a namespace goes to "default", as kubectl's.
// u is left as it was (the client writes the server's answer into what it
// applies, so a copy is applied).
func (s *Server) DryRunApply(ctx context.Context, u *unstructured.Unstructured) error {
	u = u.DeepCopy()
	if u.GetNamespace() == "" {
		namespaced, err := s.Client.IsObjectNamespaced(u)
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", u.GetAPIVersion(), u.GetKind(), u.GetName(), err)
		}
		if namespaced {
			u.SetNamespace(metav1.NamespaceDefault)
		}
	}
	err := s.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.DryRunAll, client.FieldOwner(FieldManager), client.ForceOwnership)
	if err != nil {
		return fmt.Errorf("%s %s/%s: %w", u.GetAPIVersion(), u.GetKind(), u.GetName(), err)
	}
	return nil
}

var shared = fixtures.Env[*Server]{
	Name: "the real-API-server tier",
	Start: func(t testing.TB) (*Server, error) {
		assets, err := Assets()
		if err != nil {
			return nil, fixtures.Missing(err)
		}
		srv, err := StartWith(assets, Options{})
		if err == nil {
			t.Logf("kube-apiserver %s from %s: up in %s, ready (CRDs served) in %s",
				Version, assets, srv.Up.Round(time.Millisecond), srv.Ready.Round(time.Millisecond))
		}
		return srv, err
	},
	Stop: (*Server).Stop,
}

// Shared returns the test package's server, starting it on first use
// (skipped or failed as fixtures.Env says).
func Shared(t testing.TB) *Server { t.Helper(); return shared.Get(t) }

// StopShared stops the shared server if one was started; call it from
// TestMain after m.Run.
func StopShared() error { return shared.StopStarted() }

func readCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range CRDFiles {
		file := filepath.Join(crdDir(), name)
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read CRD: %w", err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			return nil, errors.New(file + ": not a CustomResourceDefinition")
		}
		out = append(out, crd)
	}
	return out, nil
}

// crdDir is fn/analyse/schema/crds, found from this file so any test package can
// start a server whatever its working directory.
func crdDir() string {
	root, _ := testenv.Root() // an error shows as the folder's read error
	return filepath.Join(root, "fn", "analyse", "schema", "crds")
}

func toUnstructured(v any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	// Status and creationTimestamp are the server's, not ours to apply.
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}
