package runstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labelled adds the project's managed-by and part-of labels to a run
// object, as every render has them.
func labelled(obj, managedBy string) string {
	return strings.Replace(obj, `"app.kubernetes.io/instance":`, fmt.Sprintf(`"app.kubernetes.io/managed-by":%q,"app.kubernetes.io/part-of":"nemo-rl","app.kubernetes.io/instance":`, managedBy), 1)
}

// status without a run lists the namespace's runs: the distinct run
// labels of the project's RayJobs and RayClusters (and of what a stopped
// Kueue run leaves), sorted, each with its state, escaped; bounded.
func TestListRuns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster fakeCluster
		text    string
		notes   []string
	}{
		{
			name: "runs of nrl-k8s and of the chart, sorted; other charts' clusters are not runs",
			cluster: fakeCluster{
				jobsPath: list("ray.io/v1", "RayJob",
					labelled(job("zeta", "j1", "zeta", "", "zeta-c", "Running"), "nrl-k8s"),
					labelled(job("alpha", "j2", "alpha", `,"suspend":true`, "", "Suspended"), "Helm"),
					job("unlabelled", "j3", "unlabelled", "", "", "Running")),
				clustersPath: list("ray.io/v1", "RayCluster",
					labelled(cluster("zeta-c", "c1", "zeta", "RayJob/j1"), "nrl-k8s"),
					labelled(cluster("mid", "c2", "mid", ""), "Helm"),
					strings.Replace(labelled(cluster("other", "c3", "other", ""), "Helm"), `"nemo-rl"`, `"kuberay"`, 1)),
				"/apis/resource.nvidia.com/v1beta1/namespaces/ml/computedomains": list("resource.nvidia.com/v1beta1", "ComputeDomain",
					labelled(`{"apiVersion":"resource.nvidia.com/v1beta1","kind":"ComputeDomain",`+meta("kq-cd", "d1", "kq", "", "")+`}`, "nrl-k8s")),
			},
			text: "alpha stopped: the run is stopped (suspended, no Kueue queue): RayJob alpha (Suspended); state: run in its entry starts it again\n" +
				"kq stopped: no RayJob or RayCluster of the run, only ComputeDomain/kq-cd: a stopped Kueue run renders without them (state: run in its entry starts it again); if the run was deleted, delete these with it (docs/run-identity.md)\n" +
				"mid running: 1 RayCluster(s) ready\n" +
				"zeta running: RayJob zeta is Running (job New)\n",
		},
		{
			name: "a name with escapes is printed escaped",
			cluster: fakeCluster{jobsPath: list("ray.io/v1", "RayJob",
				strings.Replace(labelled(job("x", "j1", "RUN", "", "", "Running"), "nrl-k8s"), `"RUN"`, `"a\u001b[2Jb\nc"`, 1))},
			text: `a\x1b[2Jb\nc running: RayJob x is Running (job New)` + "\n",
		},
		{
			name:    "RayJobs refused, RayClusters read",
			cluster: fakeCluster{jobsPath: status(403, "Forbidden")},
			notes:   []string{"cannot list rayjobs (403 Forbidden): runs known by them may be missing"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ListRuns(context.Background(), conn(t, tc.cluster), "ml", time.Now())
			require.NoError(t, err)
			text, err := l.Format("text")
			require.NoError(t, err)
			assert.Equal(t, tc.text, text)
			assert.Equal(t, tc.notes, l.Notes)
			js, err := l.Format("json")
			require.NoError(t, err)
			var runs []RunLine
			require.NoError(t, json.Unmarshal([]byte(js), &runs), js)
			assert.Len(t, runs, strings.Count(tc.text, "\n"))
			again, _ := l.Format("json")
			assert.Equal(t, js, again)
		})
	}
}
