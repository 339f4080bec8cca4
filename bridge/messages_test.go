package bridge_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/internal/golden"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/sandbox"
)

// The exact text a model sees for the runs that most often go wrong, pinned
// by golden files under testdata/messages (go test -update rewrites them).
func TestWhatTheModelSees(t *testing.T) {
	e := newEnv(t, bridge.Options{MaxContentBytes: 2 << 10, Limits: sandbox.Options{MaxLogBytes: 4 << 10}})
	// kv_set runs until the run cancels it.
	e.tool("kv_set", false, func(ctx context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	e.tool("util_echo", true, echo)
	e.tool("util_fail", false, func(context.Context, registry.Exec, frozen.Value) (any, error) {
		return nil, registry.Errorf(registry.CodeToolFailed, "the disk is full")
	})
	cases := []struct{ name, code string }{
		{"no-output", `const x = 1`},
		{"never-called-function", `async function main() { return await tools.util_echo({value: 1}) }`},
		// The first call has started by the time the program returns; the
		// others wait behind it (kv_set is exclusive).
		{"forgot-await", `["a", "b", "c"].forEach(async (k) => await tools.kv_set({key: k, value: 1}))
await new Promise((resolve) => setTimeout(resolve, 200))
return "saved 3"`},
		{"json-rules", `return {when: new Date(0), ratio: 0 / 0, gone: undefined, list: [undefined, 1], big: 2 ** 60}`},
		{"returns-a-map", `return new Map([["a", 1]])`},
		{"returns-a-bigint", `return {total: 10n}`},
		{"unknown-tool", `const r = await tools.util_ehco({value: 1})
return r`},
		{"uncaught-tool-error", `await tools.util_echo({value: 1})
await tools.util_fail({})
return "unreachable"`},
		{"bad-argument", `return await tools.util_echo({value: new Set([1])})`},
		{"big-result", `return Array.from({length: 400}, (_, i) => ({i, text: "row " + i}))`},
		{"log-limit", `for (let i = 0; i < 1000; i++) console.log("line " + i + " " + "x".repeat(20))`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(context.Background(), tc.code)
			got := fmt.Sprintf("is_error: %v\n", r.IsError())
			if info := r.Error(); info != nil {
				got += fmt.Sprintf("code: %s\nkind: %s\n", info.Code, info.Kind)
			}
			got += "---\n" + text(r) + "\n"
			golden.Check(t, filepath.Join("testdata", "messages", tc.name+".txt"), []byte(got))
		})
	}
}

// The value reports the calls a program left unfinished, with their lines.
func TestUnfinishedCallsAreInTheValue(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	g := newGate("never")
	e.tool("hold", false, g.body)
	r := e.run(context.Background(), "tools.hold({id: \"never\"})\ntools.hold({id: \"never\"})\nawait new Promise((r) => setTimeout(r, 200))\nreturn 1")
	_, result := value(t, r)
	if result != "1" {
		t.Fatal(result)
	}
	// The first call started (unless this machine is too slow to start it in
	// 200 ms); the second waited behind it, an exclusive call, and never did.
	first := "abandoned"
	g.mu.Lock()
	if g.started["never"] {
		first = "cancelled"
	}
	g.mu.Unlock()
	want := `"unfinished_calls":[{"tool":"hold","line":1,"state":"` + first + `"},{"tool":"hold","line":2,"state":"abandoned"}]`
	if got := r.Value().String(); !strings.Contains(got, want) {
		t.Fatalf("value %s, want %s", got, want)
	}
}

// A call the tool's parameters refuse tells the program what the tool expects: the message of
// its ToolCallError ends with the tool's signature from the SDK.
func TestInvalidArgumentsShowTheSignature(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	def := registry.MustDefine(registry.Definition{
		Name:       "math_add",
		Parameters: &schema.Node{Type: "object", Required: []string{"a", "b"}, Properties: map[string]*schema.Node{"a": {Type: "number"}, "b": {Type: "number"}}},
		Output:     &schema.Node{Type: "number"},
		Behavior:   registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return 0, nil }},
	})
	if _, err := e.reg.Register("s", def); err != nil {
		t.Fatal(err)
	}
	r := e.run(context.Background(), `try { await tools.math_add({a: "1"}) } catch (err) { return [err.code, err.message] }`)
	_, got := value(t, r)
	for _, want := range []string{`"INVALID_ARGS"`, "; its signature: tools.math_add(args: { a: number; b: number; [key: string]: unknown }): Promise<number>"} {
		if !strings.Contains(got, want) {
			t.Errorf("result %s lacks %q", got, want)
		}
	}
	// Other failures carry no signature.
	e.tool("util_fail", false, func(context.Context, registry.Exec, frozen.Value) (any, error) {
		return nil, registry.Errorf(registry.CodeToolFailed, "the disk is full")
	})
	_, got = value(t, e.run(context.Background(), `try { await tools.util_fail({}) } catch (err) { return err.message }`))
	if strings.Contains(got, "signature") {
		t.Errorf("a tool failure shows a signature: %s", got)
	}
}
