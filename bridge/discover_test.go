package bridge_test

import (
	"context"
	"strings"
	"testing"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/sandbox"
)

// A program finds tools with tools.$search, reads them with tools.$describe and calls what it
// found; discovery runs no tool and logs nothing.
func TestProgramsDiscoverTools(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("math_add", true, echo)
	e.tool("files_delete", true, echo)
	e.tool("kv_get", true, echo)
	r := e.run(context.Background(), `
		const found = await tools.$search("delete a file", { limit: 2 })
		const decl = await tools.$describe(found.tools[0].name)
		const value = await tools[found.tools[0].name]({ path: "a" })
		return { total: found.total, first: found.tools[0].name, n: found.tools.length,
			keys: Object.keys(tools), has: "$search" in tools, decl: decl.includes("files_delete("), value }`)
	_, result := value(t, r)
	want := `{"total":3,"first":"files_delete","n":1,"keys":["files_delete","kv_get","math_add"],"has":true,"decl":true,"value":{"path":"a"}}`
	if result != want {
		t.Fatalf("got  %s\nwant %s", result, want)
	}
	if log := strings.Join(e.sink.log(), "|"); log != "start files_delete call_1:code:1|end files_delete call_1:code:1" {
		t.Fatalf("events %s", log)
	}
}

// Bad discovery arguments and unknown names reject the call with a ToolCallError that says
// what to do; the program can catch it.
func TestDiscoveryErrors(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("math_add", true, echo)
	r := e.run(context.Background(), `
		const out = []
		for (const call of [
			() => tools.$search("x", { limit: 0 }),
			() => tools.$search("x", { limit: 1.5 }),
			() => tools.$search("x", { colour: "red" }),
			() => tools.$search("x", { group: "nope" }),
			() => tools.$search(42),
			() => tools.$search("x", {}, 3),
			() => tools.$describe("math_ad"),
			() => tools.$describe([]),
			() => tools.$describe(),
		]) {
			try { await call(); out.push("resolved") } catch (e) { out.push(e.name + " " + e.code + " " + e.message) }
		}
		return out`)
	_, result := value(t, r)
	for _, want := range []string{
		`"ToolCallError INVALID_ARGS invalid search: limit must be a whole number from 1 to 50, got 0"`,
		`got 1.5"`,
		`unknown option \"colour\": $search takes {limit?, group?}"`,
		`no tool name has the prefix \"nope\"; groups: math"`,
		`the query must be a string of plain words`,
		`tools.$search takes at most two arguments, got 3"`,
		`"ToolCallError UNKNOWN_TOOL unknown tool: no tool named \"math_ad\" (did you mean math_add?)`,
		`name a tool (or a list of tools) to describe"`,
		`$describe takes a tool name or a list of names`,
	} {
		if !strings.Contains(result, want) {
			t.Errorf("result lacks %s:\n%s", want, result)
		}
	}
}

// A program finds only the tools its scope can call: other scopes' tools and withheld ones are
// never found, and a policy's note shows in the summary.
func TestDiscoveryIsTheScopesView(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("files_delete", true, echo)
	e.tool("files_read", true, echo)
	if err := e.reg.CreateScope("other", registry.Global, registry.ModeCode); err != nil {
		t.Fatal(err)
	}
	other := registry.MustDefine(registry.Definition{Name: "files_shred", Description: "Shreds a file.", Output: &schema.Node{Type: "json"},
		Behavior: registry.Behavior{Execute: echo}})
	if _, err := e.reg.Register("other", other); err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.Withhold("s", func(n string) bool { return n == "files_read" }, "guard"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.Annotate("s", func(n string) bool { return n == "files_delete" }, "asks a person first"); err != nil {
		t.Fatal(err)
	}
	_, result := value(t, e.run(context.Background(), `return await tools.$search("file")`))
	want := `{"total":1,"matched":1,"tools":[{"name":"files_delete","summary":"[asks a person first]","signature":"files_delete(args?: { [key: string]: unknown }): Promise<unknown>"}]}`
	if result != want {
		t.Fatalf("got  %s\nwant %s", result, want)
	}
}

// Discovery calls count against the run's call limit, as the contract says: a program that
// searches in a loop ends with a limit failure, not a stall.
func TestDiscoveryCountsAsCalls(t *testing.T) {
	e := newEnv(t, bridge.Options{Limits: sandbox.Options{MaxCalls: 3}})
	e.tool("math_add", true, echo)
	r := e.run(context.Background(), `for (let i = 0; i < 10; i++) await tools.$search("add"); return "done"`)
	if !r.IsError() || !strings.Contains(text(r), "more than 3 tool calls") {
		t.Fatalf("got %s", text(r))
	}
}
