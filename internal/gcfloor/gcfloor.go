// Package gcfloor gives a long-running process a floor under its garbage
// collector's heap goal.
//
// Go's default (GOGC=100) collects when the heap has grown by its live size.
// The service's live heap is small (a few MB at rest) while every run
// allocates hundreds of kilobytes of garbage, so at GOGC=100 it collected
// many times a second under load and spent a large share of its CPU doing so
// (BENCHMARKS.md, "Figures behind the code's choices").
// With a floor the heap may grow by at least Floor bytes between collections;
// once the live heap is larger than that, GOGC=100 holds as usual, so the
// memory this costs is bounded by Floor, not by a multiple of the live heap.
//
// Start does nothing when the GOGC environment variable is set: an operator's
// choice wins. A GOMEMLIMIT is honoured by the runtime on top of the floor.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Floor is the heap growth allowed between collections while the live heap
// is smaller than it.
const Floor = 64 << 20

// maxPercent bounds the GOGC the floor sets, for a nearly empty heap.
const maxPercent = 5000

// Percent is the GOGC that lets a heap of live bytes grow by floor before
// its next collection, and never less than Go's default of 100.
func Percent(live, floor uint64) int {
	if live == 0 {
		return maxPercent
	}
	p := floor * 100 / live
	switch {
	case p < 100:
		return 100
	case p > maxPercent:
		return maxPercent
	}
	return int(p)
}

var (
	startOnce sync.Once
	cycles    atomic.Int64 // collections seen, for tests
)

// Start keeps the floor for the rest of the process's life, unless GOGC is
// set in the environment; it reports whether it did. It is safe to call more
// than once.
func Start() bool { return StartWith(Floor) }

// StartWith is Start with floor bytes instead of Floor; the first call's
// floor holds.
func StartWith(floor uint64) bool {
	if _, set := os.LookupEnv("GOGC"); set {
		return false
	}
	startOnce.Do(func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		adjust := func() {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetGCPercent(Percent(sample[0].Value.Uint64(), floor))
			}
			cycles.Add(1)
		}
		adjust()
		armAfterNextGC(adjust)
	})
	return true
}

// armAfterNextGC calls f after every collection: a finalizer runs once the
// collection that found its object unreachable is over, and re-arms itself.
func armAfterNextGC(f func()) {
	s := new(sentinel)
	runtime.SetFinalizer(s, func(*sentinel) {
		f()
		armAfterNextGC(f)
	})
}

// sentinel is big enough not to share a tiny-allocator block, whose
// finalizers would wait for its neighbours.
type sentinel struct{ _ [32]byte }
