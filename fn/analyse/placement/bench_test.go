package placement

import (
	"fmt"
	"testing"
)

// BenchmarkPlaceClusterDay places a day's worth of runs on the issue's
// 1,000-node fleet: 250 NVL72 racks of 4 GB300 nodes (8 NICs each) and a
// CPU pool of 21 nodes; 200 runs, half KAI gangs whose 4 workers are
// required in one rack, half default-scheduler runs of 3 workers, each
// with a CPU head of 60 CPUs: the CPU pool holds 21 heads, so most runs
// wait, and the cost of a waiting gang (every rack tried) is in the figure.
func BenchmarkPlaceClusterDay(b *testing.B) {
	nic := map[string]int64{"roce": 8}
	runs := make([]Run, 200)
	for i := range runs {
		if i%2 == 0 {
			w := worker("w", 4, 4, nic)
			w.Required = "rack"
			runs[i] = Run{Name: fmt.Sprint("gang-", i), Gang: true, Shapes: []Shape{head(), w}}
		} else {
			runs[i] = Run{Name: fmt.Sprint("pods-", i), Shapes: []Shape{head(), worker("w", 3, 4, nic)}}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		f := racks(250, 4)
		for i := range 20 {
			f.Nodes = append(f.Nodes, node(fmt.Sprint("cpu-", i), map[string]string{"cpu": "yes"}, 0, nil))
		}
		b.StartTimer()
		f.Place(runs)
	}
}
