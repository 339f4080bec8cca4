package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/gopool"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// batchEnv registers "safe" and "excl" tools whose bodies block until the
// test releases them by id, and records starts, ends and post-policy order.
type batchEnv struct {
	rt      *Runtime
	mu      sync.Mutex
	log     []string
	release map[string]chan struct{}
	running atomic.Int32
	peak    atomic.Int32
}

func newBatchEnv(t *testing.T, ids ...string) *batchEnv {
	reg, rt := newRT(t)
	b := &batchEnv{rt: rt, release: map[string]chan struct{}{}}
	for _, id := range ids {
		b.release[id] = make(chan struct{})
	}
	body := func(ctx context.Context, _ registry.Exec, a frozen.Value) (any, error) {
		var in struct{ ID string }
		_ = a.Unmarshal(&in)
		n := b.running.Add(1)
		for p := b.peak.Load(); n > p && !b.peak.CompareAndSwap(p, n); p = b.peak.Load() {
		}
		b.note("start " + in.ID)
		select {
		case <-b.release[in.ID]:
		case <-ctx.Done():
		}
		b.running.Add(-1)
		b.note("end " + in.ID)
		return in.ID, ctx.Err()
	}
	mustRegister(t, reg, registry.Global, anyTool(t, "safe", registry.Behavior{Execute: body, IsConcurrencySafe: func(frozen.Value) bool { return true }}))
	mustRegister(t, reg, registry.Global, anyTool(t, "excl", registry.Behavior{Execute: body}))
	rt.AddPostPolicy(registry.Global, func(_ context.Context, c Call, _ PostView) (PostDecision, error) {
		b.note("post " + c.CallID)
		return PostDecision{}, nil
	})
	return b
}

func (b *batchEnv) note(s string) {
	b.mu.Lock()
	b.log = append(b.log, s)
	b.mu.Unlock()
}

func (b *batchEnv) has(s string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return index(b.log, s) >= 0
}

func index(list []string, s string) int {
	for i, l := range list {
		if l == s {
			return i
		}
	}
	return -1
}

func (b *batchEnv) waitFor(t *testing.T, s string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b.has(s) {
			return
		}
	}
	t.Fatalf("never saw %q in %v", s, b.log)
}

// barrier checks that the exclusive call x starts and that s3, submitted
// after it, waits until x ends; it then lets both end and waits for batch.
func (b *batchEnv) barrier(t *testing.T, batch *Batch) {
	t.Helper()
	b.waitFor(t, "start x")
	time.Sleep(10 * time.Millisecond)
	if b.has("start s3") {
		t.Fatal("a later call started while the exclusive one ran")
	}
	close(b.release["x"])
	b.waitFor(t, "start s3")
	close(b.release["s3"])
	batch.Wait()
}

func (b *batchEnv) submit(batch *Batch, name, id string, results map[int]*Result, mu *sync.Mutex) {
	batch.Go(Request{Name: name, Arguments: fmt.Sprintf(`{"id":%q}`, id)}, Hooks{
		CallID: func(n int) string { return fmt.Sprintf("c%d", n) },
		Done: func(n int, r *Result) {
			mu.Lock()
			results[n] = r
			mu.Unlock()
		},
	})
}

func TestBatchOrdersPolicyAndBarriers(t *testing.T) {
	b := newBatchEnv(t, "s1", "s2", "x", "s3")
	batch := b.rt.NewBatch(context.Background(), BatchOptions{Window: 10, InOrder: true})
	results := map[int]*Result{}
	var mu sync.Mutex
	b.submit(batch, "safe", "s1", results, &mu)
	b.submit(batch, "safe", "s2", results, &mu)
	b.submit(batch, "excl", "x", results, &mu)
	b.submit(batch, "safe", "s3", results, &mu)
	b.waitFor(t, "start s1")
	b.waitFor(t, "start s2")
	close(b.release["s2"]) // the second finishes first...
	b.waitFor(t, "end s2")
	time.Sleep(10 * time.Millisecond)
	if b.has("post c2") || b.has("start x") {
		t.Fatalf("post-policy or the exclusive call ran early: %v", b.log)
	}
	close(b.release["s1"]) // ...but post-policy keeps submission order
	b.barrier(t, batch)
	var order []string
	for _, l := range b.log {
		if strings.HasPrefix(l, "post ") {
			order = append(order, l)
		}
	}
	if strings.Join(order, ",") != "post c1,post c2,post c3,post c4" {
		t.Fatalf("post-policy order %v", order)
	}
	if results[1].CallID() != "c1" || results[4].Value().String() != `"s3"` {
		t.Fatalf("results %v", results)
	}
}

func TestBatchWindowAndClose(t *testing.T) {
	b := newBatchEnv(t, "a", "b", "c", "d")
	batch := b.rt.NewBatch(context.Background(), BatchOptions{Window: 2})
	results := map[int]*Result{}
	var mu sync.Mutex
	for _, id := range []string{"a", "b", "c", "d"} {
		b.submit(batch, "safe", id, results, &mu)
	}
	b.waitFor(t, "start a")
	b.waitFor(t, "start b")
	time.Sleep(10 * time.Millisecond)
	if b.has("start c") {
		t.Fatal("the window of 2 was exceeded")
	}
	batch.Close() // cancels a and b, abandons c and d
	if len(results) != 2 || results[1].Code() != registry.CodeAborted || b.has("start c") || b.peak.Load() != 2 {
		t.Fatalf("results %d peak %d log %v", len(results), b.peak.Load(), b.log)
	}
	if _, ok := batch.Go(Request{Name: "safe"}, Hooks{}); ok {
		t.Fatal("a closed batch accepted a call")
	}
}

func TestBatchCancelledContextAbandonsQueued(t *testing.T) {
	b := newBatchEnv(t, "a", "b")
	ctx, cancel := context.WithCancel(context.Background())
	batch := b.rt.NewBatch(ctx, BatchOptions{Window: 1})
	results := map[int]*Result{}
	var mu sync.Mutex
	b.submit(batch, "excl", "a", results, &mu)
	b.submit(batch, "excl", "b", results, &mu)
	b.waitFor(t, "start a")
	cancel()
	batch.Wait()
	if len(results) != 1 || b.has("start b") || batch.Context().Err() == nil {
		t.Fatalf("results %d log %v", len(results), b.log)
	}
}

// Without InOrder (a program's sub-calls) each call settles as soon as its
// own body ends: a later call that finishes first runs its post-policy and
// Done first, while the exclusive barrier and pre-dispatch order still hold.
func TestBatchSettlesEachCallOnItsOwn(t *testing.T) {
	b := newBatchEnv(t, "s1", "s2", "x", "s3")
	batch := b.rt.NewBatch(context.Background(), BatchOptions{Window: 10})
	var mu sync.Mutex
	var done []int
	results := map[int]*Result{}
	submit := func(name, id string) {
		batch.Go(Request{Name: name, Arguments: fmt.Sprintf(`{"id":%q}`, id)}, Hooks{
			CallID: func(n int) string { return fmt.Sprintf("c%d", n) },
			Done: func(n int, r *Result) {
				mu.Lock()
				done = append(done, n)
				results[n] = r
				mu.Unlock()
				b.note(fmt.Sprintf("done c%d", n))
			},
		})
	}
	submit("safe", "s1")
	submit("safe", "s2")
	submit("excl", "x")
	submit("safe", "s3")
	b.waitFor(t, "start s1")
	b.waitFor(t, "start s2")
	close(b.release["s2"])
	b.waitFor(t, "done c2") // settled while c1 still runs
	if b.has("post c1") || b.has("start x") {
		t.Fatalf("c1 settled or the exclusive call started early: %v", b.log)
	}
	close(b.release["s1"])
	b.barrier(t, batch)
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(done) != "[2 1 3 4]" {
		t.Fatalf("settlement order %v, want [2 1 3 4]; log %v", done, b.log)
	}
	// The exclusive call's Done ran before the call after it started.
	if i, j := index(b.log, "done c3"), index(b.log, "start s3"); i < 0 || j < i {
		t.Fatalf("the exclusive call's Done did not precede the next start: %v", b.log)
	}
}

// A queued call is classified from the definition live when it starts, not
// when it was submitted: "flip" is safe at submission and replaced by an
// exclusive definition while it waits behind an exclusive call, so it must
// not overlap the safe call after it.
func TestBatchClassifiesWhenACallStarts(t *testing.T) {
	b := newBatchEnv(t, "x", "f", "s")
	reg := b.rt.Registry()
	body := func(ctx context.Context, e registry.Exec, a frozen.Value) (any, error) {
		var in struct{ ID string }
		_ = a.Unmarshal(&in)
		b.note("start " + in.ID)
		select {
		case <-b.release[in.ID]:
		case <-ctx.Done():
		}
		b.note("end " + in.ID)
		return in.ID, nil
	}
	unreg := mustRegister(t, reg, registry.Global, anyTool(t, "flip", registry.Behavior{Execute: body, IsConcurrencySafe: func(frozen.Value) bool { return true }}))
	batch := b.rt.NewBatch(context.Background(), BatchOptions{Window: 10})
	var mu sync.Mutex
	safeAt := map[int]bool{}
	go1 := func(name, id string) {
		batch.Go(Request{Name: name, Arguments: fmt.Sprintf(`{"id":%q}`, id)}, Hooks{
			Start: func(n int, c Call, safe bool) {
				mu.Lock()
				safeAt[n] = safe
				mu.Unlock()
			},
		})
	}
	go1("excl", "x")
	b.waitFor(t, "start x")
	go1("flip", "f") // safe now...
	go1("safe", "s")
	unreg() // ...and exclusive by the time it starts
	mustRegister(t, reg, registry.Global, anyTool(t, "flip", registry.Behavior{Execute: body}))
	close(b.release["x"])
	b.waitFor(t, "start f")
	time.Sleep(20 * time.Millisecond)
	if b.has("start s") {
		t.Fatalf("the re-registered exclusive call overlapped a later one: %v", b.log)
	}
	close(b.release["f"])
	close(b.release["s"])
	batch.Wait()
	mu.Lock()
	defer mu.Unlock()
	if safeAt[2] || !safeAt[3] {
		t.Fatalf("verdicts at start: %v", safeAt)
	}
}

// Every call resolves its tool in the live view once and reads its
// arguments once, whether it runs alone or in a batch (where the scheduler's
// concurrency verdict comes from the same resolution).
func TestEachCallResolvesAndParsesOnce(t *testing.T) {
	reg, rt := newRT(t)
	if err := reg.CreateScope("s", registry.Global, registry.ModeNative); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{IsConcurrencySafe: func(frozen.Value) bool { return true }}))
	rt.AddPrePolicy("s", func(context.Context, Call) (Decision, error) { return Allow(), nil }) // scoped: hooks are picked per call
	rt.AddGuard("s", func(context.Context, Call) string { return "" })
	var resolves, parses atomic.Int32
	testHookResolve = func() { resolves.Add(1) }
	testHookParse = func() { parses.Add(1) }
	t.Cleanup(func() { testHookResolve, testHookParse = nil, nil })

	if r := rt.Execute(context.Background(), Request{Name: "add", Scope: "s", Arguments: `{"a":1,"b":2}`}); r.IsError() {
		t.Fatal(r.Error())
	}
	if resolves.Load() != 1 || parses.Load() != 1 {
		t.Fatalf("one Execute: %d view resolutions, %d argument parses; want 1 and 1", resolves.Load(), parses.Load())
	}
	resolves.Store(0)
	parses.Store(0)
	batch := rt.NewBatch(context.Background(), BatchOptions{Window: 2})
	for i := 0; i < 3; i++ {
		batch.Go(Request{Name: "add", Scope: "s", Arguments: `{"a":1,"b":2}`}, Hooks{})
	}
	batch.Wait()
	if resolves.Load() != 3 || parses.Load() != 3 {
		t.Fatalf("a batch of 3: %d view resolutions, %d argument parses; want 3 and 3", resolves.Load(), parses.Load())
	}
}

// A batch's calls run on gopool's goroutines, which wait there once the
// batch has closed: none is left behind that the pool does not hold, and
// later calls reuse them rather than start more.
func TestBatchWorkersEndWithTheBatch(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{IsConcurrencySafe: func(frozen.Value) bool { return true }}))
	busy := func() int { return goruntime.NumGoroutine() - gopool.Idle() }
	before, total := busy(), goruntime.NumGoroutine()
	for round := range 3 {
		b := rt.NewBatch(context.Background(), BatchOptions{Window: 4})
		for i := range 20 {
			done := make(chan *Result, 1)
			if _, ok := b.Go(Request{Name: "add", Arguments: fmt.Sprintf(`{"a":%d,"b":1}`, i)}, Hooks{Done: func(_ int, r *Result) { done <- r }}); !ok {
				t.Fatal("the batch refused a call")
			}
			if r := <-done; r.IsError() {
				t.Fatal(r.Error().Message)
			}
		}
		b.Close()
		deadline := time.Now().Add(5 * time.Second)
		for busy() > before {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d goroutines busy before the batch, %d after it closed", round, before, busy())
			}
			time.Sleep(time.Millisecond)
		}
	}
	if n := goruntime.NumGoroutine(); n > total+4 {
		t.Errorf("%d goroutines before three batches of one call at a time, %d after: the pool's were not reused", total, n)
	}
}

// A batch that holds its calls starts none until Release; Release runs the
// batch's only unfinished call on the calling goroutine when asked to, and
// starts the others elsewhere; stop cancels the call running inline; Close
// abandons what is still held (its hooks never run).
func TestBatchHoldsCallsUntilReleased(t *testing.T) {
	b := newBatchEnv(t, "a", "b", "c", "d")
	batch := b.rt.NewBatch(context.Background(), BatchOptions{Window: 10})
	batch.Hold()
	results := map[int]*Result{}
	var mu sync.Mutex
	b.submit(batch, "safe", "a", results, &mu)
	time.Sleep(10 * time.Millisecond)
	if b.has("start a") {
		t.Fatal("a held call started before Release")
	}
	// The only unfinished call, released alone: it runs here and has settled on return.
	close(b.release["a"])
	if !batch.Release(true, nil) || len(results) != 1 || results[1].IsError() {
		t.Fatalf("inline release: results %v", results)
	}
	// Two calls held: released alone or not, they start elsewhere and overlap.
	b.submit(batch, "safe", "b", results, &mu)
	b.submit(batch, "safe", "c", results, &mu)
	if batch.Release(true, nil) {
		t.Fatal("two held calls ran inline")
	}
	b.waitFor(t, "start b")
	b.waitFor(t, "start c")
	close(b.release["b"])
	close(b.release["c"])
	b.waitFor(t, "end b")
	b.waitFor(t, "end c")
	// Running inline, stopped: the batch is cancelled and the call ends ABORTED.
	b.submit(batch, "safe", "d", results, &mu)
	stop, halt := context.WithCancel(context.Background())
	go func() { b.waitFor(t, "start d"); halt() }()
	for i := 0; i < 100; i++ { // b and c finish before d is alone
		mu.Lock()
		n := len(results)
		mu.Unlock()
		if n == 3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !batch.Release(true, stop) {
		t.Fatal("the only unfinished call did not run inline")
	}
	mu.Lock()
	d := results[4]
	mu.Unlock()
	if d == nil || d.Code() != registry.CodeAborted {
		t.Fatalf("stopped inline call: %+v", d)
	}
	b.submit(batch, "safe", "e", results, &mu)
	batch.Close()
	if _, ok := results[5]; ok || b.has("start e") {
		t.Fatal("a call held at Close ran")
	}
}
