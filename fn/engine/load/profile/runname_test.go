package profile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// TestRunName: ${run.name} reads the run's name, so one profile gives each
// run its own directories; an unnamed render and a profile's own run: key
// are errors saying why.
func TestRunName(t *testing.T) {
	const prof = `image: img:1
checkpoints: {kind: pvc, pvcName: ckpt, subPath: "${user:}/${run.name}"}
`
	load := func(name, body string) (*Loaded, string) {
		l := recipe.NewLoader(source.Memory{"p.infra.yaml": []byte(body)})
		p, ds := Load(Input{Loader: l, File: "p.infra.yaml", User: "alice", RunName: name})
		if err := ds.Err(); err != nil {
			return p, err.Error()
		}
		return p, ""
	}
	p, errs := load("exp-7", prof)
	require.Empty(t, errs)
	require.NotNil(t, p.Infra.Checkpoints.SubPath)
	assert.Equal(t, "alice/exp-7", *p.Infra.Checkpoints.SubPath)

	_, errs = load("", prof)
	assert.Contains(t, errs, "reads ${run.name} but the run has no name; expected a named run")

	_, errs = load("exp-7", prof+"run: {name: x}\n")
	assert.Contains(t, errs, "run: is reserved")
}
