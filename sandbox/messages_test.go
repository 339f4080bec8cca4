package sandbox

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestUnknownToolIsAToolCallError(t *testing.T) {
	host := newFakeHost("math_add", "math_sub", "util_echo", "files_read", "my-server.search")
	res := runJS(t, `
		const out = []
		for (const name of ["math_multiply", "math_ad", "Util_Echo", "search", "zzz"]) {
			try { await tools[name]({a: 1}) } catch (e) { out.push([e.name, e.toolName, e.code, e.message]) }
		}
		return out`, host)
	wantValue(t, res, `[
		["ToolCallError","math_multiply","UNKNOWN_TOOL","unknown tool \"math_multiply\": did you mean tools.math_add or tools.math_sub? tools.$search(\"what it should do\") finds tools by what they do."],
		["ToolCallError","math_ad","UNKNOWN_TOOL","unknown tool \"math_ad\": did you mean tools.math_add? tools.$search(\"what it should do\") finds tools by what they do."],
		["ToolCallError","Util_Echo","UNKNOWN_TOOL","unknown tool \"Util_Echo\": did you mean tools.util_echo? tools.$search(\"what it should do\") finds tools by what they do."],
		["ToolCallError","search","UNKNOWN_TOOL","unknown tool \"search\": did you mean tools[\"my-server.search\"]? tools.$search(\"what it should do\") finds tools by what they do."],
		["ToolCallError","zzz","UNKNOWN_TOOL","unknown tool \"zzz\". tools.$search(\"what it should do\") finds tools by what they do."]]`)
	if n := len(host.recorded()); n != 0 {
		t.Fatalf("an unknown tool was dispatched (%d calls)", n)
	}
}

// A name longer than any tool name can be is unknown at once: no
// suggestions (their cost grows with the name's length, times the number of
// tools) and only its start in the message.
func TestUnknownToolOfAHugeName(t *testing.T) {
	names := make([]string, 2000)
	for i := range names {
		names[i] = fmt.Sprintf("server%d.search_files_%d", i, i)
	}
	host := newFakeHost(names...)
	res := runJS(t, `
		const name = "search_files_".repeat(40000) + "é"
		const out = []
		for (let i = 0; i < 50; i++) {
			try { await tools[name]() } catch (e) { out.push(e.message) }
		}
		return [out.length, out[0].length < 300, out[0]]`, host)
	wantValue(t, res, `[50,true,"unknown tool \"search_files_search_files_search_files_search_files_search_files\"… (520002 bytes; tool names have at most 128 characters). tools.$search(\"what it should do\") finds tools by what they do."]`)
	if got := nearestNames(strings.Repeat("é", 257), []string{strings.Repeat("é", 256)}, 3); got != nil {
		t.Fatalf("suggestions for a name over the longest a tool name can be: %q", got)
	}
	if got := nearestNames(strings.Repeat("é", 128), []string{strings.Repeat("é", 127) + "e"}, 3); len(got) != 1 {
		t.Fatalf("no suggestion for a name of 128 characters: %q", got)
	}
}

func TestNearestNames(t *testing.T) {
	names := []string{"files_edit", "files_list", "files_read", "files_write", "kv_get", "kv_set", "math_add"}
	for _, tc := range []struct{ name, want string }{
		{"files_reed", "files_read"},
		{"kv_put", "kv_get,kv_set"},
		{"file_list", "files_list"},
		{"list_files", "files_list"},
		{"x", ""},
	} {
		if got := strings.Join(nearestNames(tc.name, names, 3), ","); got != tc.want {
			t.Errorf("nearestNames(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A rejected call carries its code, and an uncaught one names the line of the call that
// failed, so a program with two calls of one tool says which.
func TestToolCallErrorsCarryCodeAndLine(t *testing.T) {
	host := newFakeHost("fetch")
	host.handle = func(c Call, settle func(Settlement)) {
		if strings.Contains(string(c.Args), "bad") {
			settle(Settlement{Err: &CallError{ToolName: "fetch", Code: "TOOL_FAILED", Message: "not found"}})
			return
		}
		settle(Settlement{Value: []byte(`1`)})
	}
	res := runJS(t, "await tools.fetch({id: 1})\nconst x = 2\n  await tools.fetch({id: \"bad\"})", host)
	wantFailure(t, res, KindRuntime, "ToolCallError: not found (from tool fetch) (at line 3:")
	calls := host.recorded()
	if len(calls) != 2 || calls[0].Line != 1 || calls[1].Line != 3 || calls[1].Column != 20 {
		t.Fatalf("call sites %+v", calls)
	}
	res = runLang(t, "const bad: string = \"bad\"\ntry {\n  await tools.fetch({id: bad})\n} catch (e) {\n  return [e.code, e.stack.split(\"\\n\")[1].includes(\"program.ts:3\")]\n}", TypeScript, host, Options{})
	wantValue(t, res, `["TOOL_FAILED",true]`)
	if c := host.recorded()[2]; c.Line != 3 {
		t.Fatalf("TypeScript call site %+v", c)
	}
}

// goInternals matches what a message must never show a model: Go type names, pointers and
// package paths.
var goInternals = regexp.MustCompile(`\*goja\.|goja\.[A-Z]|goja_nodejs|github\.com/|\b0x[0-9a-f]{6,}\b|&\{|\(\*[a-zA-Z]+\.[A-Z]|\bfunc\(|runtime\.[A-Z]|sandbox\.[a-zA-Z]`)

// FuzzNoGoInternalsInMessages runs hostile values through every way a program sees text about
// them — conversion, inspection, throwing, returning, passing to a tool — and checks that no
// message leaks Go internals.
func FuzzNoGoInternalsInMessages(f *testing.F) {
	for _, seed := range []string{
		`tools`, `tools.t`, `Object.getPrototypeOf(tools)`, `console`, `setTimeout`, `new Map([[1, 2]])`,
		`Symbol("s")`, `10n`, `new Proxy({}, {})`, `Promise.resolve(1)`, `new Error("e", {cause: tools})`,
		`(() => { const o = {}; o.o = o; return o })()`, `new Uint8Array(3)`, `globalThis`, `JSON`,
		`Object.create(tools)`, `new (class X {})()`, `function f() {}`, `ToolCallError`, `new WeakMap()`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > 200 || strings.ContainsAny(expr, "`\\") {
			return
		}
		host := newFakeHost("t")
		host.handle = func(c Call, settle func(Settlement)) { settle(Settlement{Value: []byte(`null`)}) }
		src := `const v = () => (` + expr + `)
			const out = []
			const step = (f) => { try { out.push(String(f())) } catch (e) { try { out.push(String(e && e.message), String(e)) } catch (e2) { out.push("unprintable") } } }
			step(() => String(v()))
			step(() => JSON.stringify(v()))
			step(() => { console.log(v()); return "" })
			step(() => { console.log("%o %j %s", v(), v(), v()); return "" })
			try { await tools.t(v()) } catch (e) { out.push(e.message) }
			try { await tools.t({x: v()}) } catch (e) { out.push(e.message) }
			try { await tools.nope(v()) } catch (e) { out.push(e.message) }
			return {value: v()}`
		p, err := Compile(src, JavaScript)
		if err != nil {
			if goInternals.MatchString(err.Error()) {
				t.Fatalf("compile error leaks Go internals: %v", err)
			}
			return
		}
		res := Run(t.Context(), p, host, Options{Timeout: 2 * time.Second})
		texts := append([]string{string(res.Value)}, res.Logs...)
		if res.Err != nil {
			texts = append(texts, res.Err.Message)
		}
		for _, s := range texts {
			if m := goInternals.FindString(s); m != "" {
				t.Fatalf("%q: a message leaks Go internals (%q): %s", expr, m, s)
			}
		}
	})
}

// An uncaught error's cause and an AggregateError's errors are part of its message, as Node
// prints them, indented, with each one's own line.
func TestThrownErrorsShowCauseAndErrors(t *testing.T) {
	res := runJS(t, "const inner = new Error('inner')\nthrow new Error('outer', {cause: inner})", nil)
	wantFailure(t, res, KindRuntime, "Error: outer (at line 2:7)\n  [cause]: Error: inner (at line 1:15)")
	res = runJS(t, "throw new AggregateError([new TypeError('a'), 'b'], 'both failed')", nil)
	wantFailure(t, res, KindRuntime, "AggregateError: both failed (at line 1:7)\n  [errors]:\n    TypeError: a (at line 1:27)\n    b")
	res = runJS(t, "throw new Error('x', {cause: undefined})", nil)
	wantFailure(t, res, KindRuntime, "Error: x (at line 1:7)\n  [cause]: undefined")
	res = runJS(t, "throw new Error('no cause')", nil)
	if strings.Contains(res.Err.Error(), "[cause]") {
		t.Fatalf("an error without a cause shows one: %v", res.Err)
	}
	// Nesting and the number of errors listed are bounded.
	res = runJS(t, "let e = new Error('e0'); for (let i = 1; i < 50; i++) e = new Error('e' + i, {cause: e}); throw e", nil)
	if n := strings.Count(res.Err.Error(), "[cause]"); n != maxErrorNesting {
		t.Fatalf("%d causes shown, want %d: %v", n, maxErrorNesting, res.Err)
	}
	res = runJS(t, "throw new AggregateError(Array.from({length: 25}, (_, i) => new Error('n' + i)))", nil)
	wantFailure(t, res, KindRuntime, "n9", "… and 15 more")
}
