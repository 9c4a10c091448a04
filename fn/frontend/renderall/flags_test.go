package renderall

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The line --check prints re-runs render-all as the user ran it: every
// flag that changes what is read or written, quoted for a shell.
func TestRerunCommandRepeatsTheFlags(t *testing.T) {
	assert.Equal(t, "nrl-k8s render-all .", Flags{Dir: "."}.rerun())
	assert.Equal(t, "nrl-k8s render-all 'lab runs' --out out/m --root '/srv/lab repo' --recipe-root nemo-rl --include-untracked --kustomization",
		Flags{Dir: "lab runs", Out: "out/m", Root: "/srv/lab repo", RecipeRoot: "nemo-rl", Kustomization: true, Untracked: true}.rerun())
	assert.Equal(t, "nrl-k8s render-all . --out '$(id)'", Flags{Dir: ".", Out: "$(id)"}.rerun(), "a path is data, not a command")
}

// --base and --base-ref: an empty or option-shaped value is refused (an
// unset CI variable is never "no base"), both go with --check, and only
// one of them is given.
func TestBaseFlagsAreRefusedAsUsage(t *testing.T) {
	for _, c := range []struct {
		f    Flags
		want string
	}{
		{Flags{BaseRef: "", BaseRefSet: true, Check: true}, `--base-ref: "": expected the base branch (origin/main), a tag or a commit`},
		{Flags{BaseDir: "-p", BaseDirSet: true, Check: true}, `--base: "-p": expected a checkout of the base branch (a directory)`},
		{Flags{BaseRef: "main", BaseRefSet: true}, "--base and --base-ref go with --check"},
		{Flags{BaseDir: "b", BaseRef: "main", BaseDirSet: true, BaseRefSet: true, Check: true}, "--base and --base-ref: give one"},
	} {
		err := c.f.checkBase()
		assert.IsType(t, UsageError{}, err)
		assert.ErrorContains(t, err, c.want)
	}
	assert.NoError(t, Flags{BaseRef: "main", BaseRefSet: true, Check: true}.checkBase())
	assert.NoError(t, Flags{BaseRef: "", Check: false}.checkBase(), "an unset flag is no base given")
}
