package kueue_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/kueue"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// TestHelmStopFreesQuota: the chart's state value on a Kueue run, with the
// pinned Helm 3 and 4. Two releases of the H100 Kueue profile (16 GPUs
// each) share a ClusterQueue of 16: the first is admitted, the second
// queued. helm upgrade --reuse-values --set state=stopped of the first
// renders no RayJob, so Helm deletes it, its Workload goes and Kueue admits
// the second; --set state=run installs the first again, queued behind the
// second.
func TestHelmStopFreesQuota(t *testing.T) {
	env, k := kueue.Shared(t)
	ctx := context.Background()
	kc, err := env.Server.WriteKubeconfig(t.TempDir())
	require.NoError(t, err)
	chart := filepath.Join(testenv.RepoRoot(t), "charts", "nemo-rl-run")
	for i, tool := range []string{"NRL_HELM3", "NRL_HELM4"} {
		t.Run(tool, func(t *testing.T) {
			bin := testenv.Tool(t, tool)
			ns := fmt.Sprintf("kq-helm%d", i+3)
			queue(t, env, ns, "lab-helm"+fmt.Sprint(i+3), "16")
			helm := func(args ...string) string {
				t.Helper()
				cmd := exec.Command(bin, append(args, "--kubeconfig", kc, "-n", ns)...)
				cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "helm %s:\n%s", strings.Join(args, " "), out)
				return string(out)
			}
			run := []string{chart, "--set", "profile=h100-kueue-2n8g", "--set", "user=" + fixtures.User}
			helm(append([]string{"install", "kq-first"}, run...)...)
			admitted(t, env, k, ns, "kq-first")
			helm(append([]string{"install", "kq-second"}, run...)...)
			time.Sleep(2 * time.Second) // give Kueue time to act on it
			assert.True(t, rayJob(t, env, ns, "kq-second").Spec.Suspend, "the second run was admitted beside the first: the quota is 16 GPUs")

			helm("upgrade", "kq-first", chart, "--reuse-values", "--set", "state=stopped")
			require.NoError(t, operator.Wait(ctx, waitFor, "the first run's RayJob to go", func(ctx context.Context) (bool, string, error) {
				if err := env.CollectOrphans(ctx, ns); err != nil {
					return false, "", err
				}
				err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kq-first"}, &rayv1.RayJob{})
				return apierrors.IsNotFound(err), fmt.Sprint(err), client.IgnoreNotFound(err)
			}))
			require.NoError(t, env.CollectOrphans(ctx, ns)) // its Workload, once it is gone
			admitted(t, env, k, ns, "kq-second")

			helm("upgrade", "kq-first", chart, "--reuse-values", "--set", "state=run")
			time.Sleep(2 * time.Second) // give Kueue time to act on it
			assert.True(t, rayJob(t, env, ns, "kq-first").Spec.Suspend, "started again, the first run queues behind the second")
			assert.False(t, rayJob(t, env, ns, "kq-second").Spec.Suspend, "the second run was suspended again")
			helm("uninstall", "kq-first")
			helm("uninstall", "kq-second")
		})
	}
}
