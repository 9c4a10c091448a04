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
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
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
	// listTime bounds one list, all its pages.
	listTime time.Duration
	// budget, when set, bounds the bytes of every answer read through
	// this Conn together (Budgeted).
	budget *budget
	// stream is rest without its request timeout, for a log read as it
	// comes (PodLog); timeout bounds the wait for its answer's headers.
	stream  *rest.RESTClient
	timeout time.Duration
}

// Budgeted is the connection with a budget of bytes for all the
// answers read through it together: what a command reads, and so holds,
// is bounded whatever the count of its requests (one list per cluster,
// Events per object). More is an ErrServer error.
func (c *Conn) Budgeted(bytes int64) *Conn {
	cp := *c
	cp.budget = &budget{max: bytes}
	return &cp
}

type budget struct {
	mu        sync.Mutex
	max, used int64
}

// left is how many bytes may still be read.
func (b *budget) left() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.max - b.used
}

func (b *budget) take(n int) {
	b.mu.Lock()
	b.used += int64(n)
	b.mu.Unlock()
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
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	// An API server never redirects a read; a redirect followed would carry
	// the kubeconfig's bearer token to whatever host it names (Go's client
	// drops the header only across hosts it judges different, and a
	// downgrade to http would send it in clear). None is followed.
	hc.CheckRedirect = refuseRedirect
	rc, err := rest.UnversionedRESTClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = "default"
	}
	sc, err := streamClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Conn{rest: rc, Namespace: namespace, listTime: listTimeouts * o.Timeout, stream: sc, timeout: o.Timeout}, nil
}

// ErrRedirect is the error of a read the server answered with a redirect.
var ErrRedirect = errors.New("redirect refused")

func refuseRedirect(req *http.Request, via []*http.Request) error {
	from := ""
	if len(via) > 0 {
		from = via[len(via)-1].URL.Redacted()
	}
	return fmt.Errorf("%w: the API server answered GET %s with a redirect to %s; nrl-k8s follows none (it would carry the kubeconfig's credentials there)", ErrRedirect, from, req.URL.Redacted())
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

// ErrAccess marks a read the cluster refused: the credentials (401
// Unauthorized) or RBAC (403 Forbidden). It says nothing about whether
// the object exists.
var ErrAccess = errors.New("access refused")

// ErrServer marks an answer in which the server failed (5xx) or asked to
// be asked later (429) without a Retry-After client-go honours: it too
// says nothing about the object, and may pass.
var ErrServer = errors.New("API server error")

// Stops reports whether a read's error ends the command: the cluster could
// not be asked (ErrUnreachable), failed to answer (ErrServer), or refused
// the credentials (401 Unauthorized, whatever the API group: every read
// after it would be refused alike, so nothing could be judged).
func Stops(err error) bool {
	return errors.Is(err, ErrUnreachable) || errors.Is(err, ErrServer) || apierrors.IsUnauthorized(err)
}

// Transient reports whether a read's error may pass if asked again: the
// cluster could not be asked, or failed to answer. A refusal does not.
func Transient(err error) bool {
	return (errors.Is(err, ErrUnreachable) || errors.Is(err, ErrServer)) && !errors.Is(err, ErrAccess)
}

// classify turns a read's error into an outcome, or an error wrapping
// ErrUnreachable, ErrAccess or ErrServer when the answer says nothing
// about the object.
func classify(err error) (Outcome, error) {
	switch {
	case err == nil:
		return Found, nil
	case apierrors.IsNotFound(err):
		return NotFound, nil
	case apierrors.IsUnauthorized(err):
		return Forbidden, fmt.Errorf("%w: the cluster refused the kubeconfig's credentials (401 Unauthorized): %w", ErrAccess, err)
	case apierrors.IsForbidden(err):
		return Forbidden, fmt.Errorf("%w (403 Forbidden): %w", ErrAccess, err)
	}
	if errors.Is(err, ErrServer) {
		return NotFound, err // read's own bounds: already said
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		if code := st.Status().Code; code >= 500 || code == 429 {
			return NotFound, fmt.Errorf("%w (%d): %w", ErrServer, code, err)
		}
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
	// Stream, not Do: Do reads an answer whole, and a server that ignores
	// limit (or a namespace of 200,000 Events) would be read into memory
	// whole. Stream decodes an error answer's Status as Do does.
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = body.Close() }() // a read-only answer: nothing to flush
	limit := int64(MaxAnswer)
	if c.budget != nil {
		limit = min(limit, max(c.budget.left(), 0))
	}
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, err
	}
	switch {
	case len(b) > MaxAnswer:
		return nil, fmt.Errorf("%w: GET %s: the answer is over %d bytes; expected a page of at most %d items", ErrServer, path, MaxAnswer, PageSize)
	case int64(len(b)) > limit:
		return nil, fmt.Errorf("%w: GET %s: the answers to this command are over %d MiB in all; expected a run's objects to take far less", ErrServer, path, c.budget.max>>20)
	}
	if c.budget != nil {
		c.budget.take(len(b))
	}
	return b, nil
}

// MaxReportBytes bounds what one report reads, every answer together (a
// status poll, a preflight; Budgeted): a run of a few thousand Pods with
// their Events, or the Nodes of a few thousand-node cluster, is below it,
// and what is read is held while the report is made, decoded, several
// times its size (a hostile answer of small fields, about seven times).
const MaxReportBytes = 48 << 20

// MaxAnswer bounds one answer of the API server: a page of PageSize
// objects is far below it.
const MaxAnswer = 32 << 20

// PageSize is how many objects one list request asks for; List follows
// the continue token for the rest.
const PageSize = 500

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
		if errors.As(err, new(badAnswer)) {
			return NotFound, fmt.Errorf("%w: GET %s: %w", ErrServer, path, err)
		}
		return unreadable(path, err)
	}
	return Found, nil
}

// badAnswer is an answer that is not one to the request: another kind than
// asked (a Secret for a Workload), another group, another object's name,
// more objects than a page holds. Used, it would report another object as
// the run's state; like a failure, it is an ErrServer error.
type badAnswer struct{ error }

// isAsked checks an object of an answer is of the resource asked for (its
// apiVersion is gvr's group version and its kind is the resource's, as
// the API server names resources after kinds), and, with name set, the
// object asked for.
func isAsked(gvr schema.GroupVersionResource, u *unstructured.Unstructured, namespace, name string) error {
	gvk := u.GroupVersionKind()
	if err := isKind(gvr, gvk, u.GetAPIVersion()); err != nil {
		return err
	}
	if name != "" && (u.GetName() != name || u.GetNamespace() != "" && u.GetNamespace() != namespace) {
		return badAnswer{fmt.Errorf("expected %s %s, found %s %q in namespace %q", gvr.Resource, name, gvk.Kind, u.GetName(), u.GetNamespace())}
	}
	return nil
}

// isKind checks a kind (apiVersion as the object wrote it) is gvr's.
func isKind(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, apiVersion string) error {
	if plural, _ := meta.UnsafeGuessKindToResource(gvk); gvk.GroupVersion() != gvr.GroupVersion() || plural.Resource != gvr.Resource {
		return badAnswer{fmt.Errorf("expected %s of %s, found kind %q of %q", gvr.Resource, gvr.GroupVersion(), gvk.Kind, apiVersion)}
	}
	return nil
}

// jsonOnly is the Accept header of every read: JSON, never protobuf or CBOR.
const jsonOnly = "application/json"

// Get reads one object. namespace "" reads a cluster-scoped object.
func (c *Conn) Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, Outcome, error) {
	u := &unstructured.Unstructured{}
	decode := func(body []byte) error {
		if err := u.UnmarshalJSON(body); err != nil {
			return err
		}
		return isAsked(gvr, u, namespace, name)
	}
	if out, err := c.fetch(ctx, gvr, namespace, name, nil, jsonOnly, decode); out != Found {
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
		if m.Name != name || m.Namespace != "" && m.Namespace != namespace {
			return badAnswer{fmt.Errorf("expected %s %s, found %q in namespace %q", gvr.Resource, name, m.Name, m.Namespace)}
		}
		return nil
	}
	if out, err := c.fetch(ctx, gvr, namespace, name, nil, metadataOnly, decode); out != Found {
		return nil, out, err
	}
	m.TypeMeta = metav1.TypeMeta{}
	return &m, Found, nil
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
	if list.GroupVersion != groupVersion {
		// Another group's resources are not this one's.
		return nil, NotFound, fmt.Errorf("%w: GET %s: expected the discovery document of %s, found one of %q", ErrServer, path, groupVersion, list.GroupVersion)
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
	RayJobs         = schema.GroupVersionResource{Group: vocab.RayGroup, Version: vocab.RayVersion, Resource: "rayjobs"}
	RayClusters     = schema.GroupVersionResource{Group: vocab.RayGroup, Version: vocab.RayVersion, Resource: "rayclusters"}
	DeviceClasses   = schema.GroupVersionResource{Group: vocab.DRAGroup, Version: vocab.DRAVersion, Resource: "deviceclasses"}
	ResourceClaims  = schema.GroupVersionResource{Group: vocab.DRAGroup, Version: vocab.DRAVersion, Resource: "resourceclaims"}
	ClaimTemplates  = schema.GroupVersionResource{Group: vocab.DRAGroup, Version: vocab.DRAVersion, Resource: "resourceclaimtemplates"}
	ResourceSlices  = schema.GroupVersionResource{Group: vocab.DRAGroup, Version: vocab.DRAVersion, Resource: "resourceslices"}
	ComputeDomains  = schema.GroupVersionResource{Group: vocab.ComputeDomainGroup, Version: vocab.ComputeDomainVersion, Resource: "computedomains"}
)
