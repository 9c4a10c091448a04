package renderall

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const allowHead = "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: ReviewAllow\n"

// An allow-list is read strictly: its kind, every level and every
// privilege pattern are checked, and an error names the file and entry.
func TestParseAllow(t *testing.T) {
	cases := []struct {
		name, yaml string
		err        string // "" when it parses
	}{
		{"full", allowHead + "default: {namespaces: [a]}\nruns:\n  r: {podSecurity: privileged, namespaces: [b], privileges: [privileged, 'sysctl net.*', '*']}\n", ""},
		{"empty", allowHead, ""},
		{"another kind", "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: Allow\n", `review-allow.yaml: apiVersion "nemo-rl.nvidia.com/v1alpha1", kind "Allow"; expected nemo-rl.nvidia.com/v1alpha1 ReviewAllow`},
		{"another version", "apiVersion: nemo-rl.nvidia.com/v1\nkind: ReviewAllow\n", `apiVersion "nemo-rl.nvidia.com/v1", kind "ReviewAllow"`},
		{"unknown field", allowHead + "runs:\n  r: {namespace: [a]}\n", `review-allow.yaml: error unmarshaling JSON: while decoding JSON: json: unknown field "namespace"`},
		{"not YAML", "[", "review-allow.yaml: "},
		{"a level unknown", allowHead + "runs:\n  r: {podSecurity: root}\n", `review-allow.yaml: runs.r.podSecurity: "root"; expected restricted, baseline or privileged`},
		{"the default's level", allowHead + "default: {podSecurity: Baseline}\n", `review-allow.yaml: default.podSecurity: "Baseline"`},
		{"a blank privilege", allowHead + "runs:\n  r: {privileges: [' ']}\n", `review-allow.yaml: runs.r.privileges[0]: " "; expected a privilege as the review names it, a trailing * at most`},
		{"a * inside", allowHead + "runs:\n  r: {privileges: [a, 'sysctl *.x']}\n", `runs.r.privileges[1]: "sysctl *.x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := ParseAllow(AllowFile, []byte(c.yaml))
			if c.err == "" {
				require.NoError(t, err)
				assert.NotNil(t, a)
				return
			}
			assert.ErrorContains(t, err, c.err)
		})
	}
}

// A run may have what its own entry or the default allows: a level up to
// the one named, a namespace listed, a privilege matching a pattern (a
// trailing * any rest); no allow-list allows nothing.
func TestAllowPermits(t *testing.T) {
	a, err := ParseAllow(AllowFile, []byte(allowHead+`default: {podSecurity: baseline, namespaces: [team], privileges: ["capability IPC_LOCK"]}
runs:
  r: {podSecurity: privileged, namespaces: [infra], privileges: ["sysctl net.*", privileged]}
  all: {privileges: ["*"]}
`))
	require.NoError(t, err)
	cases := []struct {
		name  string
		allow *Allow
		check func(*Allow) bool
		want  bool
	}{
		{"the default's level", a, func(a *Allow) bool { return a.PermitsLevel("new", "baseline") }, true},
		{"below the default's level", a, func(a *Allow) bool { return a.PermitsLevel("new", "restricted") }, true},
		{"above the default's level", a, func(a *Allow) bool { return a.PermitsLevel("new", "privileged") }, false},
		{"the run's own level", a, func(a *Allow) bool { return a.PermitsLevel("r", "privileged") }, true},
		{"the default's namespace", a, func(a *Allow) bool { return a.PermitsNamespace("r", "team") }, true},
		{"the run's namespace", a, func(a *Allow) bool { return a.PermitsNamespace("r", "infra") }, true},
		{"another run's namespace", a, func(a *Allow) bool { return a.PermitsNamespace("new", "infra") }, false},
		{"the default's privilege", a, func(a *Allow) bool { return a.PermitsPrivilege("new", "capability IPC_LOCK") }, true},
		{"a privilege exactly", a, func(a *Allow) bool { return a.PermitsPrivilege("r", "privileged") }, true},
		{"a longer privilege than an exact pattern", a, func(a *Allow) bool { return a.PermitsPrivilege("r", "privileged container") }, false},
		{"a privilege by prefix", a, func(a *Allow) bool { return a.PermitsPrivilege("r", "sysctl net.core.somaxconn") }, true},
		{"outside the prefix", a, func(a *Allow) bool { return a.PermitsPrivilege("r", "sysctl kernel.shm_rmid_forced") }, false},
		{"another run's privilege", a, func(a *Allow) bool { return a.PermitsPrivilege("new", "privileged") }, false},
		{"* is every privilege", a, func(a *Allow) bool { return a.PermitsPrivilege("all", "hostPath /dev/shm") }, true},
		{"no allow-list: no level", nil, func(a *Allow) bool { return a.PermitsLevel("r", "restricted") }, false},
		{"no allow-list: no namespace", nil, func(a *Allow) bool { return a.PermitsNamespace("r", "team") }, false},
		{"no allow-list: no privilege", nil, func(a *Allow) bool { return a.PermitsPrivilege("r", "privileged") }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.check(c.allow))
		})
	}
}
