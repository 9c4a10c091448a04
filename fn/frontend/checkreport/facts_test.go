package checkreport_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/podsecurity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/checkreport"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Print writes nothing when nothing was rendered; else the level, each
// pod's, baseline's refusals in full (each reason once, what KubeRay
// injects), restricted's counted, the objects not judged, and each
// prerequisite with where it is, whether optional, and how many more
// reference it.
func TestFactsPrintSections(t *testing.T) {
	v := func(level podsecurity.Level, check, detail, injected, why string) podsecurity.Violation {
		return podsecurity.Violation{Object: "RayJob/j", Pod: "head", Path: "spec.x", Level: level, Check: check, Reason: "r-" + check, Detail: detail, Injected: injected, Why: why}
	}
	cases := []struct {
		name        string
		facts       checkreport.Facts
		want, never []string
	}{
		{name: "nothing rendered", never: []string{"POD SECURITY", "PREREQUISITES"}},
		{name: "restricted, no prerequisite", facts: checkreport.Facts{PodSecurity: &podsecurity.Report{Level: podsecurity.Restricted}},
			want:  []string{"\nPOD SECURITY\n------------\n  needs: restricted (the least privileged level", "-------------\n  (none)\n"},
			never: []string{"refuses", "not judged"}},
		{name: "every part", facts: checkreport.Facts{
			PodSecurity: &podsecurity.Report{Level: podsecurity.Privileged,
				Pods: []podsecurity.PodLevel{{Object: "RayJob/j", Pod: "head", Level: podsecurity.Privileged}},
				Violations: []podsecurity.Violation{v(podsecurity.Baseline, "privileged", "d", "KubeRay adds it", "NCCL"), v(podsecurity.Baseline, "hostPath", "", "", "NCCL"),
					v(podsecurity.Restricted, "runAsNonRoot", "", "", ""), v(podsecurity.Restricted, "capabilities", "", "", ""), v(podsecurity.Restricted, "runAsNonRoot", "", "", "")},
				Unread: []string{"RayJob/bad: not a RayJob"}},
			Prerequisites: []prereq.Prerequisite{{Kind: "Secret", APIVersion: "v1", Namespace: "ns", Name: "s", Optional: true, Why: "env", ReferencedBy: []string{"a", "b", "c"}},
				{Kind: "CustomResourceDefinition", APIVersion: "apiextensions.k8s.io/v1", Name: "x.io", Why: "kind X", ReferencedBy: []string{"a"}}}},
			want: []string{"  privileged RayJob/j head\n",
				"  baseline refuses RayJob/j spec.x: r-privileged (d) [privileged]\n    KubeRay adds it\n    why: NCCL\n",
				"  baseline refuses RayJob/j spec.x: r-hostPath [hostPath]\n  restricted",
				"  restricted also refuses: capabilities x1, runAsNonRoot x2 (check -o json lists each field)\n",
				"  not judged: RayJob/bad: not a RayJob\n",
				"  Secret v1 ns/s (optional): env (and 2 more)\n  CustomResourceDefinition apiextensions.k8s.io/v1 x.io: kind X\n"},
			never: []string{"(none)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			c.facts.Print(&b)
			for _, w := range c.want {
				require.Contains(t, b.String(), w)
			}
			for _, w := range c.never {
				require.NotContains(t, b.String(), w)
			}
			if c.facts.PodSecurity == nil {
				require.Empty(t, b.String())
			}
		})
	}
	f := checkreport.FactsOf(&pipeline.Result{})
	require.Nil(t, f.PodSecurity, "nothing rendered: no facts")
	require.Nil(t, f.Prerequisites)
}

func TestFactsPrint(t *testing.T) {
	res := render(t)
	f := checkreport.FactsOf(res)
	require.NotNil(t, f.PodSecurity)
	require.NotEmpty(t, f.Prerequisites)
	var b bytes.Buffer
	f.Print(&b)
	out := b.String()
	require.Contains(t, out, "\nPOD SECURITY\n------------\n  needs: privileged ")
	require.Contains(t, out, "  baseline refuses RayJob/alice-raycluster-qwen3-30b-math-gb300 ")
	require.Equal(t, 1, strings.Count(out, "    why: "), "each reason once")
	require.Contains(t, out, "  restricted also refuses: allowPrivilegeEscalation x")
	require.Contains(t, out, "\nPREREQUISITES (must exist before apply; nrl-k8s preflight checks them)\n")
	require.Contains(t, out, "  CustomResourceDefinition apiextensions.k8s.io/v1 computedomains.resource.nvidia.com: ")
}

type report struct {
	Valid         bool              `json:"valid"`
	Profile       string            `json:"profile"`
	Namespace     string            `json:"namespace"`
	PodSecurity   *json.RawMessage  `json:"podSecurity"`
	Prerequisites []json.RawMessage `json:"prerequisites"`
	Findings      []map[string]any  `json:"findings"`
}

func TestWriteJSON(t *testing.T) {
	t.Run("a render", func(t *testing.T) {
		res := render(t)
		var b bytes.Buffer
		require.NoError(t, checkreport.WriteJSON(&b, res, checkreport.FactsOf(res)))
		var got report
		require.NoError(t, json.Unmarshal(b.Bytes(), &got))
		require.True(t, got.Valid)
		require.Equal(t, res.Profile.File, got.Profile)
		require.Equal(t, "default", got.Namespace)
		require.NotNil(t, got.PodSecurity)
		require.NotEmpty(t, got.Prerequisites)
		require.Len(t, got.Findings, len(res.Diags))
	})
	t.Run("nothing rendered, errors sorted first", func(t *testing.T) {
		res := &pipeline.Result{Profile: &profile.Loaded{File: "p.yaml", Infra: &profile.Infra{Namespace: "ns"}}, Diags: diag.List{
			{Severity: diag.Warning, File: "a.yaml", Message: "w"},
			{Severity: diag.Error, File: "b.yaml", Field: "f", Message: "e <&>"},
		}}
		var b bytes.Buffer
		require.NoError(t, checkreport.WriteJSON(&b, res, checkreport.Facts{}))
		require.Contains(t, b.String(), `"message": "e <&>"`, "no HTML escaping")
		require.Contains(t, b.String(), `"prerequisites": []`, "an empty list, not null")
		require.Contains(t, b.String(), `"podSecurity": null`)
		var got report
		require.NoError(t, json.Unmarshal(b.Bytes(), &got))
		require.False(t, got.Valid)
		require.Equal(t, []map[string]any{
			{"severity": "error", "file": "b.yaml", "field": "f", "message": "e <&>"},
			{"severity": "warning", "file": "a.yaml", "message": "w"},
		}, got.Findings)
	})
	t.Run("no profile", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, checkreport.WriteJSON(&b, &pipeline.Result{Diags: diag.List{{Severity: diag.Error, Message: "no such file"}}}, checkreport.Facts{}))
		require.NotContains(t, b.String(), `"profile"`)
		require.NotContains(t, b.String(), `"namespace"`)
	})
}
