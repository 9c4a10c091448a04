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

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/runstatus"
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

// TestHelmTestHook: the chart's helm test hook (test.enabled) against the
// real API server and KubeRay's reconcilers. helm install, then helm test:
// Helm creates the hook's ServiceAccount, Role and RoleBinding and then its
// Pod. envtest has no kubelet, so the test does what the Pod would: it runs
// nrl-k8s status for the release with a token of the hook's
// ServiceAccount (TokenRequest), which must succeed with no request
// refused, and completes the Pod with status's exit code; helm test then
// passes and deletes the RBAC objects. The ServiceAccount can write
// nothing and read no Secret (SelfSubjectRulesReview,
// SubjectAccessReview), and the rendered Pod is admitted in a namespace
// enforcing Pod Security restricted.
func TestHelmTestHook(t *testing.T) {
	env := operator.Shared(t)
	kc := kubeconfig(t, env)
	helm := testenv.Tool(t, "NRL_HELM3")
	ctx := context.Background()
	const ns, rel = "status-hook", "hk1"
	hook := rel + "-status-test"
	require.NoError(t, env.CreateNamespace(ctx, ns, "privileged"))
	prerequisites(t, env, ns)
	chart := filepath.Join(testenv.RepoRoot(t), "charts", "nemo-rl-run")
	out, err := helmEnv(t, helm, "install", rel, chart, "--kubeconfig", kc, "-n", ns,
		"--set", "profile=gb300-qwen3-30b-math-4n-4gpu", "--set", "user=alice", "--set", "namespace="+ns, "--set", "test.enabled=true").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "helm test "+rel+" -n "+ns+" --logs", "NOTES say how to run it")
	var sa corev1.ServiceAccount
	require.True(t, apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hook}, &sa)), "hooks are not installed with the release")

	// The run starts: KubeRay creates its cluster and Pods; the test marks
	// them Running and Ready, as a kubelet would.
	r, _ := waitStatus(t, kc, ns, rel, func(r runstatus.Report) bool { return len(r.RayClusters) == 1 && len(r.Pods) == 5 })
	cluster, err := env.WaitForCluster(ctx, ns, r.RayClusters[0].Name, 60*time.Second)
	require.NoError(t, err)
	require.NoError(t, env.MarkRunningReady(ctx, cluster.Pods()))
	waitStatus(t, kc, ns, rel, func(r runstatus.Report) bool { return r.Verdict == runstatus.Running })

	// helm test creates the hooks and waits for the Pod to finish.
	var testOut syncBuffer
	testCmd := helmEnv(t, helm, "test", rel, "--kubeconfig", kc, "-n", ns, "--timeout", "3m")
	testCmd.Stdout, testCmd.Stderr = &testOut, &testOut
	require.NoError(t, testCmd.Start())
	var testErr error
	testDone := make(chan struct{})
	go func() { testErr = testCmd.Wait(); close(testDone) }()
	t.Cleanup(func() {
		select {
		case <-testDone:
		default:
			_ = testCmd.Process.Kill()
			<-testDone
		}
	})
	var pod corev1.Pod
	require.NoError(t, operator.Wait(ctx, 60*time.Second, "helm test's Pod", func(ctx context.Context) (bool, string, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hook}, &pod)
		if apierrors.IsNotFound(err) {
			return false, "no Pod yet; helm test: " + testOut.String(), nil
		}
		return err == nil, "", err
	}))
	require.Equal(t, hook, pod.Spec.ServiceAccountName)
	require.Equal(t, []string{"status", rel, "-n", ns}, pod.Spec.Containers[0].Args)
	require.NotContains(t, pod.Labels, runstatus.InstanceLabel, "the hook Pod is not one of the run's")
	for _, o := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hook}, o), "%T created by helm test", o)
	}

	// What the Pod runs, as its ServiceAccount: the CLI with a kubeconfig of
	// the minted token, and the same reads with every request recorded.
	saCfg, saKC := saKubeconfig(t, env, ns, hook)
	sout, serr, code := nrl(t, append(append([]string{}, pod.Spec.Containers[0].Args...), "--kubeconfig", saKC)...)
	require.Equal(t, 0, code, "status as the hook's ServiceAccount:\n%s%s", sout, serr)
	require.Contains(t, sout, "running")
	rec := &recorder{}
	wrapped := rest.CopyConfig(saCfg)
	wrapped.WrapTransport = rec.wrap
	conn, err := kube.FromConfig(wrapped, ns, kube.Options{})
	require.NoError(t, err)
	rep, err := runstatus.Collect(ctx, conn, ns, rel, time.Now())
	require.NoError(t, err)
	assert.Equal(t, runstatus.Running, rep.Verdict, rep.Summary)
	assert.Empty(t, rep.Problems)
	assert.Len(t, rep.Pods, 5, "the run's Pods, not the hook's")
	require.NotEmpty(t, rec.seen)
	for _, s := range rec.seen {
		assert.True(t, strings.HasPrefix(s, "200 GET "), "every read status makes is allowed to the hook's Role: %s", s)
	}
	t.Logf("status as %s made %d requests:\n%s", hook, len(rec.seen), strings.Join(rec.seen, "\n"))

	// Read-only: the rules the ServiceAccount has in its namespace.
	saClient, err := client.New(saCfg, client.Options{Scheme: env.Client.Scheme()})
	require.NoError(t, err)
	ssrr := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}
	require.NoError(t, saClient.Create(ctx, ssrr))
	require.False(t, ssrr.Status.Incomplete, "the server's authorizer lists rules (RBAC): %s", ssrr.Status.EvaluationError)
	var granted []string
	for _, rule := range ssrr.Status.ResourceRules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					self := v == "create" && (g == "authorization.k8s.io" || g == "authentication.k8s.io") && strings.HasPrefix(res, "self")
					if !self { // every user may ask what it may do (system:basic-user)
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
	user := "system:serviceaccount:" + ns + ":" + hook
	sar := func(verb, group, resource, sub string) bool {
		t.Helper()
		r := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: sub}}}
		require.NoError(t, env.Client.Create(ctx, r))
		return r.Status.Allowed
	}
	assert.True(t, sar("list", "ray.io", "rayjobs", ""), "the review itself works")
	for _, res := range [][2]string{{"ray.io", "rayjobs"}, {"ray.io", "rayclusters"}, {"", "pods"}, {"", "configmaps"}, {"", "services"}, {"apps", "deployments"}, {"", "serviceaccounts"}, {"rbac.authorization.k8s.io", "roles"}} {
		for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
			assert.False(t, sar(verb, res[0], res[1], ""), "%s %s/%s", verb, res[0], res[1])
		}
	}
	for _, verb := range []string{"get", "list", "watch"} {
		assert.False(t, sar(verb, "", "secrets", ""), "%s secrets", verb)
	}
	assert.False(t, sar("create", "", "pods", "exec"), "pods/exec")
	assert.False(t, sar("get", "", "pods", "log"), "pods/log")

	// The Pod's container exits with status's code; the kubelet's report.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur corev1.Pod
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(&pod), &cur); err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase = corev1.PodSucceeded
		cur.Status.StartTime = &now
		cur.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "status", Image: cur.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: "Completed", StartedAt: now, FinishedAt: now}}}}
		return env.Client.Status().Update(ctx, &cur)
	}))
	select {
	case <-testDone:
		require.NoError(t, testErr, "helm test:\n%s", testOut.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("helm test did not finish:\n%s", testOut.String())
	}
	assert.Contains(t, testOut.String(), "Phase:          Succeeded")
	for _, o := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hook}, o)
		if err == nil && o.GetDeletionTimestamp() == nil {
			t.Errorf("%T %s still there after a passing helm test (hook-succeeded)", o, hook)
		}
	}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hook}, &corev1.Pod{}), "the Pod stays until the next helm test")

	t.Run("Pod Security restricted admits the hook Pod", func(t *testing.T) {
		const rns = "status-hook-restricted"
		require.NoError(t, env.CreateNamespace(ctx, rns, "restricted"))
		require.NoError(t, env.CreateServiceAccount(ctx, rns, hook))
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
