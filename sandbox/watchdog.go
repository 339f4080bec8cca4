package sandbox

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/codemode/codemode/internal/bytesize"
)

const (
	// watchdogInterval is how often the heap watchdog samples the Go heap while runs are
	// active. A string doubled in a loop takes tens of milliseconds per step once it is large,
	// so the watchdog sees it a step or two past the limit.
	watchdogInterval = 10 * time.Millisecond
	// watchdogGCInterval spaces the collections the watchdog forces to confirm a run is over
	// its limit: garbage counts in the heap until it is collected, and a run must not fail
	// for garbage, but collecting on every sample of a churning run would be a GC storm.
	watchdogGCInterval = 100 * time.Millisecond
	// heapMetric is the heap occupied by objects, live or not yet swept.
	heapMetric = "/memory/classes/heap/objects:bytes"
)

// watchdog is the process's heap watchdog. See Run.
var watchdog = &heapWatchdog{runs: make(map[*run]float64)}

// heapWatchdog attributes the growth of the Go heap to the active runs and fails a run whose
// share passes its Options.Memory. Growth between two samples is split between the runs that
// executed JavaScript in between (or all active runs, when none did: a tool's value being
// applied, say); shrinkage is taken first from what ended runs left behind (their garbage),
// then from the active runs in proportion to their shares.
type heapWatchdog struct {
	mu       sync.Mutex
	runs     map[*run]float64 // active runs and their shares of heap growth, in bytes
	orphaned float64          // shares of runs that have ended, not yet collected
	active   bool             // the sampling goroutine is running
}

func (w *heapWatchdog) add(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs[r] = 0
	if !w.active {
		w.active = true
		go w.loop()
	}
}

func (w *heapWatchdog) remove(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.orphaned += w.runs[r]
	delete(w.runs, r)
}

func (w *heapWatchdog) loop() {
	sample := []metrics.Sample{{Name: heapMetric}}
	read := func() float64 {
		metrics.Read(sample)
		return float64(sample[0].Value.Uint64())
	}
	tick := time.NewTicker(watchdogInterval)
	defer tick.Stop()
	prev := read()
	var lastGC time.Time
	var holders []*run
	for range tick.C {
		w.mu.Lock()
		if len(w.runs) == 0 {
			w.active = false
			w.orphaned = 0
			w.mu.Unlock()
			return
		}
		now := read()
		w.attribute(now - prev)
		prev = now
		over := w.overLimit()
		holders = holders[:0]
		for r := range w.runs {
			if r.holder != nil {
				holders = append(holders, r)
			}
		}
		w.mu.Unlock()
		// Calls a job made while it goes on computing start within an interval.
		t := time.Now()
		for i, r := range holders {
			r.releaseOverdue(t, watchdogInterval)
			holders[i] = nil
		}
		if len(over) == 0 || time.Since(lastGC) < watchdogGCInterval {
			continue
		}
		// Confirm: collect, so that only what the runs still hold counts.
		runtime.GC()
		lastGC = time.Now()
		w.mu.Lock()
		now = read()
		w.attribute(now - prev)
		prev = now
		over = w.overLimit()
		shares := make([]float64, len(over))
		for i, r := range over {
			shares[i] = w.runs[r]
		}
		w.mu.Unlock()
		for i, r := range over {
			r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf(
				"the program exceeded its memory limit of %s (the heap grew by about %s while it ran)",
				bytesize.Format(r.opts.Memory), bytesize.Approx(int64(shares[i])))})
		}
	}
}

// attribute spreads a change of the heap over the runs. Must hold mu.
func (w *heapWatchdog) attribute(delta float64) {
	if delta >= 0 {
		var busy []*run
		for r := range w.runs {
			if r.ranJS.Swap(false) || !r.idle.Load() {
				busy = append(busy, r)
			}
		}
		if len(busy) == 0 {
			for r := range w.runs {
				busy = append(busy, r)
			}
		}
		each := delta / float64(len(busy))
		for _, r := range busy {
			w.runs[r] += each
		}
		return
	}
	shrink := -delta
	if w.orphaned > 0 {
		taken := min(w.orphaned, shrink)
		w.orphaned -= taken
		shrink -= taken
	}
	var total float64
	for _, s := range w.runs {
		total += s
	}
	if shrink == 0 || total == 0 {
		return
	}
	keep := max(total-shrink, 0) / total
	for r, s := range w.runs {
		w.runs[r] = s * keep
	}
}

// overLimit lists the runs whose share passes their memory limit. Must hold mu.
func (w *heapWatchdog) overLimit() []*run {
	var over []*run
	for r, s := range w.runs {
		if s > float64(r.opts.Memory) && !r.stopped.Load() {
			over = append(over, r)
		}
	}
	return over
}
