package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// check -o json: one object with the findings, the Pod Security level the
// pods need with the fields that push it there, and the prerequisites.
func TestCheckJSON(t *testing.T) {
	r, p := qwen(t)
	code, out, _ := clirun.Run("check", r, "--infra", p, "--user", "alice", "-o", "json")
	require.Equal(t, cli.ExitOK, code)
	var got struct {
		Valid       bool `json:"valid"`
		PodSecurity struct {
			Level      string `json:"level"`
			Violations []struct {
				Object, Path, Level, Check, Detail, Why string
			} `json:"violations"`
		} `json:"podSecurity"`
		Prerequisites []struct {
			Kind, APIVersion, Namespace, Name, Why string
		} `json:"prerequisites"`
		Findings []struct{ Severity, Message string } `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.True(t, got.Valid)
	require.Equal(t, "privileged", got.PodSecurity.Level)
	first := got.PodSecurity.Violations[0]
	require.Equal(t, "baseline", first.Level)
	require.Equal(t, "capabilities_baseline", first.Check)
	require.Contains(t, first.Detail, "IPC_LOCK")
	require.Contains(t, first.Why, "RLIMIT_MEMLOCK")
	require.Equal(t, "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].securityContext.capabilities.add", first.Path)
	var sa bool
	for _, p := range got.Prerequisites {
		if p.Kind == "ServiceAccount" {
			require.Equal(t, "default", p.Namespace)
			require.Equal(t, "nemo-rl-endpoint-registry", p.Name)
			require.Equal(t, "v1", p.APIVersion)
			sa = true
		}
	}
	require.True(t, sa, "the GB300 profile's ServiceAccount is a prerequisite")
	require.NotEmpty(t, got.Findings)

	// Errors: still one JSON object, no podSecurity (nothing rendered), exit 1.
	code, out, _ = clirun.Run("check", r, "cluster.gpus_per_node=8", "--infra", p, "--user", "alice", "-o", "json")
	require.Equal(t, cli.ExitError, code)
	var bad map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &bad), out)
	require.Equal(t, false, bad["valid"])
	require.Nil(t, bad["podSecurity"])

	code, _, errOut := clirun.Run("check", r, "--infra", p, "-o", "yaml")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errOut, "-o yaml")
}

func TestCheckTextLists(t *testing.T) {
	r, p := qwen(t)
	code, out, _ := clirun.Run("check", r, "--infra", p, "--user", "alice")
	require.Equal(t, cli.ExitOK, code)
	require.Contains(t, out, "needs: privileged")
	require.Contains(t, out, `must not include "IPC_LOCK"`)
	require.Contains(t, out, "ServiceAccount v1 default/nemo-rl-endpoint-registry")
	require.Contains(t, out, "DeviceClass resource.k8s.io/v1 roce.networking.k8s.aws")
}
