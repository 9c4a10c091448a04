// Package argohealth runs the shipped Argo CD health checks
// (gitops/argocd/*.lua) as Argo CD runs them (its util/lua): in gopher-lua,
// the Lua interpreter Argo CD embeds, in its default sandbox for a custom
// check (no standard library but the base, package and table ones), under
// its one-second budget, with the object as the global obj (the JSON of
// the live object, decoded as Argo CD decodes it) and the script's returned
// table {status, message} as the verdict, which must decode as Argo CD's
// HealthStatus does.
//
// Test-only: tests/gitops runs the scripts on status objects built from
// KubeRay's types, tests/afterapply on the objects KubeRay's own
// reconcilers wrote into the real API server, tests/hostile on generated
// hostile ones. All use this one runner.
package argohealth

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Dir is where the shipped health checks live, relative to the repository root.
const Dir = "gitops/argocd"

// Budget is the time Argo CD gives a health check before it fails it.
const Budget = time.Second

// The bounds the checks hold to (LIST_MAX and CAP in their shared block,
// tests/gitops holds them equal): the entries of a list they look at, and
// the bytes of a message.
const (
	ListMax    = 64
	MessageCap = 512
)

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

// Sandbox is the libraries Argo CD opens for a custom check.
type Sandbox int

const (
	// Default is Argo CD's default: the base, package and table libraries.
	Default Sandbox = iota
	// OpenLibs is every library, as Argo CD opens them for a kind whose
	// resource.customizations.useOpenLibs.<group_kind> is true.
	OpenLibs
)

// Run is Check returning an error, in the Default sandbox under Argo CD's
// Budget.
func Run(script string, obj any) (status, message string, err error) {
	return RunIn(Default, Budget, script, obj)
}

// RunIn is Run in sandbox with budget instead of Budget: as in Argo CD,
// the deadline starts once the object is decoded JSON (here: after the
// conversion to it) and the script fails once it passes (gopher-lua checks
// it before each instruction).
func RunIn(sandbox Sandbox, budget time.Duration, script string, obj any) (status, message string, err error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return "", "", fmt.Errorf("health check input: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return "", "", fmt.Errorf("health check input: expected a JSON object: %w", err)
	}
	proto, err := compile(script)
	if err != nil {
		return "", "", err
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: sandbox == Default})
	defer l.Close()
	// Argo CD also loads a cut-down os library (time and date), which the
	// checks have no use for: left out, a script that reached for it fails.
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", fmt.Errorf("health check sandbox: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, m))
	l.Push(l.NewFunctionFromProto(proto))
	if err := l.PCall(0, lua.MultRet, nil); err != nil {
		return "", "", fmt.Errorf("health check script: %w", err)
	}
	ret, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("health check script returned %s; expected a table {status, message}", l.Get(-1).Type())
	}
	// Argo CD encodes the table as JSON into {status, message string}: a
	// field of another type fails the check.
	for _, field := range []string{"status", "message"} {
		if v := ret.RawGetString(field); v != lua.LNil && v.Type() != lua.LTString {
			return "", "", fmt.Errorf("health check script returned %s %s; expected a string", field, v.Type())
		}
	}
	return lua.LVAsString(ret.RawGetString("status")), lua.LVAsString(ret.RawGetString("message")), nil
}

// protos holds each script compiled once: Argo CD compiles it at every
// run, to the same code.
var protos sync.Map

func compile(script string) (*lua.FunctionProto, error) {
	if p, ok := protos.Load(script); ok {
		return p.(*lua.FunctionProto), nil
	}
	chunk, err := parse.Parse(strings.NewReader(script), "<string>")
	if err != nil {
		return nil, fmt.Errorf("health check script: %w", err)
	}
	p, err := lua.Compile(chunk, "<string>")
	if err != nil {
		return nil, fmt.Errorf("health check script: %w", err)
	}
	protos.Store(script, p)
	return p, nil
}

// toLua converts decoded JSON into Lua values as Argo CD does: objects and
// arrays become tables (arrays 1-based, as ipairs walks them, a null
// element left out), null nil.
func toLua(l *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := l.CreateTable(0, len(x))
		for k, e := range x {
			t.RawSetH(lua.LString(k), toLua(l, e))
		}
		return t
	case []any:
		t := l.CreateTable(len(x), 0)
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
