// Package kueue runs Kueue v0.17.0's own manager (sigs.k8s.io/kueue/cmd/kueue,
// built by hack/kueue.sh from the nested module hack/kueue) against an
// operator-tier API server where KubeRay v1.5.0's reconcilers run, so a
// test sees what Kueue does with a render: its webhooks suspend a labelled
// RayJob on creation and refuse what Kueue refuses, its job reconcilers
// make the Workload, its scheduler admits it against a ClusterQueue's quota
// and unsuspends the RayJob, and KubeRay then creates the Pods.
//
// Kueue is installed as its release installs it, from its own
// config/default rendered by the pinned kustomize (hack/kueue.sh): the
// CRDs, the kueue-system namespace, the webhook configurations and the
// webhook Service. Its Deployment is replaced by this process. Two things
// stand in for a cluster's network: the webhook Service has an
// EndpointSlice naming this machine's address (the API server runs with
// --enable-aggregator-routing, so it calls the endpoints, not a ClusterIP
// no kube-proxy serves), and the manager's webhook server listens on that
// address only. Kueue's internal certificate management makes the serving
// certificate for kueue-webhook-service.kueue-system.svc and injects its CA
// into the webhook configurations, as in a cluster; the kubelet's Secret
// volume, through which Kueue's Deployment reads that certificate back
// (open-policy-agent/cert-controller waits for the files in its certDir),
// is stood in for by mountSecret.
//
// Test-only, as internal/operator.
package kueue

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/policy"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Version is the Kueue hack/kueue.sh builds (hack/kueue/go.mod).
const Version = "v0.17.0"

// User is who Kueue's manager is to the API server: the username of its
// ServiceAccount in a default install (policy.DefaultKueueUser).
const User = policy.DefaultKueueUser

// Namespace is where Kueue keeps its webhook Service and certificate.
const Namespace = "kueue-system"

// webhookService is the Service Kueue's webhook configurations name
// (config/default's namePrefix kueue- on components/webhook's service).
const webhookService = "kueue-webhook-service"

// Dir is the folder holding the kueue binary and kueue.yaml:
// $NRL_KUEUE_DIR when set, else the versioned folder hack/kueue.sh builds
// into. It returns an error saying how to build it when missing.
func Dir() (string, error) {
	dir, err := testenv.ToolDir("NRL_KUEUE_DIR", "kueue-"+Version)
	if err != nil {
		return "", err
	}
	for _, f := range []string{"kueue", "kueue.yaml"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.IsDir() {
			return "", fmt.Errorf("no %s in %s; build Kueue's manager with `eval \"$(./hack/kueue.sh)\"` (or run `make kueue-test`)", f, dir)
		}
	}
	return dir, nil
}

// Kueue is a running Kueue manager.
type Kueue struct {
	cmd    *exec.Cmd
	log    *testenv.LogBuffer
	tmp    string
	exited chan error
	stop   context.CancelFunc
	mounts chan struct{}
}

// Options change how the manager is configured.
type Options struct {
	// MultiKueue adds the multiKueue section of the Configuration (a
	// MultiKueue manager cluster: its AdmissionCheck controller copies
	// admitted jobs to worker clusters; the MultiKueue feature gate is on
	// by default in v0.17.0).
	MultiKueue bool
}

// multiKueueConfig is the manager's multiKueue section: a short garbage
// collection interval and worker-lost timeout, so a test sees them act
// (the multicluster tier's lost worker waits out the timeout).
const multiKueueConfig = `multiKueue:
  gcInterval: 30s
  origin: nrl-manager
  workerLostTimeout: 15s
`

// Start installs Kueue's objects from dir/kueue.yaml into env's API server
// (started with AggregatorRouting), starts the manager with the RayJob and
// RayCluster integrations, and returns once its webhooks answer through
// the API server.
func Start(env *operator.Env, dir string) (*Kueue, error) {
	return StartWith(env, dir, Options{})
}

// StartWith is Start with opts.
func StartWith(env *operator.Env, dir string, opts Options) (*Kueue, error) {
	ip, err := hostIP()
	if err != nil {
		return nil, err
	}
	healthPort, err := freePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	webhookPort, err := freePort(ip.String())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := install(ctx, env, filepath.Join(dir, "kueue.yaml"), ip, webhookPort); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "nrl-kueue-")
	if err != nil {
		return nil, err
	}
	// Kueue authenticates as its ServiceAccount's username, the one the
	// started-run policy lets through by default.
	_, kcData, err := env.Server.AsUser(User)
	if err != nil {
		return nil, err
	}
	kc := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kc, kcData, 0o600); err != nil {
		return nil, err
	}
	cfg := filepath.Join(tmp, "config.yaml")
	body := fmt.Appendf(nil, config, healthPort, ip.String(), webhookPort, filepath.Join(tmp, "certs"))
	if opts.MultiKueue {
		body = append(body, multiKueueConfig...)
	}
	if err := os.WriteFile(cfg, body, 0o600); err != nil {
		return nil, err
	}
	certDir := filepath.Join(tmp, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	mountCtx, stopMount := context.WithCancel(context.Background())
	k := &Kueue{log: &testenv.LogBuffer{}, tmp: tmp, exited: make(chan error, 1), stop: stopMount, mounts: make(chan struct{})}
	go func() {
		defer close(k.mounts)
		mountSecret(mountCtx, env, certDir)
	}()
	// The visibility API server is Kueue's optional aggregated API; it is
	// not installed (no APIService), so it does not run either.
	k.cmd = exec.Command(filepath.Join(dir, "kueue"), "--config="+cfg, "--kubeconfig="+kc, "--feature-gates=VisibilityOnDemand=false", "--zap-log-level=2")
	k.cmd.Stdout, k.cmd.Stderr = k.log, k.log
	if err := k.cmd.Start(); err != nil {
		stopMount()
		<-k.mounts
		return nil, fmt.Errorf("kueue manager: %w", err)
	}
	go func() { k.exited <- k.cmd.Wait() }()
	if err := k.waitReady(ctx, env, healthPort); err != nil {
		return nil, errors.Join(err, k.Stop())
	}
	return k, nil
}

// config is Kueue's Configuration for the manager: the RayJob and
// RayCluster integrations only, jobs without a queue label left alone (the
// default), internal certificates, no leader election or metrics, the
// webhook server on this machine's address.
const config = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: %s
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: true
  webhookServiceName: kueue-webhook-service
  webhookSecretName: kueue-webhook-server-cert
clientConnection:
  qps: 200
  burst: 400
integrations:
  frameworks:
  - ray.io/rayjob
  - ray.io/raycluster
`

// install applies what a Kueue install puts in a cluster, minus its
// Deployment, RBAC and the visibility API: the CRDs, the namespace, the
// webhook Service (with an EndpointSlice to this machine), the webhook
// certificate Secret and the webhook configurations.
func install(ctx context.Context, env *operator.Env, manifests string, ip net.IP, port int) error {
	data, err := os.ReadFile(manifests)
	if err != nil {
		return err
	}
	objs, err := fixtures.Decode(data)
	if err != nil {
		return fmt.Errorf("%s: %w", manifests, err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	var rest []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			var crd apiextensionsv1.CustomResourceDefinition
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &crd); err != nil {
				return fmt.Errorf("%s: CRD %s: %w", manifests, o.GetName(), err)
			}
			crds = append(crds, &crd)
			rest = append(rest, o)
		case "Namespace", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			rest = append(rest, o)
		case "Service", "Secret":
			if o.GetNamespace() == Namespace && (o.GetName() == webhookService || o.GetName() == "kueue-webhook-server-cert") {
				rest = append(rest, o)
			}
		}
	}
	if len(crds) == 0 {
		return fmt.Errorf("%s: no CustomResourceDefinition; expected Kueue's config/default as hack/kueue.sh renders it", manifests)
	}
	// The namespace first, then CRDs, then the rest.
	order := func(o *unstructured.Unstructured) int {
		switch o.GetKind() {
		case "Namespace":
			return 0
		case "CustomResourceDefinition":
			return 1
		}
		return 2
	}
	for pass := 0; pass < 3; pass++ {
		for _, o := range rest {
			if order(o) != pass {
				continue
			}
			if err := env.Server.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()),
				client.FieldOwner(apiserver.FieldManager), client.ForceOwnership); err != nil {
				return fmt.Errorf("install Kueue's %s %s: %w", o.GetKind(), o.GetName(), err)
			}
		}
		if pass == 1 {
			if err := envtest.WaitForCRDs(env.Server.Config, crds, envtest.CRDInstallOptions{PollInterval: 100 * time.Millisecond, MaxTime: time.Minute}); err != nil {
				return fmt.Errorf("wait for Kueue's CRDs: %w", err)
			}
		}
	}
	return endpoints(ctx, env, ip, port)
}

// endpoints points the webhook Service at this machine: an EndpointSlice
// (what the API server's endpoint resolver reads) for the Service's port.
func endpoints(ctx context.Context, env *operator.Env, ip net.IP, port int) error {
	var svc corev1.Service
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: webhookService}, &svc); err != nil {
		return fmt.Errorf("the Kueue webhook Service: %w", err)
	}
	if len(svc.Spec.Ports) != 1 {
		return fmt.Errorf("the Kueue webhook Service has %d ports; expected 1", len(svc.Spec.Ports))
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: webhookService + "-local", Namespace: Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: webhookService, discoveryv1.LabelManagedBy: "nrl-k8s-tests"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip.String()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(svc.Spec.Ports[0].Name), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if err := env.Client.Create(ctx, slice); err != nil {
		return fmt.Errorf("the Kueue webhook EndpointSlice: %w", err)
	}
	return nil
}

// waitReady waits for the manager's readyz (its webhook server started),
// then for its webhooks to answer through the API server: a dry-run
// ResourceFlavor passes Kueue's mutating and validating webhooks once the
// certificate is injected and the endpoint reached.
func (k *Kueue) waitReady(ctx context.Context, env *operator.Env, healthPort int) error {
	readyz := "http://127.0.0.1:" + strconv.Itoa(healthPort) + "/readyz"
	var last string
	for {
		select {
		case err := <-k.exited:
			return fmt.Errorf("kueue manager exited before it was ready (%w); its log:\n%s", err, tail(k.log.String()))
		case <-ctx.Done():
			return fmt.Errorf("kueue manager not ready within 2 minutes (%s); its log:\n%s", last, tail(k.log.String()))
		case <-time.After(200 * time.Millisecond):
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, readyz, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err.Error()
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = "readyz " + resp.Status
			continue
		}
		rf := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": vocab.KueueAPIVersion, "kind": "ResourceFlavor",
			"metadata": map[string]any{"name": "nrl-webhook-probe"},
		}}
		if err := env.Server.Client.Create(ctx, rf, client.DryRunAll); err != nil {
			last = "webhook through the API server: " + err.Error()
			continue
		}
		return nil
	}
}

// Log is what the manager printed (for a failing test's output).
func (k *Kueue) Log() string { return k.log.String() }

// Stop ends the manager and the Secret mount, and removes their files.
func (k *Kueue) Stop() error {
	if k.cmd.Process != nil {
		_ = k.cmd.Process.Kill()
		exit := <-k.exited // killed, as asked: its exit status says nothing
		k.exited <- exit
	}
	k.stop()
	<-k.mounts
	return os.RemoveAll(k.tmp)
}

// mountSecret stands in for the kubelet's Secret volume of Kueue's
// Deployment (config/components/manager: the kueue-webhook-server-cert
// Secret mounted at the webhook's certDir): it writes the Secret's keys
// into dir as files whenever they change, until ctx ends.
func mountSecret(ctx context.Context, env *operator.Env, dir string) {
	seen := map[string]string{}
	for {
		var sec corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "kueue-webhook-server-cert"}, &sec); err == nil {
			for key, val := range sec.Data {
				if filepath.Base(key) != key || seen[key] == string(val) {
					continue // only plain file names, as the kubelet projects them
				}
				tmp := filepath.Join(dir, "."+key+".tmp")
				if os.WriteFile(tmp, val, 0o600) == nil && os.Rename(tmp, filepath.Join(dir, key)) == nil {
					seen[key] = string(val)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tail(s string) string {
	if len(s) > 8000 {
		return "..." + s[len(s)-8000:]
	}
	return s
}

// hostIP is this machine's first IPv4 address that is not loopback or
// link-local: the API server refuses those in an EndpointSlice.
func hostIP() (net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("this machine's addresses: %w", err)
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip := n.IP.To4(); ip != nil && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
			return ip, nil
		}
	}
	return nil, errors.New("this machine has no IPv4 address besides loopback; the Kueue tier needs one for its webhook endpoint (the API server refuses loopback endpoints)")
}

// freePort is a TCP port free on host now.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("a free port on %s: %w", host, err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tier is Kueue beside KubeRay in an operator-tier Env of its own.
type tier struct {
	env *operator.Env
	k   *Kueue
}

var shared = fixtures.Env[tier]{
	Name: "the Kueue tier",
	Start: func(t testing.TB) (tier, error) {
		assets, err := apiserver.Assets()
		if err != nil {
			return tier{}, fixtures.Missing(err)
		}
		dir, err := Dir()
		if err != nil {
			return tier{}, fixtures.Missing(err)
		}
		begin := time.Now()
		env, err := operator.StartWith(assets, apiserver.Options{AggregatorRouting: true, MemoryLimit: TierMemoryLimit})
		if err != nil {
			return tier{}, err
		}
		k, err := Start(env, dir)
		if err != nil {
			return tier{}, errors.Join(err, env.Stop())
		}
		t.Logf("kube-apiserver, KubeRay and Kueue %s ready in %s", Version, time.Since(begin).Round(time.Millisecond))
		return tier{env, k}, nil
	},
	Stop: func(s tier) error { return errors.Join(s.k.Stop(), s.env.Stop()) },
}

// TierMemoryLimit is the shared API server's soft memory limit: the
// cluster day and week (1,050 nodes, 2,000 ResourceSlices, a day's
// Events) keep about 500 MB live in it; the tier's other tests stay far
// below it, where the limit changes nothing.
const TierMemoryLimit = "900MiB"

// Shared is the package's operator-tier Env with Kueue beside KubeRay,
// started once (an API server of its own, with aggregator routing);
// skipped or failed as fixtures.Env says.
func Shared(t testing.TB) (*operator.Env, *Kueue) {
	t.Helper()
	s := shared.Get(t)
	return s.env, s.k
}

// StopShared stops Kueue and its Env; call it from TestMain after m.Run.
func StopShared() error { return shared.StopStarted() }
