package profile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// TestShellWord: a value of the run reaches an entrypoint (the launch's, a
// daemon's) only as one plain word; elsewhere, and for the profile's own
// values, interpolation is unchanged.
func TestShellWord(t *testing.T) {
	load := func(body, v string) error {
		l := recipe.NewLoader(source.Memory{"p.infra.yaml": []byte(body)})
		_, ds := Load(Input{Loader: l, File: "p.infra.yaml", User: "alice", RunName: "r",
			Env: func(string) (string, bool) { return v, true }})
		return ds.Err()
	}
	for _, c := range []struct {
		name, body, v, err string
	}{
		{"plain word", "image: i\nlaunch: {entrypoint: 'python x.py +a=${oc.env:V}'}\n", "a-b_1", ""},
		{"empty", "image: i\nlaunch: {entrypoint: 'python x.py +a=${oc.env:V}'}\n", "", ""},
		{"command substitution", "image: i\nlaunch: {entrypoint: 'python x.py +a=${oc.env:V}'}\n", "$(id)",
			"launch.entrypoint: ${oc.env:V} puts a value of the run into this shell command that is not one plain word"},
		{"through another key", "image: i\nlaunch: {env: {W: '${oc.env:V}'}, entrypoint: 'python x.py +a=${launch.env.W}'}\n", "v1 v2",
			"launch.entrypoint: ${launch.env.W} puts a value of the run"},
		{"a daemon's entrypoint", "image: i\nkuberay: {training: {daemon: {entrypoint: 'serve ${oc.env:V}'}}}\n", "x;y",
			"kuberay.training.daemon.entrypoint: ${oc.env:V} puts"},
		{"not a shell field", "image: i\nlaunch: {env: {W: '${oc.env:V}'}}\n", "a b; c", ""},
		{"the profile's own value", "image: i\nx: {args: 'a b; c'}\nlaunch: {entrypoint: 'python x.py ${x.args}'}\n", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := load(c.body, c.v)
			if c.err == "" {
				if err != nil {
					require.NotContains(t, err.Error(), "plain word", "refused by the shell rule")
				}
				return
			}
			require.ErrorContains(t, err, c.err)
			if c.v != "" {
				require.NotContains(t, err.Error(), c.v, "the value is not shown")
			}
		})
	}
}
