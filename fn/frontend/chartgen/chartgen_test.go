package chartgen

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
)

// The chart's schema patterns: an override it lets through is one the
// engine reads (`infra.` ones recognised to be refused), the overrides it
// leaves unquoted are the ones shell.Quote leaves, and a user, namespace or
// run id is a DNS label.
func TestPatterns(t *testing.T) {
	cases := []struct {
		name, pattern string
		match, not    []string
	}{
		{"override", OverridePattern, []string{"a=1", "a.b=x", "+a.b=[1,2]", "++a.b.c=x/y", "~a.b", "~a.b=1", "a.b[0]=3", "a=", "a-b.c_d=e:f@g%h,i"},
			[]string{"a", "=1", "a b=1", "a='x'", "a=$X", "a=\"x\"", "+~a=1", "a={b: 1}", "1a=2"}},
		{"infra override", InfraOverridePattern, []string{"infra.image=x", "+infra.labels.a=b", "infra=x", "~infra"}, []string{"infrastructure.x=1", "a.infra=1"}},
		{"shell-safe", ShellSafePattern, []string{"a.b=1", "+a=2", "++a.b=x/y:z", "a@b%c", "a=b,c", "k=v-w_x.y", "a="},
			[]string{"~a.b", "a=[1,2]", "a=[x]", "~a=1", "a.b[0]=3", "a=~/x", ""}},
		{"name", NamePattern, []string{"a", "alice-2", "0"}, []string{"Alice", "-a", "a-", "a.b", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			re := regexp.MustCompile(tc.pattern)
			for _, s := range tc.match {
				require.True(t, re.MatchString(s), s)
			}
			for _, s := range tc.not {
				require.False(t, re.MatchString(s), s)
			}
		})
	}
	for _, s := range cases[0].match {
		_, err := hydra.Parse(s)
		require.NoError(t, err, s)
	}
	for _, s := range append(cases[2].match, cases[2].not...) {
		q := s
		if !regexp.MustCompile(ShellSafePattern).MatchString(s) {
			q = "'" + s + "'"
		}
		require.Equal(t, shell.Quote(s), q, "the chart quotes %q as shell.Quote does", s)
	}
}

// A generated name's rule is the one the engine applies to its kind; a
// map entry is written as encoding/json writes it.
func TestNameRuleAndPairText(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		max     int
		pattern string
	}{
		{"RayCluster", check.MaxRayClusterName, dns1035},
		{"RayJob", check.MaxRayJobName, dns1035},
		{"Service", 63, dns1035},
		{"ConfigMap", 253, dns1123Sub},
	} {
		maxLen, pattern := nameRule(tc.kind)
		require.Equal(t, tc.max, maxLen, tc.kind)
		require.Equal(t, tc.pattern, pattern, tc.kind)
	}
	require.Equal(t, `"a/b":"x \"y\" \u003c\u0026\u003e"`, pairText("a/b", `x "y" <&>`))
}
