package runtime

import (
	"context"
	"sync"

	"github.com/codemode/codemode/internal/gopool"
)

// Batch runs sibling calls (one model step's tool calls, or one program's
// SDK sub-calls) in submission order. Each call is prepared (its tool
// resolved, its arguments read and its concurrency decided, once) when its
// turn to start comes, not when it is submitted. Consecutive concurrency-safe
// calls overlap up to a window; an exclusive call waits for the window to
// drain, runs alone and holds later calls back until it has settled.
// Pre-policy, approval and guards keep submission order. What happens after
// the body depends on BatchOptions.InOrder: a model step's calls settle in
// submission order, a program's each as soon as its own body ends. Calls
// run on goroutines of gopool, whose stacks have grown already, or, held
// (Hold), on the goroutine that releases them.
type Batch struct {
	rt      *Runtime
	window  int
	inOrder bool
	ctx     context.Context // calls run under it; cancelled by Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu        sync.Mutex
	cond      *sync.Cond
	submitted int          // guarded by mu
	nextStart int          // the call allowed to start next; guarded by mu
	inflight  int          // guarded by mu
	exclusive bool         // an exclusive call runs; guarded by mu
	closed    bool         // guarded by mu
	finished  map[int]bool // guarded by mu
	frontier  int          // every call <= frontier has finished; guarded by mu
	hold      bool         // calls wait for Release (Hold); guarded by mu
	held      []func()     // calls submitted and not yet released; guarded by mu
}

// DefaultWindow is the overlap window of concurrency-safe calls that the
// batch's users take when their options leave it zero: a program's
// sub-calls (bridge) and a model step's calls (agent), both set by
// limits.max_parallel_sub_calls.
const DefaultWindow = 10

// BatchOptions configure NewBatch. The zero value works.
type BatchOptions struct {
	// Window bounds how many concurrency-safe calls overlap (< 1 means 1).
	Window int
	// InOrder makes each call's post-policy wait until every earlier call
	// has settled (a model step, whose results are durable in model order).
	// Without it each call settles — post-policy, finalizer, observers, its
	// Done hook — as soon as its own body ends (a program's sub-calls, so
	// that Promise.race behaves as in JavaScript).
	InOrder bool
}

// NewBatch returns a batch whose calls run under ctx.
func (rt *Runtime) NewBatch(ctx context.Context, opts BatchOptions) *Batch {
	window := max(opts.Window, 1)
	ctx, cancel := context.WithCancel(ctx)
	b := &Batch{rt: rt, window: window, inOrder: opts.InOrder, ctx: ctx, cancel: cancel, nextStart: 1, finished: map[int]bool{}}
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
	// Start runs when the call enters the pipeline, before its stages, with
	// its number in the batch (1-based) and the concurrency verdict it runs
	// with. Start hooks run in submission order, one at a time.
	Start func(n int, c Call, safe bool)
	// Done runs when the call has its result, before the batch lets any
	// call that waits for this one start: whatever Done does (logging the
	// result, settling a promise) happens before anything a later call does.
	Done func(n int, r *Result)
}

// Go submits the next call and returns at once with its number: the call
// starts on a goroutine of its own, or, in a batch that holds its calls,
// when Release lets it. It reports false (and runs nothing) once the batch
// is closed. A call that has not started when the batch is closed or its
// context cancelled is abandoned: its hooks never run. The batch orders
// the call's policy stages against its siblings (turns).
func (b *Batch) Go(req Request, h Hooks) (n int, ok bool) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, false
	}
	b.submitted++
	n = b.submitted
	b.wg.Add(1)
	run := func() { b.run(n, req, h) }
	if b.hold {
		b.held = append(b.held, run)
		b.mu.Unlock()
		return n, true
	}
	b.mu.Unlock()
	gopool.Go(run)
	return n, true
}

// Hold makes the calls submitted from now on wait for Release, which runs
// a call on the releasing goroutine when it is the batch's only unfinished
// one: a caller about to wait for that one call runs it instead of handing
// it to another goroutine and back (two wake-ups of other threads).
func (b *Batch) Hold() {
	b.mu.Lock()
	b.hold = true
	b.mu.Unlock()
}

// Release lets the held calls go (see Hold). With alone set, and
// the one held call the batch's only unfinished call, it runs that call on
// the calling goroutine and returns once it has settled (its Done hook has
// run), reporting true; stop, while it runs, cancels the batch when it ends
// (the caller is being stopped). Otherwise each held call starts on a
// goroutine of its own, Release returns at once and reports false.
func (b *Batch) Release(alone bool, stop context.Context) bool {
	b.mu.Lock()
	held := b.held
	b.held = nil
	inline := alone && len(held) == 1 && b.frontier == b.submitted-1
	b.mu.Unlock()
	if inline {
		if stop != nil {
			defer context.AfterFunc(stop, b.cancel)()
		}
		held[0]()
		return true
	}
	for _, run := range held {
		gopool.Go(run)
	}
	return false
}

func (b *Batch) run(n int, req Request, h Hooks) {
	defer b.wg.Done()
	if h.CallID != nil {
		req.CallID = h.CallID(n)
	}
	if !b.waitFront(n) {
		b.finish(n, false, false)
		return // abandoned before it started: no hooks run
	}
	p := b.rt.Prepare(b.ctx, req)
	safe := p.ConcurrencySafe()
	if !b.waitRoom(safe) {
		b.finish(n, safe, false)
		return
	}
	if h.Start != nil {
		h.Start(n, p.Call(), safe)
	}
	p.e.sequencer = &sequencer{b: b, n: n, safe: safe}
	r := p.Run()
	if h.Done != nil {
		h.Done(n, r)
	}
	b.finish(n, safe, true)
}

// waitFront blocks until call n is the next to start. It reports false when
// the batch closed or was cancelled first.
func (b *Batch) waitFront(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.open() && n != b.nextStart {
		b.cond.Wait()
	}
	return b.open()
}

// waitRoom blocks the front call until the window has room for it (an
// exclusive call needs it empty), then takes its place. It reports false
// when the batch closed or was cancelled first.
func (b *Batch) waitRoom(safe bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.open() && !b.roomLocked(safe) {
		b.cond.Wait()
	}
	if !b.open() {
		return false
	}
	b.inflight++
	b.exclusive = !safe
	return true
}

// open reports whether calls may still start; callers hold mu.
func (b *Batch) open() bool { return !b.closed && b.ctx.Err() == nil }

func (b *Batch) roomLocked(safe bool) bool {
	if b.exclusive {
		return false
	}
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
			b.nextStart = n + 1 // an exclusive call holds later starts until it has settled
		}
	} else if b.nextStart == n {
		b.nextStart = n + 1
	}
	b.finished[n] = true
	for b.finished[b.frontier+1] {
		delete(b.finished, b.frontier+1)
		b.frontier++
	}
	b.cond.Broadcast()
}

// sequencer keeps pre-policy (and, in order, post-policy) of siblings in
// submission order.
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

// PostTurn waits, in an in-order batch, until every earlier call has
// settled.
func (s *sequencer) PostTurn() {
	if !s.b.inOrder {
		return
	}
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
func (b *Batch) Close() { b.end(true) }

// Drain ends the batch without cancelling it: calls not yet started are
// abandoned (their hooks never run), calls in flight run to their end, and
// Drain returns when they have. A run that suspends drains its calls, so
// that every call that started has its own settlement in the log.
func (b *Batch) Drain() { b.end(false) }

func (b *Batch) end(cancel bool) {
	b.mu.Lock()
	b.closed = true
	held := b.held
	b.held = nil
	b.cond.Broadcast()
	b.mu.Unlock()
	if cancel {
		b.cancel()
	}
	for _, run := range held {
		run() // closed: it is abandoned at once
	}
	b.wg.Wait()
}
