package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The line --check prints re-runs render-all as the user ran it: every
// flag that changes what is read or written, quoted for a shell.
func TestRerunCommandRepeatsTheFlags(t *testing.T) {
	assert.Equal(t, "nrl-k8s render-all .", rerunCommand(".", "", "", "", false, false))
	assert.Equal(t, "nrl-k8s render-all 'lab runs' --out out/m --root '/srv/lab repo' --recipe-root nemo-rl --include-untracked --kustomization",
		rerunCommand("lab runs", "out/m", "/srv/lab repo", "nemo-rl", true, true))
	assert.Equal(t, "nrl-k8s render-all . --out '$(id)'", rerunCommand(".", "$(id)", "", "", false, false), "a path is data, not a command")
}
