package container_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// TestImageStatusInCluster: the chart's helm test Pod, as a container: the
// image runs the Pod's command and arguments (helm template of the chart's
// hook) with no kubeconfig, only what a kubelet gives a Pod (the
// ServiceAccount's token, CA and namespace mounted at
// /var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST
// and _PORT), as the image's non-root user on a read-only root with every
// capability dropped, against the real API server, authenticated as the
// hook's ServiceAccount with the chart's Role: it reports the run (exit 0).
// Without -n it reads the namespace from the mount; without the mount it
// finds no configuration (exit 2).
func TestImageStatusInCluster(t *testing.T) {
	e := env(t)
	helm := testenv.Tool(t, "NRL_HELM3")
	srv := apiserver.Shared(t)
	ctx := context.Background()
	const ns, rel = "incluster", "ic1"
	root := testenv.RepoRoot(t)
	require.NoError(t, srv.EnsureNamespace(ctx, ns))

	apply := func(stream []byte) {
		t.Helper()
		objs, err := fixtures.Decode(stream)
		require.NoError(t, err)
		require.NotEmpty(t, objs)
		for _, o := range objs {
			o.SetNamespace(ns)
			require.NoError(t, srv.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("nrl-test"), client.ForceOwnership), o.GetKind())
		}
	}
	// The run: what nrl-k8s render prints for it (the chart prints the same).
	code, out, errs := clirun.Run("render", filepath.Join(root, "recipes/examples/configs/recipes/llm/grpo-llama3.2-1b-instruct-1n8g-fsdp2tp1.v3.yaml"),
		"--infra", filepath.Join(root, "profiles/generic/grpo-llama3.2-1b-instruct-1n8g.single-node-8gpu.infra.yaml"),
		"--user", "alice", "-n", ns, "--name", rel)
	require.Equal(t, 0, code, errs)
	apply([]byte(out))

	// The hook's ServiceAccount, Role and RoleBinding, and its Pod, as the chart renders them.
	show := func(f string) []byte {
		t.Helper()
		cmd := exec.Command(helm, "template", rel, filepath.Join(root, "charts", "nemo-rl-run"), "-n", ns, "--set", "profile=generic-single-node-8gpu",
			"--set", "user=alice", "--set", "test.enabled=true", "--show-only", "templates/tests/"+f)
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
		b, err := cmd.Output()
		require.NoError(t, err)
		return b
	}
	for _, f := range []string{"status-test-serviceaccount.yaml", "status-test-role.yaml", "status-test-rolebinding.yaml"} {
		apply(show(f))
	}
	var pod corev1.Pod
	require.NoError(t, yaml.Unmarshal(show("status-test-pod.yaml"), &pod))
	ctr := pod.Spec.Containers[0]
	require.Equal(t, image, ctr.Image, "the chart's test.image is the image make image builds")

	// What the kubelet mounts into the Pod.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Spec.ServiceAccountName}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}
	require.NoError(t, srv.Client.SubResource("token").Create(ctx, sa, tr))
	mount := filepath.Join(t.TempDir(), "serviceaccount")
	require.NoError(t, os.MkdirAll(mount, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(mount), 0o755))
	for name, body := range map[string]string{"token": tr.Status.Token, "ca.crt": string(srv.Config.CAData), "namespace": ns} {
		require.NoError(t, os.WriteFile(filepath.Join(mount, name), []byte(body), 0o644))
	}
	u, err := url.Parse(srv.Config.Host)
	require.NoError(t, err)

	run := func(withMount bool, args ...string) (string, string, error) {
		t.Helper()
		podman := []string{"run", "--rm", "--network", "host", "--read-only", "--user", "65532:65532", "--cap-drop", "ALL",
			"--security-opt=no-new-privileges", "--entrypoint", ctr.Command[0]}
		if withMount {
			podman = append(podman, "-v", mount+":/var/run/secrets/kubernetes.io/serviceaccount:ro",
				"-e", "KUBERNETES_SERVICE_HOST="+u.Hostname(), "-e", "KUBERNETES_SERVICE_PORT="+u.Port())
		}
		cmd := e.command("podman", append(append(podman, image), args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	stdout, stderr, err := run(true, append(append([]string{}, ctr.Args...), "-o", "json")...)
	require.NoError(t, err, "the hook's command in the image:\n%s%s", stdout, stderr)
	var r runstatus.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	require.Equal(t, rel, r.Run)
	require.Len(t, r.RayJobs, 1)
	require.Equal(t, rel, r.RayJobs[0].Name)
	require.Empty(t, r.Problems, "no read refused")

	stdout, stderr, err = run(true, "status", rel, "-o", "json")
	require.NoError(t, err, "%s%s", stdout, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	require.Equal(t, ns, r.Namespace, "the namespace of the ServiceAccount mount")

	_, stderr, err = run(false, ctr.Args...)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 2, exit.ExitCode(), stderr)
	require.Contains(t, stderr, "kubeconfig")
}
