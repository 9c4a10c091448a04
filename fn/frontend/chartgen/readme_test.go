package chartgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/chartgen"
)

// The profile table's queue column says which scheduler reads the queue
// the run is labelled with and whether the `queue` value can change it: a
// Kueue profile's LocalQueue is its own (the chart refuses `queue`), not
// "no scheduler.queue".
func TestReadmeQueueColumn(t *testing.T) {
	rayjob := func(unavailable map[string]string) map[string]*chartgen.RenderMeta {
		return map[string]*chartgen.RenderMeta{"rayjob": {Unavailable: unavailable}}
	}
	refused := map[string]string{chartgen.KnobQueue: "refused"}
	for _, tc := range []struct {
		name string
		pm   chartgen.ProfileMeta
		want string
	}{
		{"Kueue", chartgen.ProfileMeta{Queues: []chartgen.QueueRef{{Scheduler: "Kueue", Name: "lab-queue"}}, Renders: rayjob(refused)},
			"| Kueue LocalQueue `lab-queue`, the profile's (`queue` is refused) |"},
		{"KAI, settable", chartgen.ProfileMeta{Queues: []chartgen.QueueRef{{Scheduler: "KAI", Name: "research", Settable: true}}, Renders: rayjob(nil)},
			"| KAI queue `research` (`queue` sets it) |"},
		{"KAI in the pod templates", chartgen.ProfileMeta{Queues: []chartgen.QueueRef{{Scheduler: "KAI", Name: "rl"}}, Renders: rayjob(refused)},
			"| KAI queue `rl`, the profile's (`queue` is refused) |"},
		{"none", chartgen.ProfileMeta{Renders: rayjob(refused)}, "| — (no queue) |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := &chartgen.Index{Profiles: []chartgen.Entry{{Name: "p", Description: "d"}}}
			meta := &chartgen.Meta{Profiles: map[string]*chartgen.ProfileMeta{"p": &tc.pm}}
			out, err := chartgen.Readme([]byte("<!-- BEGIN GENERATED PROFILES (nrl-k8s chart-data) -->\n<!-- END GENERATED PROFILES -->\n"), idx, meta)
			require.NoError(t, err)
			require.Contains(t, string(out), tc.want)
		})
	}
}

// The committed chart README says so for the packaged Kueue profile
// (TestChartDataFresh holds the whole table to the generator).
func TestChartReadmeKueueRow(t *testing.T) {
	atRoot(t)
	b, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| `h100-kueue-2n8g` |") {
			require.Contains(t, line, "| Kueue LocalQueue `lab-queue` (`queue` sets it) |")
			return
		}
	}
	t.Fatal("no h100-kueue-2n8g row in the chart README")
}
