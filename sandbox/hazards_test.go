package sandbox

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// leakMap is a valid source map (relative to the package directory, where tests run) that
// renames every position to LEAKED_SOURCE_MAP.js: a stack trace naming that file proves the
// parser read it from disk.
const leakMap = "testdata/sourcemap/leak.map"

func TestHazardSourceMapsAreNeverRead(t *testing.T) {
	t.Run("control: goja without the guard reads the map", func(t *testing.T) {
		v, err := goja.New().RunString(`try { eval("throw new Error('x')\n//# sourceMappingURL=` + leakMap + `") } catch (e) { e.stack }`)
		if err != nil || !strings.Contains(v.String(), "LEAKED_SOURCE_MAP") {
			t.Fatalf("the fixture does not detect a source-map read: %v %v", v, err)
		}
	})
	tests := []struct{ name, src string }{
		{"program", "const e = new Error('x');\nreturn e.stack;\n//# sourceMappingURL=" + leakMap},
		{"eval", `try { eval("throw new Error('x')\n//# sourceMappingURL=` + leakMap + `") } catch (e) { return e.stack }`},
		{"indirect eval", `try { (0, eval)("throw new Error('x')\n//# sourceMappingURL=` + leakMap + `") } catch (e) { return e.stack }`},
		{"new Function", `try { new Function("throw new Error('x')\n//# sourceMappingURL=` + leakMap + `")() } catch (e) { return e.stack }`},
		{"async Function constructor", `const AF = (async () => {}).constructor; try { await AF("throw new Error('x')\n//# sourceMappingURL=` + leakMap + `")() } catch (e) { return e.stack }`},
	}
	for _, tt := range tests {
		for _, lang := range []Lang{JavaScript, TypeScript} {
			t.Run(tt.name+"/"+lang.String(), func(t *testing.T) {
				res := runLang(t, tt.src, lang, nil, Options{})
				if res.Err != nil {
					t.Fatal(res.Err)
				}
				if strings.Contains(string(res.Value), "LEAKED_SOURCE_MAP") {
					t.Fatalf("a source map was read from disk: %s", res.Value)
				}
				if !strings.Contains(string(res.Value), "Error: x") {
					t.Fatalf("no stack to check: %s", res.Value)
				}
			})
		}
	}
}

func TestHazardCatastrophicRegexp(t *testing.T) {
	if regexp2.DefaultMatchTimeout != RegexpMatchTimeout {
		t.Fatalf("regexp2.DefaultMatchTimeout = %v, want %v", regexp2.DefaultMatchTimeout, RegexpMatchTimeout)
	}
	tests := []struct{ name, src string }{
		// Nested quantifiers alone go to Go's linear-time engine.
		{"nested quantifier", `return /(a+)+$/.test('a'.repeat(40) + 'b')`},
		// A backreference or lookahead needs regexp2, which backtracks for hours on these and
		// ignores Interrupt; its match timeout ends them, and the run fails with kind limit.
		{"backreference", `return /^(a+)+\1b$/.test('a'.repeat(40))`},
		{"lookahead", `return /(?=(a+)+b)/.test('a'.repeat(40))`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Without the match timeout the run would end as a timeout (and its goroutine would
			// spin on), not with a value.
			res := runLang(t, tt.src, JavaScript, nil, Options{Timeout: 10 * time.Second})
			if tt.name == "nested quantifier" {
				wantValue(t, res, `false`)
				return
			}
			// regexp2 gives up after the match timeout; goja would answer "no match", which
			// would be wrong, so the run fails instead.
			wantFailure(t, res, KindLimit, "match limit")
		})
	}
}

func TestHazardNoAmbientCapabilities(t *testing.T) {
	res := runJS(t, `
		const names = ["require", "process", "module", "exports", "Buffer", "global", "fetch",
			"XMLHttpRequest", "WebSocket", "__dirname", "Deno", "Bun"];
		const present = names.filter(n => typeof globalThis[n] !== "undefined");
		const viaFunction = Function("return typeof require + typeof process")();
		return {present, viaFunction, globals: Object.getOwnPropertyNames(globalThis)};`, nil)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var got struct {
		Present     []string
		ViaFunction string
		Globals     []string
	}
	if err := json.Unmarshal(res.Value, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Present) != 0 || got.ViaFunction != "undefinedundefined" {
		t.Fatalf("ambient capabilities present: %+v", got)
	}
	// Exactly the documented globals beyond goja's built-ins.
	base, err := goja.New().RunString(`Object.getOwnPropertyNames(globalThis)`)
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, g := range got.Globals {
		if !slices.Contains(base.Export().([]any), any(g)) {
			added = append(added, g)
		}
	}
	slices.Sort(added)
	want := append([]string{"ToolCallError", "clearTimeout", "console", "setTimeout", "tools"}, platformGlobals...)
	slices.Sort(want)
	if !slices.Equal(added, want) {
		t.Fatalf("globals added = %q, want %q", added, want)
	}
}

func TestHazardOnlyDataCrosses(t *testing.T) {
	// Go values handed to goja's ToValue keep their methods and fields callable from the
	// program; the sandbox hands in functions it names itself and JSON-shaped data only.
	host := newFakeHost("t")
	host.handle = func(c Call, settle func(Settlement)) {
		if c.Seq == 1 {
			settle(Settlement{Value: []byte(`{"a":[{"b":1}]}`)})
			return
		}
		settle(Settlement{Err: &CallError{Message: "m"}})
	}
	res := runJS(t, `
		const own = (o) => Object.getOwnPropertyNames(o).sort().join(",");
		const v = await tools.t();
		let err; try { await tools.t() } catch (e) { err = e }
		const fns = [console.log, setTimeout, clearTimeout, tools.t];
		return {
			value: [Object.getPrototypeOf(v) === Object.prototype, Array.isArray(v.a), Object.getPrototypeOf(v.a[0]) === Object.prototype],
			fnProps: fns.map(own),
			fnText: fns.map(String),
			console: own(console),
			error: own(err),
			timerId: typeof setTimeout(() => {}, 0),
		};`, host)
	wantValue(t, res, `{
		"value":[true,true,true],
		"fnProps":["length,name","length,name","length,name","length,name"],
		"fnText":["function log() { [native code] }","function setTimeout() { [native code] }","function clearTimeout() { [native code] }","function t() { [native code] }"],
		"console":"debug,error,info,log,warn",
		"error":"code,message,stack,toolName",
		"timerId":"number"}`)
}

// panicHost panics in whichever method is named.
type panicHost struct {
	fakeHost
	in string
}

func (h *panicHost) Call(c Call, settle func(Settlement)) {
	if h.in == "Call" {
		panic("host Call exploded")
	}
	h.fakeHost.Call(c, settle)
}

func (h *panicHost) Has(name string) bool {
	if h.in == "Has" {
		var m map[string]bool
		m[name] = true // a runtime error, not a string
	}
	return h.fakeHost.Has(name)
}

func (h *panicHost) Names() []string {
	if h.in == "Names" {
		panic("host Names exploded")
	}
	return h.fakeHost.Names()
}

func TestHazardGoPanicsAreContained(t *testing.T) {
	tests := []struct{ in, src, want string }{
		{"Call", `try { await tools.t() } catch (e) { return [e.name, e.toolName, e.message] }`,
			`["ToolCallError","t","internal error: dispatching the call panicked: host Call exploded"]`},
		{"Has", `try { tools.t } catch (e) { return [e.name, e.message.startsWith("internal error in tools: assignment to entry in nil map")] }`,
			`["TypeError",true]`},
		{"Names", `try { Object.keys(tools) } catch (e) { return [e.name, e.message] }`,
			`["TypeError","internal error in tools: host Names exploded"]`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			host := &panicHost{fakeHost: fakeHost{names: []string{"t"}}, in: tt.in}
			wantValue(t, runJS(t, tt.src, host), tt.want)
		})
	}
}

func TestHazardStuckNativeCodeIsAbandoned(t *testing.T) {
	// A regexp2 match is native code that Interrupt cannot stop. Run returns shortly after its
	// deadline anyway; when the match ends, the program stops at its next instruction and
	// never reaches the host.
	host := newFakeHost("t")
	res := runLang(t, `/^(a+)+\1b$/.test('a'.repeat(40)); await tools.t(); for (;;) {}`, JavaScript, host, Options{Timeout: 20 * time.Millisecond})
	wantFailure(t, res, KindTimeout)
	time.Sleep(RegexpMatchTimeout + 200*time.Millisecond)
	if n := len(host.recorded()); n != 0 {
		t.Fatalf("an abandoned program called the host %d times", n)
	}
}

// The built-ins the sandbox replaces or adds keep the property attributes of
// built-ins: methods writable, configurable and not enumerable (so for…in
// over an array or object lists only its own data), a function's name and
// length configurable only.
func TestReplacedBuiltinsKeepTheirAttributes(t *testing.T) {
	res := runJS(t, `
		const keys = []; for (const k in [1]) keys.push(k)
		const okeys = []; for (const k in {x: 1}) okeys.push(k)
		const attrs = (o, k) => { const d = Object.getOwnPropertyDescriptor(o, k); return [d.writable, d.enumerable, d.configurable] }
		return {keys, okeys,
			join: attrs(Array.prototype, "join"), iter: attrs(Array.prototype, Symbol.iterator),
			joinLength: attrs(Array.prototype.join, "length"), logName: attrs(console.log, "name"),
			parse: attrs(JSON, "parse"), repeat: attrs(String.prototype, "repeat")}`, nil)
	wantValue(t, res, `{"keys":["0"],"okeys":["x"],
		"join":[true,false,true],"iter":[true,false,true],
		"joinLength":[false,false,true],"logName":[false,false,true],
		"parse":[true,false,true],"repeat":[true,false,true]}`)
}
