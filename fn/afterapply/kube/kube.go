// Package kube is nrl-k8s's read-only connection to a live cluster, for
// `preflight` and `status`: kubeconfig resolution and authentication as
// kubectl does them (client-go's clientcmd and rest), and plain GETs of the
// API paths it reads. It never writes.
//
// client-go's clientsets are deliberately not used, the typed one nor the
// dynamic and metadata ones: they register API groups in schemes at package
// init (the metadata client alone pulls in meta's internal-version scheme),
// which every nrl-k8s process would pay, render included, for the handful
// of GETs two commands make. An answer is read as JSON: objects as
// unstructured data, decoded into the k8s.io/api types only where a field
// is needed; an error answer becomes the apierrors.StatusError client-go
// would have returned.
package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
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
	// rest carries the kubeconfig's server, TLS, credentials (exec plugins
	// included), user agent, timeout, and client-go's retries of answers
	// that ask for one (Retry-After).
	rest *rest.RESTClient
	// Namespace is the kubeconfig context's namespace ("default" when unset).
	Namespace string
}

// Connect resolves the kubeconfig and builds the client. A kubeconfig that
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
	// The scheme knows only metav1's Status, built here rather than at
	// package init: client-go decodes an error answer into it.
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(s).WithoutConversion()
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = "default"
	}
	return &Conn{rest: rc, Namespace: namespace}, nil
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

// classify turns a read's error into an outcome, or an error wrapping
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

// Path is the API path of a resource's collection in a namespace ("" for
// cluster-scoped resources, or every namespace), or of one object when
// name is set. A namespace or name that is not one path segment ("..",
// or holding "/", which no Kubernetes name can) is an error: it would
// read another path than the object's.
func Path(gvr schema.GroupVersionResource, namespace, name string) (string, error) {
	for _, seg := range []string{namespace, name} {
		if seg == "" {
			continue
		}
		if errs := content.IsPathSegmentName(seg); len(errs) > 0 {
			return "", fmt.Errorf("%s %q: %s", gvr.Resource, seg, strings.Join(errs, "; "))
		}
	}
	p := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		p = "/api/" + gvr.Version
	}
	if namespace != "" {
		p += "/namespaces/" + namespace
	}
	p += "/" + gvr.Resource
	if name != "" {
		p += "/" + name
	}
	return p, nil
}

// unreadable is an answer that cannot be read as what was asked: like a
// connection error, it says nothing about the object.
func unreadable(path string, err error) (Outcome, error) {
	return NotFound, fmt.Errorf("%w: GET %s: %w", ErrUnreachable, path, err)
}

// read GETs an API path and returns the body of a 200 answer; any other
// answer is client-go's error for it (the Status the server sent, else a
// generic one for the code), which classify reads.
func (c *Conn) read(ctx context.Context, path string, query url.Values, accept string) ([]byte, error) {
	req := c.rest.Get().AbsPath(path).SetHeader("Accept", accept)
	for _, k := range slices.Sorted(maps.Keys(query)) {
		for _, v := range query[k] {
			req = req.Param(k, v)
		}
	}
	res := req.Do(ctx)
	// Error, not Raw's error: only Error decodes the server's Status.
	if err := res.Error(); err != nil {
		return nil, err
	}
	return res.Raw()
}

// fetch reads the object (or, name "", the collection) at gvr's path and
// decodes the answer with decode: Found, or the outcome and error of the
// read (an answer decode refuses says nothing about the object).
func (c *Conn) fetch(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, query url.Values, accept string, decode func([]byte) error) (Outcome, error) {
	path, err := Path(gvr, namespace, name)
	if err != nil {
		return NotFound, err
	}
	body, err := c.read(ctx, path, query, accept)
	if out, err := classify(err); out != Found {
		return out, err
	}
	if err := decode(body); err != nil {
		return unreadable(path, err)
	}
	return Found, nil
}

// jsonOnly is the Accept header of every read: JSON, never protobuf or CBOR.
const jsonOnly = "application/json"

// Get reads one object. namespace "" reads a cluster-scoped object.
func (c *Conn) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, Outcome, error) {
	u := &unstructured.Unstructured{}
	if out, err := c.fetch(ctx, gvr, namespace, name, nil, jsonOnly, u.UnmarshalJSON); out != Found {
		return nil, out, err
	}
	return u, Found, nil
}

// metadataOnly asks the API server for an object's metadata alone, with no
// fallback to the whole object: a server that cannot answer so refuses
// (406) rather than send a Secret's data.
const metadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// GetMetadata reads only an object's metadata. Secrets are read this way:
// their values never reach this process.
func (c *Conn) GetMetadata(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, Outcome, error) {
	var m metav1.PartialObjectMetadata
	decode := func(body []byte) error {
		if err := json.Unmarshal(body, &m); err != nil || m.Kind != "PartialObjectMetadata" {
			return fmt.Errorf("expected the object's metadata alone (PartialObjectMetadata), found kind %q", m.Kind)
		}
		return nil
	}
	if out, err := c.fetch(ctx, gvr, namespace, name, nil, metadataOnly, decode); out != Found {
		return nil, out, err
	}
	m.TypeMeta = metav1.TypeMeta{}
	return &m, Found, nil
}

// List reads the objects of a resource in a namespace matching a label
// selector ("" for all). An API the server does not serve is NotFound.
func (c *Conn) List(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string) ([]unstructured.Unstructured, Outcome, error) {
	var q url.Values
	if selector != "" {
		q = url.Values{"labelSelector": {selector}}
	}
	var l unstructured.UnstructuredList
	if out, err := c.fetch(ctx, gvr, namespace, "", q, jsonOnly, l.UnmarshalJSON); out != Found {
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
	body, err := c.read(ctx, path, nil, jsonOnly)
	if out, err := classify(err); out != Found {
		return nil, out, err
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		out, err := unreadable(path, err)
		return nil, out, err
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
