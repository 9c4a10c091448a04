package runstatus

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJudge(t *testing.T) {
	podSecurity := Problem{Object: "RayCluster/rc", Reason: "FailedToCreateWorkerPod", Message: `pods "w" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities`}
	cases := []struct {
		name    string
		r       Report
		verdict Verdict
		says    string
	}{
		{"initializing, no cause", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Initializing"}}}, Progressing, "no obstacle"},
		{"new RayJob", Report{RayJobs: []RayJob{{Name: "j"}}}, Progressing, "is New"},
		{"initializing, Pod Security", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Initializing"}}, Problems: []Problem{podSecurity}}, Stuck, "violates PodSecurity"},
		{"running", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Running", JobStatus: "RUNNING"}}}, Running, "Running (job RUNNING)"},
		{"running with a refused worker", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Running"}}, Problems: []Problem{podSecurity}}, Stuck, "FailedToCreateWorkerPod"},
		{"failed", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Failed", Reason: "AppFailed", Message: "exit 1"}}}, Failed, "AppFailed exit 1"},
		{"complete, succeeded", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Complete", JobStatus: "SUCCEEDED", Cleanup: "done"}}}, Succeeded, "cleanup done"},
		{"complete, job failed", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Complete", JobStatus: "FAILED"}}}, Failed, "job status FAILED"},
		{"suspended", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Suspended"}}}, Suspended, "Suspended"},
		{"stopped by its spec", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Suspended", Stopped: true}}}, Stopped, "the run is stopped (suspended, no Kueue queue): RayJob j (Suspended); no Pod runs"},
		{"stopping", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Suspending", Stopped: true}}, Pods: []Pod{{Name: "p"}}}, Stopped, "KubeRay is deleting its 1 Pod(s)"},
		{"stopped after it ended", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Complete", JobStatus: "SUCCEEDED", Stopped: true}}}, Succeeded, "succeeded"},
		{"stopped RayCluster", Report{RayClusters: []RayCluster{{Name: "a", State: "suspended", Stopped: true}}}, Stopped, "RayCluster a; no Pod runs"},
		{"clusters ready", Report{RayClusters: []RayCluster{{Name: "a", State: "ready"}, {Name: "b", State: "ready"}}}, Running, "2 RayCluster(s) ready"},
		{"cluster starting", Report{RayClusters: []RayCluster{{Name: "a", State: "ready"}, {Name: "b"}}}, Progressing, "1 of 2"},
		{"cluster refused", Report{RayClusters: []RayCluster{{Name: "a"}}, Problems: []Problem{podSecurity}}, Stuck, "violates PodSecurity"},
		{"pending pod", Report{RayClusters: []RayCluster{{Name: "a"}}, Problems: []Problem{{Object: "Pod/p", Reason: "Pending", Message: "Unschedulable: 0/3 nodes"}}}, Stuck, "Unschedulable"},
		{"only deployments", Report{Deployments: []Deployment{{Name: "d"}}}, Progressing, "other objects"},
		{"Kueue run stopped, or deleted but its ConfigMap", Report{Others: []Object{{Kind: "ConfigMap", Name: "r-recipe"}}}, Stopped, "no RayJob or RayCluster of the run, only ConfigMap/r-recipe: a stopped Kueue run"},
		{"queued in Kueue", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Suspended"}}, Admissions: []Admission{{Object: "RayJob/j", Kind: "Workload", Name: "w", State: AdmissionQueued, Queue: "lab", Reason: "Pending", Message: "insufficient quota for nvidia.com/gpu"}}}, Queued, "RayJob/j Workload queued (queue lab): Pending: insufficient quota"},
		{"admitted, suspended by hand", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Suspended"}}, Admissions: []Admission{{Object: "RayJob/j", Kind: "Workload", State: AdmissionAdmitted}}}, Suspended, "Suspended"},
		{"KAI cannot place the gang yet", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Initializing"}}, Admissions: []Admission{{Object: "RayJob/j", Kind: "PodGroup", State: AdmissionUnschedulable, Message: "queue rl quota"}}}, Queued, "PodGroup unschedulable"},
		{"running, Kueue's Workloads unreadable", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Running"}}, Problems: []Problem{{Object: "workloads", Reason: "Forbidden", Message: "cannot list workloads"}}}, Running, "Running"},
		{"initializing, its Pods unreadable", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Initializing"}}, Problems: []Problem{{Object: "pods", Reason: "Forbidden", Message: "cannot list pods"}}}, Stuck, "cannot list pods"},
		{"running RayJob being deleted", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Running", JobStatus: "RUNNING", Deletion: Deletion{Deleting: true, Finalizers: []string{"ray.io/rayjob-finalizer"}}}}}, Deleting, "RayJob j is being deleted (waiting on finalizers ray.io/rayjob-finalizer)"},
		{"failed RayJob being deleted", Report{RayJobs: []RayJob{{Name: "j", JobDeploymentStatus: "Failed", Deletion: Deletion{Deleting: true}}}}, Deleting, "RayJob j is being deleted"},
		{"ready RayCluster being deleted", Report{RayClusters: []RayCluster{{Name: "a", State: "ready"}, {Name: "b", State: "ready", Deletion: Deletion{Deleting: true}}}}, Deleting, "RayCluster b is being deleted"},
		{"informational event", Report{RayClusters: []RayCluster{{Name: "a"}}, Problems: []Problem{{Object: "RayCluster/a", Reason: "Scaled", Message: "x"}}}, Progressing, "0 of 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, s := judge(c.r)
			assert.Equal(t, c.verdict, v)
			assert.Contains(t, s, c.says)
		})
	}
}

func TestExitCodes(t *testing.T) {
	for v, code := range map[Verdict]int{Deleting: 0, Running: 0, Succeeded: 0, Progressing: 0, Suspended: 0, Stopped: 0, Queued: 0, Stuck: 1, Failed: 1, NotFound: 3} {
		assert.Equal(t, code, v.Exit(), v)
	}
}

// Cluster text is data: an event message with a newline cannot start a
// line of its own in the report.
func TestTextEscapesClusterText(t *testing.T) {
	r := Report{Run: "r", Namespace: "ns", Verdict: Stuck, Summary: "s",
		Problems: []Problem{{Object: "Pod/p", Reason: "Failed", Message: "boom\n::error::forged\r<!-- hidden"}}}
	out := r.Text()
	for _, line := range strings.Split(out, "\n") {
		assert.False(t, strings.HasPrefix(line, "::"), "line %q", line)
		assert.False(t, strings.HasPrefix(line, "<!--"), "line %q", line)
	}
	assert.Contains(t, out, `boom\n::error::forged\r<!-- hidden`)
}
