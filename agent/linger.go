package agent

import (
	"sync"
	"time"
)

// lingerTick is how often the lingerer looks for due flushes while any are
// pending. A flush is due lingerFor − lingerTick after its event was held, so
// it happens within lingerFor.
const lingerTick = time.Millisecond

// lingerer flushes, for every writer of the process, the held events that no
// later write took within lingerFor. One goroutine and one ticker serve them
// all while flushes are pending, and it ends at the first tick that finds
// none: holding an event costs a slice append, where a timer of its own per
// step (what it replaced) cost each run with a nested call a wake-up of the
// network poller (BENCHMARKS.md, "Figures behind the code's choices").
type lingerer struct {
	mu      sync.Mutex
	queue   []lingering // in the order held, so in the order due; guarded by mu
	running bool        // the ticking goroutine runs; guarded by mu
}

// lingering is one writer's pending flush.
type lingering struct {
	w   *logWriter
	gen uint64
	due time.Time
}

var lingers lingerer

// add schedules the flush of w's arming gen.
func (l *lingerer) add(w *logWriter, gen uint64) {
	l.mu.Lock()
	l.queue = append(l.queue, lingering{w: w, gen: gen, due: time.Now().Add(lingerFor - lingerTick)})
	start := !l.running
	l.running = true
	l.mu.Unlock()
	if start {
		go l.run()
	}
}

func (l *lingerer) run() {
	t := time.NewTicker(lingerTick)
	defer t.Stop()
	var due []lingering
	for now := range t.C {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		n := 0
		for n < len(l.queue) && !l.queue[n].due.After(now) {
			n++
		}
		due = append(due[:0], l.queue[:n]...)
		rest := copy(l.queue, l.queue[n:])
		clear(l.queue[rest:])
		l.queue = l.queue[:rest]
		l.mu.Unlock()
		for i, e := range due {
			e.w.flushLingering(e.gen)
			due[i] = lingering{} // no writer kept until the next tick
		}
	}
}
