package runtime

import (
	"context"
	"sync"
)

// Batch runs sibling calls (one model step's tool calls, or one program's
// SDK sub-calls) in submission order: consecutive concurrency-safe calls
// overlap up to a window, an exclusive call waits for the window to drain,
// runs alone and holds later calls back until it has settled, and
// pre-policy and post-policy keep submission order even when bodies finish
// out of order. Safety is classified with Runtime.ConcurrencySafe when a
// call is submitted.
type Batch struct {
	rt     *Runtime
	window int
	ctx    context.Context // calls run under it; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	cond      *sync.Cond
	submitted int          // guarded by mu
	nextStart int          // the call allowed to start next; guarded by mu
	inflight  int          // guarded by mu
	exclusive bool         // an exclusive call runs; guarded by mu
	closed    bool         // guarded by mu
	finished  map[int]bool // guarded by mu
	frontier  int          // every call <= frontier has finished; guarded by mu
}

// NewBatch returns a batch whose calls run under ctx, at most window at once
// (window < 1 means 1).
func (rt *Runtime) NewBatch(ctx context.Context, window int) *Batch {
	if window < 1 {
		window = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	b := &Batch{rt: rt, window: window, ctx: ctx, cancel: cancel, nextStart: 1, finished: map[int]bool{}}
	b.cond = sync.NewCond(&b.mu)
	// A cancelled batch starts nothing more: wake the waiting calls.
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	return b
}

// Context is the context the batch's calls run under.
func (b *Batch) Context() context.Context { return b.ctx }

// Hooks observe one call of a batch.
type Hooks struct {
	// CallID, when set, names the call from its number (req.CallID otherwise).
	CallID func(n int) string
	// Start runs when the call enters the pipeline, before Execute, with
	// its number in the batch (1-based).
	Start func(n int)
	// Done runs when Execute returned; the next calls may already run.
	Done func(n int, r *Result)
}

// Go submits the next call and returns at once with its number. It reports
// false (and runs nothing) once the batch is closed. A call that has not
// started when the batch is closed or its context cancelled is abandoned:
// its hooks never run. req.Sequencer is set
// by the batch.
func (b *Batch) Go(req Request, h Hooks) (n int, ok bool) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, false
	}
	b.submitted++
	n = b.submitted
	b.wg.Add(1)
	b.mu.Unlock()
	go b.run(n, req, h)
	return n, true
}

func (b *Batch) run(n int, req Request, h Hooks) {
	defer b.wg.Done()
	safe := b.rt.ConcurrencySafe(req.Scope, req.Name, req.Arguments)
	if h.CallID != nil {
		req.CallID = h.CallID(n)
	}
	if !b.waitTurn(n, safe) {
		b.finish(n, safe, false)
		return // abandoned before it started: no hooks run
	}
	if h.Start != nil {
		h.Start(n)
	}
	req.Sequencer = &sequencer{b: b, n: n, safe: safe}
	r := b.rt.Execute(b.ctx, req)
	b.finish(n, safe, true)
	if h.Done != nil {
		h.Done(n, r)
	}
}

// waitTurn blocks until call n may start: it is next in submission order,
// no exclusive call runs, and the window has room (an exclusive call needs
// it empty). It reports false when the batch closed or was cancelled first.
func (b *Batch) waitTurn(n int, safe bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.closed && b.ctx.Err() == nil && !(n == b.nextStart && !b.exclusive && b.roomLocked(safe)) {
		b.cond.Wait()
	}
	if b.closed || b.ctx.Err() != nil {
		return false
	}
	b.inflight++
	b.exclusive = !safe
	return true
}

func (b *Batch) roomLocked(safe bool) bool {
	if safe {
		return b.inflight < b.window
	}
	return b.inflight == 0
}

// finish records a settled (or abandoned) call and lets later ones move.
func (b *Batch) finish(n int, safe, started bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if started {
		b.inflight--
		if !safe {
			b.exclusive = false
			b.nextStart = n + 1 // an exclusive call holds later starts through its post-policy
		}
	}
	b.finished[n] = true
	for b.finished[b.frontier+1] {
		delete(b.finished, b.frontier+1)
		b.frontier++
	}
	b.cond.Broadcast()
}

// sequencer keeps pre-policy and post-policy of siblings in order.
type sequencer struct {
	b    *Batch
	n    int
	safe bool
}

// Dispatched lets the next safe call begin its pre-policy.
func (s *sequencer) Dispatched() {
	if !s.safe {
		return
	}
	s.b.mu.Lock()
	if s.b.nextStart == s.n {
		s.b.nextStart = s.n + 1
	}
	s.b.cond.Broadcast()
	s.b.mu.Unlock()
}

// PostTurn waits until every earlier call has settled.
func (s *sequencer) PostTurn() {
	s.b.mu.Lock()
	for s.b.frontier < s.n-1 {
		s.b.cond.Wait()
	}
	s.b.mu.Unlock()
}

// Wait blocks until every submitted call has settled.
func (b *Batch) Wait() { b.wg.Wait() }

// Close ends the batch: calls not yet started are abandoned (their hooks
// never run), calls in flight are cancelled, and Close returns when they
// have drained.
func (b *Batch) Close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
}
