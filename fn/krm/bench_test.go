package krm_test

import (
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/krm"
)

// BenchmarkProcess100Runs: one invocation, 100 runs sharing their files.
func BenchmarkProcess100Runs(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		items := notLocal(nil, qwenFiles(b))
		for j := 0; j < 100; j++ {
			r := strings.Replace(qwenRun, "name: qwen3-30b-math-gb300", "name: run-"+strconv.Itoa(j), 1)
			items = append(items, node(b, strings.Replace(r, "  user: alice\n", "  user: alice\n  name: job-"+strconv.Itoa(j)+"\n", 1)))
		}
		rl := &framework.ResourceList{Items: items}
		b.StartTimer()
		if err := krm.Process(rl); err != nil {
			b.Fatal(err)
		}
	}
}
