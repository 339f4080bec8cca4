package worker_test

import (
	"context"
	"runtime"
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

// BenchmarkIsolationParallel runs the 20-call program from 16 goroutines at once on a pool
// that keeps 16 workers: throughput when the workers and this process share few CPUs, where
// a worker that burns CPU while it waits takes it from the process that would answer it.
func BenchmarkIsolationParallel(b *testing.B) {
	const runs = 16
	pool, err := worker.New(worker.Options{MaxRuns: 1 << 30, RecycleMemory: -1, Warm: runs, MaxIdle: runs})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pool.Close() })
	const code = "let s = 0; for (let i = 0; i < 20; i++) s += (await tools.math_add({a: i, b: 2})).sum; return s"
	ctx := context.Background()
	run := func(b *testing.B) {
		res := pool.Run(ctx, code, sandboxtest.Host{}, sandbox.Options{})
		if res.Err != nil || string(res.Value) != "230" {
			b.Fatalf("%s %v", res.Value, res.Err)
		}
	}
	// Start the workers before the clock does.
	done := make(chan struct{})
	for range runs {
		go func() { run(b); done <- struct{}{} }()
	}
	for range runs {
		<-done
	}
	b.ReportAllocs()
	b.SetParallelism((runs + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			run(b)
		}
	})
}
