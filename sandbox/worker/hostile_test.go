package worker

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// TestHostileInWorkers runs the whole hostile suite against a pool: every program ends as it
// must within its timeout plus a margin, a tampering program leaves the next run on the same
// worker clean, the pool still serves afterwards, and this process's heap is back where it
// was (the programs' memory was the workers').
func TestHostileInWorkers(t *testing.T) {
	programs := sandboxtest.Load(t)
	checker := sandboxtest.Checker(t, programs)
	baseline := heapAfterGC()
	pool := newTestPool(t, Options{Memory: sandboxtest.Memory})
	t.Run("suite", func(t *testing.T) {
		for _, p := range programs {
			t.Run(p.Name, func(t *testing.T) {
				t.Parallel()
				sandboxtest.Check(t, p, runProgram(pool, p))
			})
		}
	})

	// A pool of one worker, so that the checker runs where the tampering happened.
	solo := newTestPool(t, Options{Memory: sandboxtest.Memory, MaxWorkers: 1, Warm: -1})
	for _, p := range programs {
		if !p.CheckClean {
			continue
		}
		t.Run("then-clean/"+p.Name, func(t *testing.T) {
			sandboxtest.Check(t, p, runProgram(solo, p))
			sandboxtest.Check(t, checker, runProgram(solo, checker))
		})
	}
	if s := solo.Stats(); s.Started != 1 {
		t.Errorf("the tampering and checking runs used %d workers, want 1", s.Started)
	}

	res := pool.Run(context.Background(), `return (await tools.math_add({a: 2, b: 3})).sum`, sandboxtest.Host{}, sandbox.Options{})
	if res.Err != nil || string(res.Value) != "5" {
		t.Fatalf("the pool does not serve after the suite: %s %v", res.Value, res.Err)
	}
	s := pool.Stats()
	t.Logf("pool after the suite: %+v", s)
	// The deep-stack programs always end their worker (a fatal Go stack
	// overflow); the memory bombs may instead be stopped by a guard or the
	// watchdog before the hard cap, depending on the machine.
	if s.Died < 1 {
		t.Errorf("%d workers died (%+v): the deep-stack programs end theirs", s.Died, s)
	}
	if grown := int64(heapAfterGC()) - int64(baseline); grown > 64<<20 {
		t.Errorf("this process's heap grew by %d MiB over the suite", grown>>20)
	}
}

func runProgram(r sandbox.Runner, p sandboxtest.Program) sandboxtest.Outcome {
	start := time.Now()
	res := r.Run(context.Background(), p.Source, sandboxtest.Host{}, p.Options())
	return sandboxtest.FromResult(res, time.Since(start))
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
