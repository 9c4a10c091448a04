// Package kube is nrl-k8s's read-only connection to a live cluster, for
// `preflight` and `status`: kubeconfig resolution as kubectl does it, and
// reads through client-go's dynamic and metadata clients. It never writes.
//
// The typed clientset (k8s.io/client-go/kubernetes) and client-go's discovery
// package are deliberately not used: both register every built-in API group
// in a scheme at package init, which every nrl-k8s process would pay (render
// included). Objects are read as unstructured data and decoded into the
// k8s.io/api types only where a field is needed.
package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options select the cluster as kubectl does: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config, else the in-cluster service account;
// --context picks a context of that file.
type Options struct {
	Kubeconfig string
	Context    string
	// Timeout bounds each request (default 15 s): a cluster that does not
	// answer is a connection error, not a hang.
	Timeout time.Duration
	// UserAgent names the caller in the API server's audit log.
	UserAgent string
}

// Conn is a read-only connection.
type Conn struct {
	dyn  dynamic.Interface
	meta metadata.Interface
	http *http.Client
	host string
	// Namespace is the kubeconfig context's namespace ("default" when unset).
	Namespace string
}

// Connect resolves the kubeconfig and builds the clients. A kubeconfig that
// cannot be found or read is an error; reaching the server is only tried by
// the first read.
func Connect(o Options) (*Conn, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return FromConfig(cfg, ns, o)
}

// FromConfig builds a connection from a rest.Config (tests pass envtest's).
func FromConfig(cfg *rest.Config, namespace string, o Options) (*Conn, error) {
	cfg = rest.CopyConfig(cfg)
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	cfg.Timeout = o.Timeout
	if o.UserAgent != "" {
		cfg.UserAgent = o.UserAgent
	}
	// Reads are few and sequential; client-go's default limiter (5 QPS)
	// would make a 30-prerequisite preflight take 6 s.
	cfg.QPS, cfg.Burst = 50, 100
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = "default"
	}
	return &Conn{dyn: dyn, meta: meta, http: hc, host: strings.TrimSuffix(cfg.Host, "/"), Namespace: namespace}, nil
}

// Outcome classifies a read.
type Outcome int

const (
	Found     Outcome = iota
	NotFound          // the object (or the API serving it) does not exist
	Forbidden         // RBAC refused the read: "cannot tell", never "missing"
)

// ErrUnreachable marks errors that are about the connection, not the
// object: the caller stops (exit 2) instead of reporting a missing object.
var ErrUnreachable = errors.New("cluster unreachable")

// classify turns a client error into an outcome, or an error wrapping
// ErrUnreachable when the answer says nothing about the object.
func classify(err error) (Outcome, error) {
	switch {
	case err == nil:
		return Found, nil
	case apierrors.IsNotFound(err):
		return NotFound, nil
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return Forbidden, err
	}
	return NotFound, fmt.Errorf("%w: %w", ErrUnreachable, err)
}

// Get reads one object. namespace "" reads a cluster-scoped object.
func (c *Conn) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, Outcome, error) {
	var ri dynamic.ResourceInterface = c.dyn.Resource(gvr)
	if namespace != "" {
		ri = c.dyn.Resource(gvr).Namespace(namespace)
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	out, err := classify(err)
	return u, out, err
}

// GetMetadata reads only an object's metadata. Secrets are read this way:
// their values never reach this process.
func (c *Conn) GetMetadata(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, Outcome, error) {
	m, err := c.meta.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	out, err := classify(err)
	return m, out, err
}

// List reads the objects of a resource in a namespace matching a label
// selector ("" for all). An API the server does not serve is NotFound.
func (c *Conn) List(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string) ([]unstructured.Unstructured, Outcome, error) {
	var ri dynamic.ResourceInterface = c.dyn.Resource(gvr)
	if namespace != "" {
		ri = c.dyn.Resource(gvr).Namespace(namespace)
	}
	l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	out, err := classify(err)
	if out != Found {
		return nil, out, err
	}
	return l.Items, Found, nil
}

// Served lists the resources a group version serves (the discovery
// document /apis/<group>/<version>, or /api/v1): NotFound when the server
// does not serve that group version at all (its CRD is not installed).
func (c *Conn) Served(ctx context.Context, groupVersion string) (map[string]bool, Outcome, error) {
	path := "/apis/" + groupVersion
	if groupVersion == "v1" {
		path = "/api/v1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.host+path, nil)
	if err != nil {
		return nil, NotFound, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, NotFound, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, NotFound, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, NotFound, nil
	case http.StatusForbidden, http.StatusUnauthorized:
		return nil, Forbidden, fmt.Errorf("GET %s: %s", path, http.StatusText(resp.StatusCode))
	default:
		return nil, NotFound, fmt.Errorf("%w: GET %s: %s", ErrUnreachable, path, resp.Status)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, NotFound, fmt.Errorf("GET %s: %w", path, err)
	}
	out := map[string]bool{}
	for _, r := range list.APIResources {
		out[r.Name] = true
	}
	return out, Found, nil
}

// Decode converts an unstructured object into a typed one (e.g. a
// corev1.Pod) to read its fields.
func Decode(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

// Common resources.
var (
	Namespaces      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	ServiceAccounts = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	PVCs            = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	Secrets         = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	ConfigMaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	Pods            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	Services        = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	Events          = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	Nodes           = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	Deployments     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	RayJobs         = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	RayClusters     = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	DeviceClasses   = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses"}
	ResourceClaims  = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
	ClaimTemplates  = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates"}
	ComputeDomains  = schema.GroupVersionResource{Group: "resource.nvidia.com", Version: "v1beta1", Resource: "computedomains"}
	KAIQueues       = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2", Resource: "queues"}
)
