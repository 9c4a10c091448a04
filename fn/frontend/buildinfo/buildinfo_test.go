package buildinfo_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/buildinfo"
)

func TestInfo(t *testing.T) {
	i := buildinfo.Info{Version: "v1.2.3", GoVersion: "go1.26", Platform: "linux/amd64"}
	require.Equal(t, "nrl-k8s v1.2.3 (commit unknown, go1.26, linux/amd64)", i.String())
	i.GitCommit = "abc"
	require.Equal(t, "nrl-k8s v1.2.3 (commit abc, go1.26, linux/amd64)", i.String())

	b, err := i.Encode("json")
	require.NoError(t, err)
	var back buildinfo.Info
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, i, back)
	y, err := i.Encode("yaml")
	require.NoError(t, err)
	require.Equal(t, "gitCommit: abc\ngoVersion: go1.26\nplatform: linux/amd64\nversion: v1.2.3\n", string(y))
	_, err = i.Encode("xml")
	require.ErrorContains(t, err, "-o xml: expected json or yaml")

	require.Equal(t, "dev", buildinfo.Read("dev").Version)
}
