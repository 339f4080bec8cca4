package sandbox_test

import (
	"context"
	"testing"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// Data-sized programs (sandboxtest.DataPrograms), each beside raw goja
// running the same body: the floor the interpreter sets, which the sandbox
// can only add to.

func benchRaw(b *testing.B, body, want string) {
	prg := goja.MustCompile("bench.js", "(function () {\n"+body+"\n})()", false)
	b.ReportAllocs()
	for b.Loop() {
		v, err := goja.New().RunProgram(prg)
		if err != nil || v.String() != want {
			b.Fatalf("%v %v", v, err)
		}
	}
}

func benchSandbox(b *testing.B, body, want string) {
	p, err := sandbox.Compile(body, sandbox.JavaScript)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := sandbox.Run(ctx, p, nil, sandbox.Options{Timeout: sandbox.DefaultTimeout * 4}); res.Err != nil || string(res.Value) != want {
			b.Fatalf("%s %v", res.Value, res.Err)
		}
	}
}

// BenchmarkData runs each data-sized program in the sandbox and, as
// "floor", on raw goja.
func BenchmarkData(b *testing.B) {
	for _, p := range sandboxtest.DataPrograms {
		b.Run(p.Name, func(b *testing.B) { benchSandbox(b, p.Body, p.Want) })
		b.Run(p.Name+"/floor", func(b *testing.B) { benchRaw(b, p.Body, p.Want) })
	}
}

// callsInTry makes 100,000 calls written in a try block, which the sandbox routes through a
// native so that a stack overflow is catchable (trycall.go): the cost of that against raw goja.
const callsInTry = `function f(x) { return x + 1 }
let s = 0
for (let i = 0; i < 100000; i++) { try { s = f(s) } catch (e) {} }
return s`

func BenchmarkFloorCallsInTry(b *testing.B) { benchRaw(b, callsInTry, "100000") }
func BenchmarkCallsInTry(b *testing.B)      { benchSandbox(b, callsInTry, "100000") }
