package pipeline_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
)

// The Pod Security level every shipped profile needs, as the upstream
// library judges the pods KubeRay creates: the GB300 workers add IPC_LOCK
// (RDMA), which baseline refuses; the kind profile mounts a hostPath; the
// others fit baseline. No pod of any profile fits restricted (no
// securityContext asks for it), and the dev pod fits baseline everywhere.
func TestShippedProfilesPodSecurity(t *testing.T) {
	type want struct {
		level    podsecurity.Level
		baseline []string // the checks baseline refuses
		detail   string   // in every baseline refusal's detail
	}
	gb300 := want{podsecurity.Privileged, []string{"capabilities_baseline"}, `"IPC_LOCK"`}
	wants := map[string]want{
		"gb300-qwen3-30b-math-4n-4gpu": gb300,
		"gb300-ultra-64n-pipeclean":    gb300,
		"gb300-ultra-48n-pipeclean":    gb300,
		"generic-single-node-8gpu":     {level: podsecurity.Baseline},
		"h100-nfs-2n8g":                {level: podsecurity.Baseline},
		"h100-kueue-2n8g":              {level: podsecurity.Baseline},
		"h200-research-16n8g":          {level: podsecurity.Baseline},
		"kind-hostpath-1n1g":           {podsecurity.Privileged, []string{"hostPathVolumes"}, "host-data"},
	}
	shipped := fixtures.Shipped(t)
	require.Len(t, shipped, len(wants), "a new shipped profile needs its expected level here")
	for _, p := range shipped {
		w, ok := wants[p.Name]
		require.True(t, ok, p.Name)
		for _, mode := range runparams.Modes {
			t.Run(p.Name+"/"+string(mode), func(t *testing.T) {
				res := pipeline.Render(recipe.NewLoader(source.Disk{}), fixtures.Request(p, fixtures.As(mode)))
				require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
				objs := make([]any, len(res.Docs))
				for i, d := range res.Docs {
					objs[i] = d
				}
				rep := podsecurity.Evaluate(objs)
				require.Empty(t, rep.Unread)
				// The render's own check reads the typed objects the
				// documents came from: the same pods, the same report and
				// the same prerequisites as the written documents give.
				typed := make([]any, len(res.Docs))
				for i, d := range res.Docs {
					require.NotNil(t, d.Obj, "%s %s", d.Kind, d.Name)
					typed[i] = d.Obj
				}
				require.Equal(t, rep, podsecurity.Evaluate(typed))
				fromDocs, err := prereq.FromObjects(objs)
				require.NoError(t, err)
				fromTyped, err := prereq.FromObjects(typed)
				require.NoError(t, err)
				require.Equal(t, fromDocs, fromTyped)
				require.NotEmpty(t, rep.Pods)
				if mode == runparams.Dev {
					w = want{level: podsecurity.Baseline}
				}
				require.Equal(t, w.level, rep.Level)
				var checks []string
				seen := map[string]bool{}
				for _, v := range rep.Violations {
					if v.Level != podsecurity.Baseline {
						continue
					}
					require.Contains(t, v.Detail, w.detail)
					if !seen[v.Check] {
						seen[v.Check] = true
						checks = append(checks, v.Check)
					}
				}
				sort.Strings(checks)
				require.Equal(t, w.baseline, checks)
				for _, pod := range rep.Pods {
					require.NotEqual(t, podsecurity.Restricted, pod.Level, "%s %s", pod.Object, pod.Pod)
				}
				// The findings say it: the level as an info, baseline's
				// refusals as warnings on the rendered field.
				var info string
				warned := 0
				for _, d := range res.Diags {
					if d.Field == "podSecurity" {
						info = d.Message
					}
					if strings.HasPrefix(d.Message, "Pod Security baseline refuses it") {
						warned++
					}
				}
				require.Contains(t, info, "need Pod Security "+string(w.level))
				if w.level == podsecurity.Privileged {
					require.Positive(t, warned)
				} else {
					require.Zero(t, warned)
				}
			})
		}
	}
}
