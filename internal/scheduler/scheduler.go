// Package scheduler runs the real kube-scheduler (v1.36.3, built by
// hack/apiserver.sh beside kube-apiserver) against the API server of
// internal/operator, where KubeRay's own reconcilers create a run's Pods,
// so a test sees where the scheduler puts them: bound to a node, or
// Pending with the scheduler's own reason (PodScheduled=False, a
// FailedScheduling Event). Its DynamicResourceAllocation plugins
// (GA in 1.34, DRAExtendedResource beta and on in 1.36) allocate the Pods'
// ResourceClaims from the ResourceSlices a fleet publishes.
//
// What does not run is stood in for, small and named (standins.go): the
// resourceclaim controller, the ComputeDomain controller's channel claim
// template, node readiness and PV binding; with Options.MarkReady, the
// kubelets' Running and Ready, from an informer on bound Pods (ready.go). KAI Scheduler does not run: the
// scheduler serves a profile named kai-scheduler with the default plugins,
// so Pods naming it are placed as kube-scheduler places Pods (no gang, no
// topology; fn/analyse/kai models what KAI would add).
//
// Test-only, as internal/operator.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Scheduler is a running kube-scheduler and the stand-ins beside it.
type Scheduler struct {
	cmd    *exec.Cmd
	log    *testenv.LogBuffer
	cancel context.CancelFunc
	done   chan struct{}
}

// Binary is kube-scheduler in the assets folder hack/apiserver.sh builds.
func Binary(assets string) (string, error) {
	p := filepath.Join(assets, "kube-scheduler")
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		return "", fmt.Errorf("%s: kube-scheduler not built; run ./hack/apiserver.sh (it builds kube-apiserver, kube-scheduler and etcd)", p)
	}
	return p, nil
}

// config is a KubeSchedulerConfiguration: one process, no leader election,
// the default profile and one named kai-scheduler with the same plugins,
// short backoffs so a Pod that becomes schedulable is retried promptly.
const config = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 200
  burst: 400
leaderElection:
  leaderElect: false
podInitialBackoffSeconds: 1
podMaxBackoffSeconds: %d
profiles:
  - schedulerName: default-scheduler
  - schedulerName: kai-scheduler
`

// Options change how a tier runs the scheduler.
type Options struct {
	// PercentageOfNodesToScore is the KubeSchedulerConfiguration field
	// (0: the scheduler's adaptive default). On 1,000 nodes the default
	// scores hundreds of feasible nodes per Pod and the DRA filter costs
	// ~260 ms per worker; 10 scores a tenth, as large clusters set it.
	PercentageOfNodesToScore int
	// MarkReady marks every bound Pod Running and Ready as a kubelet
	// would (markReady), so KubeRay submits the run's job and a test can
	// end it (operator.Dashboard.Finish).
	MarkReady bool
	// ShortBackoff retries a waiting Pod within ClusterDayBackoff of the
	// event that may let it fit (podMaxBackoffSeconds 1, not 2): a cluster
	// day waits that long after each run it ends.
	ShortBackoff bool
	// CollectOrphans deletes the Pods of deleted RayClusters as the
	// garbage collector would (collectOrphans).
	CollectOrphans bool
}

// Start runs kube-scheduler from assets against env's API server, and the
// stand-ins. Stop ends both.
func Start(env *operator.Env, assets string) (*Scheduler, error) {
	return StartWith(env, assets, Options{})
}

// StartWith is Start with opts.
func StartWith(env *operator.Env, assets string, opts Options) (*Scheduler, error) {
	bin, err := Binary(assets)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nrl-scheduler-")
	if err != nil {
		return nil, err
	}
	kc, err := env.Server.WriteKubeconfig(dir)
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "scheduler.yaml")
	backoff := 2
	if opts.ShortBackoff {
		backoff = 1
	}
	text := fmt.Appendf(nil, config, kc, backoff)
	if opts.PercentageOfNodesToScore > 0 {
		text = fmt.Appendf(text, "percentageOfNodesToScore: %d\n", opts.PercentageOfNodesToScore)
	}
	if err := os.WriteFile(cfg, text, 0o600); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{log: &testenv.LogBuffer{}, cancel: cancel, done: make(chan struct{})}
	s.cmd = exec.CommandContext(ctx, bin, "--config="+cfg, "--secure-port=0", "--v=2")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	if opts.MarkReady {
		if err := markReady(ctx, env); err != nil {
			cancel()
			return nil, errors.Join(fmt.Errorf("the Running/Ready stand-in: %w", err), s.cmd.Wait())
		}
	}
	if opts.CollectOrphans {
		if err := collectOrphans(ctx, env); err != nil {
			cancel()
			return nil, errors.Join(fmt.Errorf("the garbage collector stand-in: %w", err), s.cmd.Wait())
		}
	}
	go func() {
		defer close(s.done)
		standIns(ctx, env)
	}()
	return s, nil
}

// Log is what kube-scheduler printed (for a failing test's output).
func (s *Scheduler) Log() string { return s.log.String() }

// Stop ends kube-scheduler and the stand-ins.
func (s *Scheduler) Stop() error {
	s.cancel()
	<-s.done
	err := s.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) || errors.Is(err, context.Canceled) {
		return nil // killed, as asked
	}
	return err
}

// ClusterDayBackoff is the longest a Pod waits to be retried under
// Options.ShortBackoff.
const ClusterDayBackoff = time.Second

// standInPeriod is how often the stand-ins look for work.
const standInPeriod = 100 * time.Millisecond

var shared = fixtures.Env[*Scheduler]{
	Name: "the scheduling tier",
	Start: func(t testing.TB) (*Scheduler, error) {
		assets, err := apiserver.Assets()
		if err != nil {
			return nil, err
		}
		return StartWith(operator.Shared(t), assets, sharedOptions())
	},
	Stop: (*Scheduler).Stop,
}

// sharedOptions: the cluster-day tier (NRL_CLUSTER_DAY set, make
// cluster-day-test) scores a tenth of the nodes, as a 1,000-node cluster
// is run, and retries waiting Pods sooner; the other tiers keep the
// scheduler's defaults.
func sharedOptions() Options {
	if os.Getenv("NRL_CLUSTER_DAY") != "" {
		return Options{PercentageOfNodesToScore: 10, ShortBackoff: true}
	}
	return Options{}
}

// Shared is the package's scheduler, started once beside operator.Shared's
// API server (skipped or failed as that tier is).
func Shared(t testing.TB) (*operator.Env, *Scheduler) {
	t.Helper()
	env := operator.Shared(t)
	return env, shared.Get(t)
}

// StopShared stops the scheduler and the operator tier's Env; call it
// from TestMain after m.Run.
func StopShared() error { return errors.Join(shared.StopStarted(), operator.StopShared()) }
