package sandbox

import (
	"context"
	"fmt"
	"testing"

	"github.com/dop251/goja"
)

// namesHost has n tool names and settles every call synchronously with {"ok":true}.
type namesHost struct {
	names []string
	set   map[string]bool
}

func newNamesHost(n int) *namesHost {
	h := &namesHost{set: make(map[string]bool, n)}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("tool_%04d", i)
		h.names = append(h.names, name)
		h.set[name] = true
	}
	return h
}

func (h *namesHost) Call(c Call, settle func(Settlement)) {
	settle(Settlement{Value: []byte(`{"ok":true}`)})
}
func (h *namesHost) Has(name string) bool { return h.set[name] }
func (h *namesHost) Names() []string      { return h.names }

// BenchmarkFloorNewRuntime is goja's floor: a new runtime and a precompiled trivial program.
func BenchmarkFloorNewRuntime(b *testing.B) {
	prg := goja.MustCompile("floor.js", "1", false)
	b.ReportAllocs()
	for b.Loop() {
		rt := goja.New()
		if _, err := rt.RunProgram(prg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFloorAsyncFunction adds what every run_code program needs on top of the floor: the
// body is an async function, so calling it initializes goja's Promise machinery.
func BenchmarkFloorAsyncFunction(b *testing.B) {
	prg := goja.MustCompile("floor.js", "(async function () { return 1 })", false)
	b.ReportAllocs()
	for b.Loop() {
		rt := goja.New()
		v, err := rt.RunProgram(prg)
		if err != nil {
			b.Fatal(err)
		}
		fn, _ := goja.AssertFunction(v)
		if _, err := fn(goja.Undefined()); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkTrivial(b *testing.B, tools int) {
	p, err := Compile("return 1", JavaScript)
	if err != nil {
		b.Fatal(err)
	}
	host := newNamesHost(tools)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := Run(ctx, p, host, Options{}); res.Err != nil || string(res.Value) != "1" {
			b.Fatalf("%+v", res)
		}
	}
}

func BenchmarkRunTrivial10Tools(b *testing.B)   { benchmarkTrivial(b, 10) }
func BenchmarkRunTrivial1000Tools(b *testing.B) { benchmarkTrivial(b, 1000) }

func BenchmarkRunOneCallSyncHost(b *testing.B) {
	benchmarkRunProgram(b, newNamesHost(10), "", "return await tools.tool_0001({a: 1})")
}

// BenchmarkRunElevenCallsSyncHost is the per-call cost inside the sandbox: eleven sequential
// calls; the difference from BenchmarkRunOneCallSyncHost ÷ 10 is one call.
func BenchmarkRunElevenCallsSyncHost(b *testing.B) {
	benchmarkRunProgram(b, newNamesHost(10), "11", "let n = 0; for (let i = 0; i < 11; i++) if ((await tools.tool_0001({a: i, b: 2})).ok) n++; return n")
}

// benchmarkRunProgram runs src with host, and checks that each run succeeds
// and, unless want is empty, returns want.
func benchmarkRunProgram(b *testing.B, host Host, want, src string) {
	p, err := Compile(src, JavaScript)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := Run(ctx, p, host, Options{}); res.Err != nil || want != "" && string(res.Value) != want {
			b.Fatalf("%+v", res)
		}
	}
}

// BenchmarkRunConsole is a run that logs: the console module formats a hundred lines with
// objects in them, and uses group and count.
func BenchmarkRunConsole(b *testing.B) {
	benchmarkRunProgram(b, nil, "1", `for (let i = 0; i < 100; i++) console.log("item", i, {a: i, b: [1, 2, 3]}); console.group("g"); console.count(); console.groupEnd(); return 1`)
}

// BenchmarkRunTimers is a run that schedules: a hundred setImmediate callbacks through the
// job queue, and a hundred timeouts set and cleared.
func BenchmarkRunTimers(b *testing.B) {
	benchmarkRunProgram(b, nil, "100", `let n = 0; await new Promise(r => { for (let i = 0; i < 100; i++) setImmediate(() => { if (++n === 100) r() }) }); for (let i = 0; i < 100; i++) clearTimeout(setTimeout(() => {}, 1000)); return n`)
}

// BenchmarkRunWebAPIs is a run that builds the URL and encoding preludes and uses each once.
func BenchmarkRunWebAPIs(b *testing.B) {
	benchmarkRunProgram(b, nil, "25", `const u = new URL("https://example.com/a?b=1"); return new TextEncoder().encode(u.href).length`)
}
