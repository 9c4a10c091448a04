package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// The rule: a package is raced when its tests or its code (directly or
// through what it imports) start goroutines; a new package is in by default.
func TestFindRule(t *testing.T) {
	pool := pkg{path: "pool", starts: true, hasTests: true, shares: true}
	for _, tc := range []struct {
		name    string
		pkgs    []pkg
		skip    map[string]string
		want    []string
		wantErr string
	}{
		{name: "a package starting goroutines", pkgs: []pkg{pool}, want: []string{"pool"}},
		{
			name: "a new package reaching the pool through another",
			pkgs: []pkg{pool, {path: "batch", imports: []string{"pool"}, hasTests: true}, {path: "newfrontend", imports: []string{"batch"}, hasTests: true}},
			want: []string{"batch", "newfrontend", "pool"},
		},
		{name: "a package whose tests alone start goroutines", pkgs: []pkg{{path: "cli", testStarts: true, hasTests: true}}, want: []string{"cli"}},
		{name: "a package without goroutines", pkgs: []pkg{pool, {path: "tree", hasTests: true}}, want: []string{"pool"}},
		{name: "a package that only its tests reach the pool from", pkgs: []pkg{pool, {path: "emit", testImports: []string{"pool"}, hasTests: true}}, want: []string{"pool"}},
		{name: "no tests to run", pkgs: []pkg{pool, {path: "cmd", imports: []string{"pool"}}}, want: []string{"pool"}},
		{
			name: "left out on purpose",
			pkgs: []pkg{pool, {path: "chart", imports: []string{"pool"}, hasTests: true}},
			skip: map[string]string{"chart": "costly"},
			want: []string{"pool"},
		},
		{name: "a stale exclusion", pkgs: []pkg{pool, {path: "tree", hasTests: true}}, skip: map[string]string{"tree": "costly"}, wantErr: "tree is listed in notRaced but the rule no longer finds it"},
		{name: "a goroutine starter without tests", pkgs: []pkg{{path: "pool", starts: true}}, wantErr: "pool starts goroutines and has no tests"},
		{
			name:    "shared state no race binary links",
			pkgs:    []pkg{pool, {path: "cache", shares: true, hasTests: true}},
			wantErr: "cache holds state for goroutines (imports sync) but no race-tested package links it",
		},
		{
			name: "shared state a race binary links through its tests",
			pkgs: []pkg{pool, {path: "cache", shares: true, hasTests: true}, {path: "batch", imports: []string{"pool"}, testImports: []string{"cache"}, hasTests: true}},
			want: []string{"batch", "pool"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := find(tc.pkgs, tc.skip)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, res.pkgs)
			for _, p := range res.pkgs {
				require.NotEmpty(t, res.why[p], p)
			}
		})
	}
}

func TestStartsGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      bool
	}{
		{"go statement", `package p; func f() { go func() {}() }`, true},
		{"go statement in a closure", `package p; var f = func() { defer func() { go g() }() }; func g() {}`, true},
		{"WaitGroup.Go", `package p; import "sync"; func f() { var wg sync.WaitGroup; wg.Go(func() {}); wg.Wait() }`, true},
		{"errgroup", `package p; import "golang.org/x/sync/errgroup"; func f() { var g errgroup.Group; g.Go(func() error { return nil }) }`, true},
		{"a Go method of something else", `package p; type x struct{}; func (x) Go() {}; func f() { x{}.Go() }`, false},
		{"a mutex only", `package p; import "sync"; var mu sync.Mutex; func f() { mu.Lock(); mu.Unlock() }`, false},
		{"no goroutine", `package p; func f() int { return 1 }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", tc.src, 0)
			require.NoError(t, err)
			require.Equal(t, tc.want, startsGoroutine(f))
		})
	}
}

// On this module: the worker pool and every package that hands it work are
// raced, and nothing is left out but what notRaced names.
func TestModuleRaceSet(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, testenv.RepoRoot(t), false))
	got := strings.Fields(out.String())
	for _, want := range []string{"./fn/support/parallel", "./fn/engine/batch", "./fn/frontend/krm", "./fn/frontend/renderall"} {
		require.Contains(t, got, want)
	}
	for p := range notRaced {
		require.NotContains(t, got, "./"+p)
	}
}

// make race runs what the finder prints, not a list of its own.
func TestMakeRaceUsesTheFinder(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "Makefile"))
	require.NoError(t, err)
	recipe := regexp.MustCompile(`(?m)^race:\n((?:\t.*\n)+)`).FindStringSubmatch(string(b))
	require.NotNil(t, recipe, "Makefile has no race target")
	require.Contains(t, recipe[1], "run ./hack/racepkgs")
	require.Contains(t, recipe[1], "-race")
	require.NotContains(t, recipe[1], "./fn/", "the race target names packages by hand")
}
