package profile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// A finding about a key a base profile (`defaults:`) sets names the base
// file and the key's line there, not the child that only inherits it; a
// key the child sets (over its base too) stays the child's.
func TestBaseProfileFindingsNameTheBase(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	base := write("cluster.infra.yaml", "namespace: team-a\nimage: nvcr.io/nvidia/nemo-rl:v0.4.0\nscheduler:\n  kind: kai\n  queue: q\nlaunch:\n  entrypoint: echo\n  rayjob:\n    activeDeadlineSeconds: 4294967297\n")
	wrapped := write("wrapped.infra.yaml", "infra:\n  defaults: cluster.infra.yaml\n  launch:\n    bogusKey: 1\n")
	for _, tc := range []struct {
		name, child, wantFile, wantMsg string
	}{
		{"base value refused", "defaults: cluster.infra.yaml\nlaunch:\n  entrypoint: python run.py\n", base, "line 9: found 4294967297"},
		{"child key unknown", "defaults: cluster.infra.yaml\nlaunch:\n  rayjob:\n    bogus: 1\n", "", "line 4: unknown key"},
		{"child overrides the base", "defaults: cluster.infra.yaml\nlaunch:\n  rayjob:\n    activeDeadlineSeconds: 4294967298\n", "", "line 4: found 4294967298"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			child := write("child.infra.yaml", tc.child)
			want := tc.wantFile
			if want == "" {
				want = child
			}
			_, ds := profile.Load(profile.Input{Loader: recipe.NewLoader(source.Disk{}), File: child, User: "alice"})
			require.True(t, ds.HasErrors())
			d := firstError(ds)
			require.Equal(t, want, d.File, "%v", ds)
			require.Contains(t, d.Message, tc.wantMsg)
		})
	}
	t.Run("base value unresolvable", func(t *testing.T) {
		write("bad-base.infra.yaml", "namespace: team-a\nimage: ${nope.image}\n")
		child := write("child2.infra.yaml", "defaults: bad-base.infra.yaml\nlaunch:\n  entrypoint: echo\n")
		_, ds := profile.Load(profile.Input{Loader: recipe.NewLoader(source.Disk{}), File: child, User: "alice"})
		d := firstError(ds)
		require.Equal(t, filepath.Join(dir, "bad-base.infra.yaml"), d.File, "%v", ds)
		require.Contains(t, d.Message, `line 2: cannot resolve "${nope.image}"`)
	})
	t.Run("wrapped child", func(t *testing.T) {
		_, ds := profile.Load(profile.Input{Loader: recipe.NewLoader(source.Disk{}), File: wrapped, User: "alice"})
		require.True(t, ds.HasErrors())
		d := firstError(ds)
		require.Equal(t, wrapped, d.File, "%v", ds)
		require.Contains(t, d.Message, "line 4: unknown key")
	})
}

func firstError(ds diag.List) diag.Diagnostic {
	for _, d := range ds {
		if d.Severity == diag.Error {
			return d
		}
	}
	return diag.Diagnostic{}
}
