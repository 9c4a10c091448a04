package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
)

// levels are the Pod Security levels, least restrictive first.
var levels = []string{"privileged", "baseline", "restricted"}

// checkReport is what the experiment reads from `check -o json`.
type checkReport struct {
	Valid       bool `json:"valid"`
	PodSecurity *struct {
		Level      string `json:"level"`
		Violations []struct {
			Object, Path, Level, Check, Detail string
		} `json:"violations"`
	} `json:"podSecurity"`
	Prerequisites []struct {
		Kind, Name string
	} `json:"prerequisites"`
}

// checkJSON runs `nrl-k8s check ... -o json` on a shipped profile, as a
// user would before applying it.
func checkJSON(t *testing.T, p chartgen.Entry) checkReport {
	t.Helper()
	code, out, errs := clirun.Run("check", p.Recipe, "--infra", p.Profile, "--user", "alice", "-o", "json")
	require.Equal(t, cli.ExitOK, code, "check %s: %s", p.Name, errs)
	var r checkReport
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	require.True(t, r.Valid)
	require.NotNil(t, r.PodSecurity, "check -o json reports no podSecurity")
	require.Contains(t, levels, r.PodSecurity.Level)
	return r
}

// The namespace-label experiment: for every shipped profile and each
// level, a namespace labelled pod-security.kubernetes.io/enforce=<level>
// admits the Pods KubeRay creates for the run exactly when `check` says the
// run fits that level. The run's ServiceAccounts are the ones check lists
// as prerequisites, so a run refused here is refused by Pod Security alone.
func TestPodSecurityLevelAgreesWithCheck(t *testing.T) {
	env := operator.Shared(t)
	type trial struct {
		profile chartgen.Entry
		level   int // index in levels
		needs   int // what check said, index in levels
		report  checkReport
		objs    []*unstructured.Unstructured
		applied error
	}
	var trials []trial
	for _, p := range fixtures.Shipped(t) {
		report := checkJSON(t, p)
		objs := fixtures.Objects(t, fixtures.Request(p, fixtures.As(runparams.RayJob)))
		var sas []string
		for _, pr := range report.Prerequisites {
			if pr.Kind == "ServiceAccount" {
				sas = append(sas, pr.Name)
			}
		}
		for i, level := range levels {
			ns := fixtures.NamespaceFor("psa-" + level + "-" + p.Name)
			trials = append(trials, trial{p, i, slices.Index(levels, report.PodSecurity.Level), report, objs,
				env.SetUp(context.Background(), ns, level, sas, objs)})
		}
	}
	for _, tr := range trials {
		level := levels[tr.level]
		t.Run(tr.profile.Name+"/"+level, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, tr.applied)
			err := admitted(t, env, fixtures.NamespaceFor("psa-"+level+"-"+tr.profile.Name), tr.objs)
			t.Logf("check: needs %s (%d violations); namespace enforces %s; admitted: %v",
				tr.report.PodSecurity.Level, len(tr.report.PodSecurity.Violations), level, err == nil)
			// levels runs from most to least privileged: a namespace
			// enforcing levels[i] admits a run needing levels[j] when j >= i.
			if tr.needs >= tr.level {
				require.NoError(t, err, "check says the run fits %s, but the namespace refused it", level)
				return
			}
			require.Error(t, err, "check says the run needs %s, but a %s namespace admitted every Pod", tr.report.PodSecurity.Level, level)
			require.Contains(t, err.Error(), `violates PodSecurity "`+level+`:latest"`)
		})
	}
}

// admitted returns nil when every Pod of the run was admitted in ns: the
// Pods KubeRay creates for its RayJobs and RayClusters, and for each
// Deployment a Pod from its template as the ReplicaSet controller would
// create it (server-side dry-run: there is no controller manager).
func admitted(t *testing.T, env *operator.Env, ns string, objs []*unstructured.Unstructured) error {
	t.Helper()
	ctx := context.Background()
	var refusals []string
	for _, u := range objs {
		switch u.GetKind() {
		case "RayJob", "RayCluster":
			name := u.GetName()
			if u.GetKind() == "RayJob" {
				var err error
				name, err = env.RayClusterOf(ctx, ns, name, createTimeout)
				require.NoError(t, err)
			}
			_, err := env.WaitForCluster(ctx, ns, name, createTimeout)
			if _, ok := operator.AsRefused(err); ok {
				refusals = append(refusals, err.Error())
				continue
			}
			require.NoError(t, err)
		case "Deployment":
			tmpl, found, err := unstructured.NestedMap(u.Object, "spec", "template")
			require.NoError(t, err)
			require.True(t, found)
			pod := &corev1.Pod{}
			tp := fixtures.Typed[corev1.PodTemplateSpec](t, tmpl)
			pod.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: u.GetName() + "-standin", Labels: tp.Labels, Annotations: tp.Annotations}
			pod.Spec = tp.Spec
			if err := env.Client.Create(ctx, pod, client.DryRunAll); err != nil {
				refusals = append(refusals, "Deployment "+u.GetName()+": "+err.Error())
			}
		}
	}
	if len(refusals) > 0 {
		return errors.New(strings.Join(refusals, "\n"))
	}
	return nil
}
