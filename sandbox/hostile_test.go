package sandbox_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// TestHostileInProcess runs the hostile suite's programs that are safe in process (see the
// package doc of sandboxtest) against the in-process runner: each ends as it must, in time,
// a tampering program leaves the next run clean, and the heap comes back afterwards.
func TestHostileInProcess(t *testing.T) {
	programs := sandboxtest.Load(t)
	checker := sandboxtest.Checker(t, programs)
	run := func(p sandboxtest.Program) sandboxtest.Outcome {
		start := time.Now()
		res := sandbox.InProcess{}.Run(context.Background(), p.Source, sandboxtest.Host{}, p.Options())
		return sandboxtest.FromResult(res, time.Since(start))
	}
	baseline := heapBytes()
	one := func(t *testing.T, p sandboxtest.Program) {
		sandboxtest.Check(t, p, run(p))
		if p.CheckClean {
			sandboxtest.Check(t, checker, run(checker))
		}
	}
	// Programs that grow the heap run alone afterwards: the heap watchdog charges growth to
	// the runs executing JavaScript meanwhile, and a busy loop next to a bomb would share
	// the blame.
	t.Run("parallel", func(t *testing.T) {
		for _, p := range programs {
			if !p.InProcess || p.Serial {
				continue
			}
			t.Run(p.Name, func(t *testing.T) {
				t.Parallel()
				one(t, p)
			})
		}
	})
	for _, p := range programs {
		if p.InProcess && p.Serial {
			t.Run(p.Name, func(t *testing.T) { one(t, p) })
		}
	}
	// The memory the programs took comes back: goroutines abandoned in native code end
	// within a second, and then everything is garbage.
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		now := heapBytes()
		if now < baseline+64<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("heap still %d MiB after the suite, from %d MiB", now>>20, baseline>>20)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
