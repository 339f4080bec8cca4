package worker

import (
	"context"
	"testing"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// BenchmarkRun compares one program run in process and in a warm worker, with a host that
// settles at once: the cost of the process boundary alone, without the tool pipeline.
func BenchmarkRun(b *testing.B) {
	pool := newTestPool(b, Options{})
	programs := []struct{ name, code string }{
		{"trivial", "return 1"},
		{"1call", "return (await tools.math_add({a: 1, b: 2})).sum"},
		{"11calls", "let s = 0; for (let i = 0; i < 11; i++) s += (await tools.math_add({a: i, b: 2})).sum; return s"},
	}
	for _, r := range []struct {
		name string
		r    sandbox.Runner
	}{{"inproc", sandbox.InProcess{}}, {"process", pool}} {
		for _, p := range programs {
			run := func(b *testing.B) {
				if res := r.r.Run(context.Background(), p.code, sandboxtest.Host{}, sandbox.Options{}); res.Err != nil {
					b.Fatal(res.Err)
				}
			}
			for range 20 {
				run(b)
			}
			b.Run(r.name+"/"+p.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					run(b)
				}
			})
		}
	}
}
