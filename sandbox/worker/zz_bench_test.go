package worker_test

import (
	"context"
	"testing"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
	"github.com/codemode/codemode/sandbox/worker"
)

// BenchmarkIsolation runs a trivial program and a 20-call program in a
// worker process (a Pool with default options: warm workers, recycled every
// DefaultMaxRuns runs; and one that never recycles, which leaves the
// crossing alone) and, as the floor, in-process with sandbox.InProcess. No
// pipeline and no log: this is the price of the process boundary alone.
func BenchmarkIsolation(b *testing.B) {
	pool, err := worker.New(worker.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pool.Close() })
	keep, err := worker.New(worker.Options{MaxRuns: 1 << 30, RecycleMemory: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { keep.Close() })
	programs := []struct{ name, code, want string }{
		{"trivial", "return 1", "1"},
		{"20calls", "let s = 0; for (let i = 0; i < 20; i++) s += (await tools.math_add({a: i, b: 2})).sum; return s", "230"},
	}
	runners := []struct {
		name string
		r    sandbox.Runner
	}{{"runner=process", pool}, {"runner=process-norecycle", keep}, {"floor=inprocess", sandbox.InProcess{}}}
	for _, p := range programs {
		for _, rn := range runners {
			b.Run("program="+p.name+"/"+rn.name, func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					res := rn.r.Run(ctx, p.code, sandboxtest.Host{}, sandbox.Options{})
					if res.Err != nil || string(res.Value) != p.want {
						b.Fatalf("%s: %s %v", p.name, res.Value, res.Err)
					}
				}
			})
		}
	}
}
