// Package argohealth runs the shipped Argo CD health checks
// (gitops/argocd/*.lua) as Argo CD runs them: in gopher-lua, the Lua
// interpreter Argo CD embeds, with the object as the global obj (the JSON
// of the live object, as the API server returns it) and the script's
// returned table {status, message} as the verdict.
//
// Test-only: tests/gitops runs the scripts on status objects built from
// KubeRay's types, tests/afterapply on the objects KubeRay's own
// reconcilers wrote into the real API server. Both use this one runner.
package argohealth

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Dir is where the shipped health checks live, relative to the repository root.
const Dir = "gitops/argocd"

// Script returns the health check file (e.g. "rayjob-health.lua") of Dir.
func Script(t testing.TB, file string) string {
	t.Helper()
	return testenv.ReadFile(t, filepath.Join(testenv.RepoRoot(t), Dir, file))
}

// Check runs script on obj (any value that marshals to the object's JSON:
// a typed KubeRay object, an unstructured one's Object, a map) and returns
// the status and message it reports; it fails the test when the script
// does not run or returns no table.
func Check(t testing.TB, script string, obj any) (status, message string) {
	t.Helper()
	status, message, err := Run(script, obj)
	if err != nil {
		t.Fatal(err)
	}
	return status, message
}

// Run is Check returning an error.
func Run(script string, obj any) (status, message string, err error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return "", "", fmt.Errorf("health check input: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "", "", fmt.Errorf("health check input: expected a JSON object: %w", err)
	}
	l := lua.NewState()
	defer l.Close()
	l.SetGlobal("obj", toLua(l, m))
	if err := l.DoString(script); err != nil {
		return "", "", fmt.Errorf("health check script: %w", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("health check script returned %s; expected a table {status, message}", l.Get(-1).Type())
	}
	return ret.RawGetString("status").String(), ret.RawGetString("message").String(), nil
}

// toLua converts decoded JSON into Lua values: objects and arrays become
// tables (arrays 1-based, as ipairs walks them).
func toLua(l *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := l.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLua(l, e))
		}
		return t
	case []any:
		t := l.NewTable()
		for _, e := range x {
			t.Append(toLua(l, e))
		}
		return t
	case string:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case bool:
		return lua.LBool(x)
	}
	return lua.LNil
}
