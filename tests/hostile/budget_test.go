package hostile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bomb is a flow list whose aliases expand to about 10^levels nodes in a
// few hundred bytes.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("[&a0 [1,1,1,1,1,1,1,1,1,1]")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, ", &a%d [%s]", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	b.WriteString("]")
	return b.String()
}

// Budgets are per run and per job, each a clear error naming the run; the
// world's run() asserts every probe stays under MaxRSS.
func TestBudgets(t *testing.T) {
	for _, p := range []struct {
		name  string
		setup func(w *world)
		args  []string
		want  string
	}{
		{name: "overrides that each expand an alias bomb under the per-document bound",
			setup: func(w *world) {
				w.file("runs/ov/run.yaml", customRun("ov", "../../configs/r.yaml", "../../configs/p.infra.yaml",
					"  namespace: other\n  overrides: ['+a.x="+bomb(6)+"', '+a.y="+bomb(6)+"']\n"))
			},
			want: "ov: error: +a.y="},
		{name: "a defaults chain of files that each expand an alias bomb",
			setup: func(w *world) {
				w.file("configs/b0.yaml", "pad: "+bomb(6)+"\n"+recipeYAML)
				w.file("configs/b1.yaml", "defaults: b0.yaml\npad1: "+bomb(6)+"\n")
				w.file("runs/chainbomb/run.yaml", customRun("chainbomb", "../../configs/b1.yaml", "../../configs/p.infra.yaml", "  namespace: other\n"))
			},
			want: "expand to more than 2000000 YAML nodes together"},
		{name: "committed manifests over the per-command total",
			setup: func(w *world) {
				pad := strings.Repeat("# padding padding padding padding padding padding\n", 15<<20/50)
				for i := 0; i < 3; i++ {
					w.file(fmt.Sprintf("manifests/m%d.yaml", i), pad)
				}
			},
			want: "the rendered files read add up to more than 33554432 bytes"},
		{name: "a ResourceList of 100k items on the function's stdin",
			setup: func(w *world) {
				var b strings.Builder
				b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
				for i := 0; i < 100_000; i++ {
					fmt.Fprintf(&b, "- {kind: A, metadata: {name: n%d}}\n", i)
				}
				w.stdin = b.String()
			},
			args: []string{"fn"},
			want: "the function's input (stdin) is over the 2097152-byte limit"},
		{name: "a ResourceList naming one 999-group profile from 7,500 runs",
			setup: func(w *world) { w.stdin = manyRunsOfOneBigProfile(999, 7500) },
			args:  []string{"fn"},
			want:  "the runs of this call render more than 33554432 bytes together"},
	} {
		t.Run(p.name, func(t *testing.T) {
			w := newWorld(t)
			p.setup(w)
			cmds := [][]string{p.args}
			if p.args == nil {
				cmds = [][]string{{"render-all", ".", "--check"}, {"render-all", "."}}
			}
			for _, args := range cmds {
				r := w.run(args...)
				clean(t, r)
				require.Equal(t, 1, r.code, "%v\nstderr: %s", args, r.stderr)
				require.Contains(t, r.stderr, p.want, "%v", args)
				// Generous: the shared machine runs other builds; unloaded
				// these take a few seconds.
				require.Less(t, r.took, 45*time.Second, "%v", args)
				t.Logf("%v: %v, peak RSS %d MB", args, r.took, r.maxRSS>>20)
			}
		})
	}
}

// Four runs of 2 MiB of the worst-shaped input each (over the job's
// in-flight budget) in one render-all: the job's budget serialises them
// (concurrency weighted by input size), so memory stays under MaxRSS
// whatever the core count.
func TestFourRunsAtTheRunLimit(t *testing.T) {
	w := newWorld(t)
	// Flow lists: the worst bytes-to-memory shape (docs/reliability.md).
	line := "- [" + strings.TrimSuffix(strings.Repeat("a, ", 40), ", ") + "]\n"
	pad := "pad:\n" + strings.Repeat(line, (1000<<10)/len(line))
	for i := 0; i < 4; i++ {
		for j := 0; j < 2; j++ {
			content := fmt.Sprintf("defaults: big%d_%d.yaml\n", i, j-1)
			if j == 0 {
				content = recipeYAML
			}
			w.file(fmt.Sprintf("configs/big%d_%d.yaml", i, j), content+strings.Replace(pad, "pad:", fmt.Sprintf("pad%d:", j), 1))
		}
		name := fmt.Sprintf("big%d", i)
		w.file("runs/"+name+"/run.yaml", customRun(name, fmt.Sprintf("../../configs/big%d_1.yaml", i), "../../configs/p.infra.yaml", "  namespace: "+name+"\n"))
	}
	r := w.run("render-all", ".", "--check")
	t.Logf("render-all --check: exit %d in %v, peak RSS %d MB", r.code, r.took, r.maxRSS>>20)
	clean(t, r)
	require.Less(t, r.maxRSS, int64(MaxRSS))
}

// manyRunsOfOneBigProfile is a ResourceList of 1.4 MB: one profile of
// groups worker groups (segmentSize 1) and runs NemoRLRuns naming it. Each
// run is small; together they would render gigabytes.
func manyRunsOfOneBigProfile(groups, runs int) string {
	var b strings.Builder
	profile := strings.Replace(strings.Replace(profileYAML, "segmentSize: 2", "segmentSize: 1", 1), "replicas: 2", fmt.Sprintf("replicas: %d", groups), 1)
	indent := func(s string) string {
		return "      " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n      ") + "\n"
	}
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	b.WriteString("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cfg\n    annotations: {nemo-rl.nvidia.com/files-dir: cfg, config.kubernetes.io/local-config: \"true\"}\n  data:\n")
	b.WriteString("    r.yaml: |\n" + indent(strings.Replace(recipeYAML, "num_nodes: 2", fmt.Sprintf("num_nodes: %d", groups), 1)))
	b.WriteString("    p.infra.yaml: |\n" + indent(profile))
	for i := range runs {
		fmt.Fprintf(&b, "- {apiVersion: nemo-rl.nvidia.com/v1alpha1, kind: NemoRLRun, metadata: {name: r%d}, spec: {recipe: cfg/r.yaml, profile: cfg/p.infra.yaml, user: alice}}\n", i)
	}
	return b.String()
}
