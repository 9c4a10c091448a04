package runparams_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
)

func TestNormalizeUser(t *testing.T) {
	for in, want := range map[string]string{
		"Bob_Smith.Jr": "bob-smith-jr",
		" alice ":      "alice",
		"":             "",
	} {
		require.Equal(t, want, runparams.NormalizeUser(in), "%q", in)
	}
}

// The user is --user, else $NRL_K8S_USER, else the OS user (asked only
// then), normalised; with none, the error says how to give one.
func TestResolveUser(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			require.Equal(t, runparams.UserEnv, k)
			return v
		}
	}
	noOS := func() string { t.Fatal("the OS user was asked for"); return "" }
	u, err := runparams.ResolveUser("Bob_Smith", env("carol"), noOS)
	require.NoError(t, err)
	require.Equal(t, "bob-smith", u)
	u, err = runparams.ResolveUser("", env("Carol.X"), noOS)
	require.NoError(t, err)
	require.Equal(t, "carol-x", u)
	u, err = runparams.ResolveUser("", env(""), func() string { return "Dave" })
	require.NoError(t, err)
	require.Equal(t, "dave", u)
	_, err = runparams.ResolveUser(" ", env(""), func() string { return "" })
	require.EqualError(t, err, "no user: pass --user or set NRL_K8S_USER")
}

func TestModeValid(t *testing.T) {
	for _, m := range runparams.Modes {
		require.True(t, m.Valid(), m)
	}
	require.False(t, runparams.Mode("RayJob").Valid())
	require.False(t, runparams.Mode("").Valid())
}

// KEY=VALUE: the first = splits (a value may hold more), an empty value is
// a value, a later key wins; no = or no key is an error naming the flag.
func TestKeyValues(t *testing.T) {
	m, err := runparams.KeyValues("--label", nil)
	require.NoError(t, err)
	require.Nil(t, m)
	m, err = runparams.KeyValues("--label", []string{"a=1", "b=x=y", "c=", "a=2"})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "2", "b": "x=y", "c": ""}, m)
	for _, bad := range []string{"novalue", "=v"} {
		_, err = runparams.KeyValues("--annotation", []string{bad})
		require.EqualError(t, err, `--annotation "`+bad+`": expected KEY=VALUE`)
	}
}

func TestStateFromSpec(t *testing.T) {
	for _, tc := range []struct {
		name               string
		present, suspended bool
		queue              string
		want               runparams.State
	}{
		{"running", true, false, "", runparams.Running},
		{"suspended by Git", true, true, "", runparams.Stopped},
		{"queued by Kueue", true, true, "team-a", runparams.Running},
		{"admitted by Kueue", true, false, "team-a", runparams.Running},
		{"Kueue run left out", false, false, "team-a", runparams.Stopped},
	} {
		if got := runparams.StateFromSpec(tc.present, tc.suspended, tc.queue); got != tc.want {
			t.Errorf("%s: StateFromSpec = %q, want %q", tc.name, got, tc.want)
		}
	}
}
