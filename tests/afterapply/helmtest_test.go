package afterapply

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// helmEnv runs a Helm CLI with no state of the machine's user.
func helmEnv(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	return cmd
}

// recorder notes every request a client makes and the status of its answer.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

// wrap is a rest.Config WrapTransport that records through r.
func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) { return r.roundTrip(rt, req) })
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (r *recorder) roundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := rt.RoundTrip(req)
	code := 0
	if resp != nil {
		code = resp.StatusCode
	}
	r.mu.Lock()
	r.seen = append(r.seen, fmt.Sprintf("%d %s %s?%s", code, req.Method, req.URL.Path, req.URL.RawQuery))
	r.mu.Unlock()
	return resp, err
}

// syncBuffer is a bytes.Buffer a running command writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// saKubeconfig mints a token for ServiceAccount ns/name with the
// TokenRequest API (as the kubelet does for a Pod's projected token) and
// returns a rest.Config and a kubeconfig file that authenticate as it.
func saKubeconfig(t *testing.T, env *operator.Env, ns, name string) (*rest.Config, string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(600))}}
	require.NoError(t, env.Client.SubResource("token").Create(context.Background(), sa, tr))
	require.NotEmpty(t, tr.Status.Token)
	admin := env.Server.Config
	cfg := &rest.Config{Host: admin.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}
	kc := map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "sa",
		"clusters": []any{map[string]any{"name": "c", "cluster": map[string]any{"server": admin.Host, "certificate-authority-data": admin.CAData}}},
		"users":    []any{map[string]any{"name": "sa", "user": map[string]any{"token": tr.Status.Token}}},
		"contexts": []any{map[string]any{"name": "sa", "context": map[string]any{"cluster": "c", "user": "sa", "namespace": ns}}},
	}
	b, err := yaml.Marshal(kc)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(file, b, 0o600))
	return cfg, file
}

// hookRun is one `helm test` of a release while the test plays kubelet.
type hookRun struct {
	t         *testing.T
	env       *operator.Env
	ns, rel   string
	hook      string
	out       syncBuffer
	err       error
	done      chan struct{}
	pod       corev1.Pod
	code      int    // status's exit code, run as the hook's ServiceAccount
	stdout    string // its report
	saCfg     *rest.Config
	requested []string // every request of a recorded Collect as the ServiceAccount
}

// startHelmTest runs `helm test` in the background and waits for the Pod it
// creates (after its ServiceAccount, Role and RoleBinding), then runs what
// the Pod runs, its arguments as rendered, as its ServiceAccount.
func startHelmTest(t *testing.T, env *operator.Env, helm, kc, ns, rel string) *hookRun {
	t.Helper()
	ctx := context.Background()
	h := &hookRun{t: t, env: env, ns: ns, rel: rel, hook: rel + "-status-test", done: make(chan struct{})}
	cmd := helmEnv(t, helm, "test", rel, "--kubeconfig", kc, "-n", ns, "--timeout", "3m")
	cmd.Stdout, cmd.Stderr = &h.out, &h.out
	require.NoError(t, cmd.Start())
	go func() { h.err = cmd.Wait(); close(h.done) }()
	t.Cleanup(func() {
		select {
		case <-h.done:
		default:
			_ = cmd.Process.Kill()
			<-h.done
		}
	})
	require.NoError(t, operator.Wait(ctx, 60*time.Second, "helm test's Pod", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: h.hook}, &h.pod)
		if apierrors.IsNotFound(err) {
			return false, "no Pod yet; helm test: " + h.out.String(), nil
		}
		return err == nil, "", err
	}))
	require.Equal(t, h.hook, h.pod.Spec.ServiceAccountName)
	require.Equal(t, []string{"status", rel, "-n", ns}, h.pod.Spec.Containers[0].Args)
	require.NotContains(t, h.pod.Labels, vocab.InstanceLabel, "the hook Pod is not one of the run's")
	for _, o := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: h.hook}, o), "%T created by helm test", o)
	}

	// What the Pod runs, as its ServiceAccount: the CLI with a kubeconfig of
	// a minted token, and the same reads with every request recorded.
	var saKC string
	h.saCfg, saKC = saKubeconfig(t, env, ns, h.hook)
	var serr string
	h.code, h.stdout, serr = clirun.Run(append(append([]string{}, h.pod.Spec.Containers[0].Args...), "--kubeconfig", saKC)...)
	require.NotEqual(t, 2, h.code, "status as the hook's ServiceAccount could not read the cluster:\n%s%s", h.stdout, serr)
	rec := &recorder{}
	wrapped := rest.CopyConfig(h.saCfg)
	wrapped.WrapTransport = rec.wrap
	conn, err := kube.FromConfig(wrapped, ns, kube.Options{})
	require.NoError(t, err)
	rep, err := runstatus.Collect(ctx, conn, ns, rel, time.Now())
	require.NoError(t, err)
	for _, p := range rep.Problems {
		assert.NotEqual(t, "Forbidden", p.Reason, "%+v", p)
	}
	h.requested = rec.seen
	require.NotEmpty(t, h.requested)
	for _, s := range h.requested {
		// Kueue and KAI are not installed here: the API server authorizes
		// the read first (a refusal is 403) and then answers 404 for a
		// group it does not serve, which status reads as "nothing queued".
		optional := strings.HasPrefix(s, "404 GET /apis/kueue.x-k8s.io/") || strings.HasPrefix(s, "404 GET /apis/scheduling.run.ai/")
		assert.True(t, strings.HasPrefix(s, "200 GET ") || optional, "every read status makes is allowed to the hook's Role: %s", s)
	}
	return h
}

// finish completes the Pod as a kubelet would once its container exited
// with status's code, and returns helm test's error and output.
func (h *hookRun) finish() (string, error) {
	t := h.t
	ctx := context.Background()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur corev1.Pod
		if err := h.env.Client.Get(ctx, client.ObjectKeyFromObject(&h.pod), &cur); err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase, cur.Status.StartTime = corev1.PodSucceeded, &now
		if h.code != 0 {
			cur.Status.Phase = corev1.PodFailed
		}
		cur.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "status", Image: cur.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(h.code), StartedAt: now, FinishedAt: now}}}}
		return h.env.Client.Status().Update(ctx, &cur)
	}))
	select {
	case <-h.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("helm test did not finish:\n%s", h.out.String())
	}
	return h.out.String(), h.err
}

// exists says whether ns/name of o's kind is there and not being deleted.
func exists(t *testing.T, env *operator.Env, o client.Object, ns, name string) bool {
	t.Helper()
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, o)
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(t, err)
	return o.GetDeletionTimestamp() == nil
}

// installWithHook helm-installs the generic 8-GPU profile as release rel
// into ns with the test hook on.
func installWithHook(t *testing.T, helm, kc, ns, rel string) {
	t.Helper()
	chart := filepath.Join(testenv.RepoRoot(t), "charts", "nemo-rl-run")
	out, err := helmEnv(t, helm, "install", rel, chart, "--kubeconfig", kc, "-n", ns,
		"--set", "profile=generic-single-node-8gpu", "--set", "user=alice", "--set", "namespace="+ns, "--set", "test.enabled=true").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "helm test "+rel+" -n "+ns+" --logs", "NOTES say how to run it")
}

// TestHelmTestHook: the chart's helm test hook (test.enabled) against the
// real API server and KubeRay's reconcilers, with the Helm 3 and Helm 4
// CLIs. helm install, then helm test: Helm creates the hook's
// ServiceAccount, Role and RoleBinding and then its Pod. envtest has no
// kubelet, so the test does what the Pod would: it runs nrl-k8s status for
// the release with a token of the hook's ServiceAccount (TokenRequest),
// where no request may be refused, and completes the Pod with status's exit
// code. A running run: exit 0, helm test passes. A run Pod Security
// refuses: exit 1, stuck with the cause (read from the Events), helm test
// fails; the hook Pod itself is admitted there (restricted). Either way
// Helm then deletes the RBAC objects (hook-succeeded: they succeeded) and
// keeps the Pod. The ServiceAccount can write nothing and read no Secret
// (SelfSubjectRulesReview, SubjectAccessReview), and a server dry-run
// create admits the rendered Pod under restricted.
func TestHelmTestHook(t *testing.T) {
	env := operator.Shared(t)
	kc := kubeconfig(t, env)
	ctx := context.Background()
	chart := filepath.Join(testenv.RepoRoot(t), "charts", "nemo-rl-run")
	for _, tool := range []string{"NRL_HELM3", "NRL_HELM4"} {
		helm := testenv.Tool(t, tool)
		v := strings.ToLower(strings.TrimPrefix(tool, "NRL_"))
		t.Run(tool, func(t *testing.T) {
			t.Run("running: passes", func(t *testing.T) {
				hookPasses(t, env, helm, kc, "status-hook-"+v, "hk-"+v)
			})
			t.Run("stuck: fails, and the ServiceAccount only reads", func(t *testing.T) {
				hookFails(t, env, helm, kc, "status-hook-stuck-"+v, "hk-stuck-"+v)
			})
		})
	}

	t.Run("Pod Security restricted admits the rendered hook Pod", func(t *testing.T) {
		helm := testenv.Tool(t, "NRL_HELM3")
		const rns, rel = "status-hook-restricted", "hk3"
		require.NoError(t, env.CreateNamespace(ctx, rns, "restricted"))
		require.NoError(t, env.CreateServiceAccount(ctx, rns, rel+"-status-test"))
		out, err := helmEnv(t, helm, "template", rel, chart, "-n", rns, "--kube-version", "1.34.0", "--set", "profile=gb300-qwen3-30b-math-4n-4gpu",
			"--set", "user=alice", "--set", "test.enabled=true", "--show-only", "templates/tests/status-test-pod.yaml").Output()
		require.NoError(t, err)
		var p corev1.Pod
		require.NoError(t, yaml.Unmarshal(out, &p))
		require.Equal(t, rns, p.Namespace)
		require.NoError(t, env.Client.Create(ctx, p.DeepCopy(), client.DryRunAll), "server dry-run create in a namespace enforcing restricted")
		// The control: the namespace does enforce restricted.
		bad := p.DeepCopy()
		bad.Spec.Containers[0].SecurityContext.Capabilities = nil
		err = env.Client.Create(ctx, bad, client.DryRunAll)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `violates PodSecurity "restricted`)
	})
}

// hookPasses: a running run; helm test passes.
func hookPasses(t *testing.T, env *operator.Env, helm, kc, ns, rel string) {
	ctx := context.Background()
	require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
	installWithHook(t, helm, kc, ns, rel)
	require.False(t, exists(t, env, &corev1.ServiceAccount{}, ns, rel+"-status-test"), "hooks are not installed with the release")
	// KubeRay creates the cluster and Pods; the test marks them Running
	// and Ready, as a kubelet would.
	r, _ := waitStatus(t, kc, ns, rel, func(r runstatus.Report) bool { return len(r.RayClusters) == 1 && len(r.Pods) == 2 })
	cluster, err := env.WaitForCluster(ctx, ns, r.RayClusters[0].Name, 60*time.Second)
	require.NoError(t, err)
	require.NoError(t, env.MarkRunningReady(ctx, cluster.Pods()))
	waitStatus(t, kc, ns, rel, func(r runstatus.Report) bool { return r.Verdict == runstatus.Running })

	h := startHelmTest(t, env, helm, kc, ns, rel)
	require.Equal(t, 0, h.code, h.stdout)
	require.Contains(t, h.stdout, "running")
	t.Logf("status as %s made %d requests:\n%s", h.hook, len(h.requested), strings.Join(h.requested, "\n"))
	out, err := h.finish()
	require.NoError(t, err, "helm test:\n%s", out)
	assert.Regexp(t, `Phase:\s+Succeeded`, out)
	h.requireCleanedUp()
}

// requireCleanedUp: after helm test, the RBAC objects are gone (their
// hook-succeeded policy) and the Pod stays (before-hook-creation).
func (h *hookRun) requireCleanedUp() {
	for _, o := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		assert.False(h.t, exists(h.t, h.env, o, h.ns, h.hook), "%T deleted after helm test (hook-succeeded)", o)
	}
	assert.True(h.t, exists(h.t, h.env, &corev1.Pod{}, h.ns, h.hook), "the Pod stays until the next helm test")
}

// hookFails: in a namespace enforcing restricted, Pod Security refuses the
// run's Ray pods and admits the hook's; status says stuck, helm test fails.
func hookFails(t *testing.T, env *operator.Env, helm, kc, ns, rel string) {
	ctx := context.Background()
	require.NoError(t, env.CreateNamespace(ctx, ns, "restricted"))
	installWithHook(t, helm, kc, ns, rel)
	waitStatus(t, kc, ns, rel, func(r runstatus.Report) bool { return r.Verdict == runstatus.Stuck })

	h := startHelmTest(t, env, helm, kc, ns, rel)
	require.Equal(t, 1, h.code, h.stdout)
	require.Contains(t, h.stdout, "violates PodSecurity", "the cause, from the Events the Role may list")

	saClient, err := client.New(h.saCfg, client.Options{Scheme: env.Client.Scheme()})
	require.NoError(t, err)
	ssrr := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}
	require.NoError(t, saClient.Create(ctx, ssrr))
	require.False(t, ssrr.Status.Incomplete, "the server's authorizer lists rules (RBAC): %s", ssrr.Status.EvaluationError)
	var granted []string
	for _, rule := range ssrr.Status.ResourceRules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					// Every user may ask what it may do (system:basic-user).
					self := v == "create" && (g == "authorization.k8s.io" || g == "authentication.k8s.io") && strings.HasPrefix(res, "self")
					if !self {
						granted = append(granted, g+"/"+res+" "+v)
					}
					assert.True(t, self || v == "get" || v == "list", "the hook's ServiceAccount may %s %s/%s", v, g, res)
				}
				assert.NotEqual(t, "secrets", res, "no Secret")
			}
		}
	}
	sort.Strings(granted)
	assert.Contains(t, granted, "ray.io/rayjobs list")
	t.Logf("granted: %s", strings.Join(granted, ", "))
	user := "system:serviceaccount:" + ns + ":" + h.hook
	sar := func(verb, group, resource, sub string) bool {
		t.Helper()
		r := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: sub}}}
		require.NoError(t, env.Client.Create(ctx, r))
		return r.Status.Allowed
	}
	assert.True(t, sar("list", "ray.io", "rayjobs", ""), "the review itself works")
	for _, res := range [][2]string{{"ray.io", "rayjobs"}, {"ray.io", "rayclusters"}, {"", "pods"}, {"", "configmaps"}, {"", "services"},
		{"apps", "deployments"}, {"", "serviceaccounts"}, {"rbac.authorization.k8s.io", "roles"}, {"rbac.authorization.k8s.io", "rolebindings"}} {
		for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
			assert.False(t, sar(verb, res[0], res[1], ""), "%s %s/%s", verb, res[0], res[1])
		}
	}
	for _, verb := range []string{"get", "list", "watch"} {
		assert.False(t, sar(verb, "", "secrets", ""), "%s secrets", verb)
	}
	assert.False(t, sar("create", "", "pods", "exec"), "pods/exec")
	assert.False(t, sar("get", "", "pods", "log"), "pods/log")
	assert.False(t, sar("create", "", "serviceaccounts", "token"), "serviceaccounts/token")

	out, err := h.finish()
	require.Error(t, err, "helm test of a stuck run:\n%s", out)
	assert.Regexp(t, `Phase:\s+Failed`, out)
	h.requireCleanedUp()
}
