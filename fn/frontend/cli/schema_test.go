package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
)

// `nrl-k8s schema profile` is the committed schema, byte for byte, or its
// key reference; any other schema or format is a usage error.
func TestSchemaCommand(t *testing.T) {
	want, err := profile.SchemaJSON()
	require.NoError(t, err)
	runCases(t, []cliCase{
		{name: "json", args: []string{"schema", "profile"}, out: string(want), exact: true},
		{name: "markdown", args: []string{"schema", "profile", "-o", "markdown"}, out: "| `kuberay.<role>.segmentSize` | integer or null |"},
		{name: "other schema", args: []string{"schema", "recipe"}, code: cli.ExitUsage, err: `unknown schema "recipe"; expected profile`},
		{name: "other format", args: []string{"schema", "profile", "-o", "xml"}, code: cli.ExitUsage, err: "-o xml: expected json or markdown"},
		{name: "no schema", args: []string{"schema"}, code: cli.ExitUsage, err: "accepts 1 arg(s), received 0"},
	})
}
