package check

import (
	"fmt"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
)

// One defect per case against a job KubeRay admits; every rule broken is
// reported (KubeRay stops at the first). tests/admission holds these rules
// to KubeRay's own code.
func TestKubeRayRules(t *testing.T) {
	const head = "headGroupSpec: {template: {spec: {containers: [{name: ray%s}]%s}}%s}"
	spec := func(headEnv, headSpec, headGroup, rest string) string {
		return "{" + fmt.Sprintf(head, headEnv, headSpec, headGroup) + rest + "}"
	}
	ok := spec("", "", "", "")
	for _, tc := range []struct {
		name, kind, obj string
		want            []string // a substring of each finding, in order
	}{
		{"valid job", "RayJob", "metadata: {name: j}\nspec: {shutdownAfterJobFinishes: true, rayClusterSpec: " + ok + "}", nil},
		{"valid cluster", "RayCluster", "metadata: {name: c}\nspec: " + ok, nil},
		{"job name too long", "RayJob", "metadata: {name: " + strings.Repeat("j", MaxRayJobName+1) + "}\nspec: {rayClusterSpec: " + ok + "}", []string{"characters; expected at most 47"}},
		{"cluster name not DNS-1035", "RayCluster", "metadata: {name: 1c}\nspec: " + ok, []string{"is not a DNS-1035 label"}},
		{"suspend without shutdown", "RayJob", "metadata: {name: j}\nspec: {suspend: true, rayClusterSpec: " + ok + "}", []string{"needs spec.shutdownAfterJobFinishes"}},
		{"TTL without shutdown", "RayJob", "metadata: {name: j}\nspec: {ttlSecondsAfterFinished: 5, rayClusterSpec: " + ok + "}", []string{"a TTL needs shutdownAfterJobFinishes"}},
		{"negative TTL", "RayJob", "metadata: {name: j}\nspec: {shutdownAfterJobFinishes: true, ttlSecondsAfterFinished: -1, rayClusterSpec: " + ok + "}", []string{"expected a non-negative integer"}},
		{"deletion strategy", "RayJob", "metadata: {name: j}\nspec: {shutdownAfterJobFinishes: true, deletionStrategy: {}, rayClusterSpec: " + ok + "}", []string{"RayJobDeletionPolicy feature gate"}},
		{"no cluster at all", "RayJob", "metadata: {name: j}\nspec: {}", []string{"one of spec.rayClusterSpec or spec.clusterSelector"}},
		{"selector without cluster name", "RayJob", "metadata: {name: j}\nspec: {clusterSelector: {a: b}, submissionMode: SidecarMode}",
			[]string{"must name the cluster", "not supported with submissionMode SidecarMode"}},
		{"interactive backoff", "RayJob", "metadata: {name: j}\nspec: {submissionMode: InteractiveMode, backoffLimit: 1, rayClusterSpec: " + ok + "}", []string{"backoffLimit is not supported"}},
		{"sidecar head restarts", "RayJob", "metadata: {name: j}\nspec: {submissionMode: SidecarMode, rayClusterSpec: " + spec("", ", restartPolicy: Always", "", "") + "}", []string{"SidecarMode needs Never"}},
		{"runtime env not a mapping", "RayJob", "metadata: {name: j}\nspec: {runtimeEnvYAML: '[a', rayClusterSpec: " + ok + "}", []string{"is not a YAML mapping"}},
		{"deadline zero, backoff negative", "RayJob", "metadata: {name: j}\nspec: {activeDeadlineSeconds: 0, backoffLimit: -1, rayClusterSpec: " + ok + "}",
			[]string{"activeDeadlineSeconds is 0", "backoffLimit is -1"}},
		{"head without container", "RayCluster", "metadata: {name: c}\nspec: {headGroupSpec: {template: {spec: {containers: []}}}}", []string{"headGroupSpec has no container"}},
		{"resources twice", "RayCluster", "metadata: {name: c}\nspec: " + spec("", "", ", rayStartParams: {num-cpus: '1'}, resources: {CPU: '1'}", ""), []string{"sets resources in both"}},
		{"labels in rayStartParams, bad label", "RayCluster", "metadata: {name: c}\nspec: " + spec("", "", ", rayStartParams: {labels: x}, labels: {'a b': c}", ""),
			[]string{"rayStartParams[labels] is not supported", `label key "a b"`}},
		{"worker without container, suspended", "RayCluster", "metadata: {name: c}\nspec: " + spec("", "", "", ", workerGroupSpecs: [{groupName: w, suspend: true, template: {spec: {containers: []}}}]"),
			[]string{"(w) has no container", "(w) is suspended"}},
		{"redis address without fault tolerance", "RayCluster", "metadata: {name: c}\nspec: " + spec(", env: [{name: RAY_REDIS_ADDRESS, value: r}]", "", "", ""), []string{"enables GCS fault tolerance implicitly"}},
		{"fault tolerance twice", "RayCluster", "metadata: {name: c, annotations: {ray.io/ft-enabled: 'true'}}\nspec: " + spec(", env: [{name: REDIS_USERNAME, value: u}]", "", "", ", gcsFaultToleranceOptions: {redisAddress: r}"),
			[]string{"use gcsFaultToleranceOptions only", "redis username"}},
		{"autoscaler v2 env without autoscaling", "RayCluster", "metadata: {name: c}\nspec: " + spec(", env: [{name: RAY_enable_autoscaler_v2, value: '1'}]", "", "", ""), []string{"needs enableInTreeAutoscaling"}},
		{"autoscaler v2 with restarting workers", "RayCluster", "metadata: {name: c}\nspec: " + spec("", "", "", ", enableInTreeAutoscaling: true, autoscalerOptions: {version: v2}, workerGroupSpecs: [{groupName: w, template: {spec: {restartPolicy: Always, containers: [{name: w}]}}}]"),
			[]string{"(w) restartPolicy is \"Always\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if tc.kind == "RayJob" {
				got = KubeRayRules(objOf[rayv1.RayJob](t, tc.obj))
			} else {
				got = KubeRayRules(objOf[rayv1.RayCluster](t, tc.obj))
			}
			require.Len(t, got, len(tc.want), "%q", got)
			for i, w := range tc.want {
				require.Contains(t, got[i], w)
			}
		})
	}
}
