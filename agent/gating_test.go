package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sessiontest"
)

// countingStore counts what a step asks of its store and can hold every
// write's durability until released (sessiontest.HeldStore): what the group
// commit would take a flush for.
type countingStore struct {
	*sessiontest.HeldStore
	submits, appends, creates, gets atomic.Int32
	usedLookups                     atomic.Int32 // UsedCallIDs calls
	afters                          []int64      // the after of every Events call; guarded by mu

	mu    sync.Mutex
	types []string // the types of the events submitted, in order; guarded by mu
}

func newCountingStore(s session.Store) *countingStore {
	return &countingStore{HeldStore: sessiontest.NewHeldStore(s)}
}

func (s *countingStore) Submit(ctx context.Context, w session.Write) *session.Ticket {
	s.submits.Add(1)
	s.mu.Lock()
	for _, e := range w.Events {
		s.types = append(s.types, e.Type)
	}
	s.mu.Unlock()
	return s.HeldStore.Submit(ctx, w)
}

func (s *countingStore) Append(ctx context.Context, id string, evs ...session.Event) ([]session.Event, error) {
	s.appends.Add(1)
	return s.Store.Append(ctx, id, evs...)
}

func (s *countingStore) CreateSession(ctx context.Context, sess session.Session) error {
	s.creates.Add(1)
	return s.Store.CreateSession(ctx, sess)
}

func (s *countingStore) GetSession(ctx context.Context, id string) (session.Session, error) {
	s.gets.Add(1)
	return s.Store.GetSession(ctx, id)
}

func (s *countingStore) Events(ctx context.Context, id string, after int64, limit int) ([]session.Event, error) {
	s.mu.Lock()
	s.afters = append(s.afters, after)
	s.mu.Unlock()
	return s.Store.Events(ctx, id, after, limit)
}

func (s *countingStore) UsedCallIDs(ctx context.Context, id string, ids []string) ([]string, error) {
	s.usedLookups.Add(1)
	return s.Store.UsedCallIDs(ctx, id, ids)
}

// A run in a new session is one write: the session, its tool/call and its
// tool/result commit together, in one transaction of the group commit.
func TestTrivialRunIsOneWrite(t *testing.T) {
	cs := newCountingStore(session.NewMemory())
	e := newEnv(t, cs, registry.ModeCode, agent.Options{})
	cs.submits.Store(0)
	cs.creates.Store(0)
	rep, err := e.agent.Run(context.Background(), "new", "return 1", "", agent.RunOptions{Create: &session.Session{ID: "new", Scope: scope}})
	if err != nil || rep.Result.IsError() {
		t.Fatalf("%v %+v", err, rep)
	}
	if n, c, a := cs.submits.Load(), cs.creates.Load(), cs.appends.Load(); n != 1 || c != 0 || a != 0 {
		t.Fatalf("a trivial run in a new session made %d writes, %d creates, %d appends; want 1 write", n, c, a)
	}
	evs := mustEvents(t, cs, "new")
	if len(evs) != 2 || evs[0].Type != session.TypeToolCall || evs[1].Type != session.TypeToolResult {
		t.Fatalf("log %v", types(evs))
	}
}

// Nothing of a step leaves the process before its log is durable: with
// every write held, the step does not return.
func TestStepWaitsForItsLog(t *testing.T) {
	cs := newCountingStore(session.NewMemory())
	e := newEnv(t, cs, registry.ModeNative, agent.Options{})
	cs.Hold(false)
	done := stepAsync(e, "c1", `{"a":1,"b":2}`)
	wantPending(t, done, 100*time.Millisecond, "the step returned before its log was durable")
	cs.Unhold()
	cs.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// stepAsync runs a step of one math_add call, id with args, on e's session
// and returns where its error will be sent.
func stepAsync(e *env, id, args string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call(id, "math_add", args)})
		done <- err
	}()
	return done
}

// wantPending fails the test with what when done delivers within d.
func wantPending(t *testing.T, done <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s (%v)", what, err)
	case <-time.After(d):
	}
}

// Output gating at the edge: StepGated returns the results while the log is
// still being flushed, with a gate that opens only once it is durable; the
// session's next step waits for the writes, whoever waits on the gate.
func TestStepGatedReturnsBeforeItsLogAndGatesIt(t *testing.T) {
	cs := newCountingStore(session.NewMemory())
	e := newEnv(t, cs, registry.ModeNative, agent.Options{})
	cs.Hold(false)
	out, gate, err := e.agent.StepGated(context.Background(), e.sid, []agent.ToolCall{call("c1", "math_add", `{"a":1,"b":2}`)})
	if err != nil || len(out.Results) != 1 || out.Results[0].Result.IsError() {
		t.Fatalf("StepGated: %v %+v", err, out)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := gate.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the gate opened (%v) before the log was durable", err)
	}
	next := stepAsync(e, "c2", `{"a":2,"b":2}`)
	wantPending(t, next, 50*time.Millisecond, "the next step ran before the first one's writes resolved")
	cs.Unhold()
	cs.Release()
	if err := gate.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, ev := range mustEvents(t, cs, e.sid) {
		if ev.Type == session.TypeToolCall {
			var c session.ToolCall
			if err := ev.Decode(&c); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, c.Step)
		}
	}
	if !slices.Equal(steps, []int{1, 2}) {
		t.Fatalf("steps of the two calls %v, want [1 2]: the second step must see the first one's log", steps)
	}
}

// A gate whose writes failed reports it: the step failed, and Step says so.
func TestGateReportsAFailedWrite(t *testing.T) {
	e := newEnv(t, failingStore{Store: session.NewMemory(), typ: session.TypeToolResult}, registry.ModeNative, agent.Options{})
	_, gate, err := e.agent.StepGated(context.Background(), e.sid, []agent.ToolCall{call("c1", "math_add", `{"a":1,"b":2}`)})
	if err == nil {
		err = gate.Wait(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("StepGated then Wait: %v, want the write's failure", err)
	}
	if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call("c2", "math_add", `{"a":1,"b":2}`)}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Step: %v, want the write's failure", err)
	}
}

// submitted reports whether an event of type typ has been submitted.
func (s *countingStore) submitted(typ string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.types, typ)
}

// Write-ahead for effects: a sub-call of a tool that may have effects runs
// only once its dispatch-start is durable; a read-only one does not wait.
// With every write held, the read-only call settles and the run reaches its
// result (its tool/result is submitted), the effectful one does not start.
func TestWriteAheadForEffects(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		waits      bool
	}{
		{"read-only", `return (await tools.math_add({a: 1, b: 2})).sum`, false},
		{"effectful", `return (await tools.probe({id: "effect"})).id`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := newCountingStore(session.NewMemory())
			e := newEnv(t, cs, registry.ModeCode, agent.Options{})
			cs.submits.Store(0)
			cs.Hold(false)
			done := make(chan struct{})
			go func() {
				defer close(done)
				e.agent.Run(context.Background(), e.sid, tc.code, "", agent.RunOptions{})
			}()
			deadline := time.Now().Add(5 * time.Second)
			for !tc.waits && !cs.submitted(session.TypeToolResult) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
			switch n := cs.submits.Load(); {
			case tc.waits && (n != 1 || len(e.rec.log()) > 0):
				t.Fatalf("an effectful call ran before its dispatch-start was durable (%d writes, %v)", n, e.rec.log())
			case !tc.waits && !cs.submitted(session.TypeToolResult):
				t.Fatalf("a read-only call waited for the log (%d writes, no tool/result)", n)
			}
			cs.Unhold()
			cs.Release()
			<-done
			if tc.waits && !slices.Contains(e.rec.log(), "start:effect") {
				t.Fatal("the effectful call never ran")
			}
		})
	}
}

// After a restart, a step starts from the session's checkpoint and reads
// only the events after it.
func TestStepsResumeFromACheckpoint(t *testing.T) {
	store := session.NewMemory()
	e := newEnv(t, store, registry.ModeNative, agent.Options{})
	for i := 0; i < 150; i++ { // 150 steps of two events: past the checkpoint interval
		if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call(id(i), "math_add", `{"a":1,"b":2}`)}); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := store.LoadCheckpoint(context.Background(), e.sid)
	if err != nil || cp.Seq == 0 {
		t.Fatalf("no checkpoint after 300 events: %+v %v", cp, err)
	}
	cs := newCountingStore(store)
	restarted := agent.New(e.rt, cs, agent.Options{})
	res, err := restarted.Step(context.Background(), e.sid, []agent.ToolCall{call("after-restart", "math_add", `{"a":1,"b":2}`)})
	if err != nil || res.Results[0].Result.IsError() {
		t.Fatalf("%v %+v", err, res)
	}
	if len(cs.afters) == 0 || cs.afters[0] != cp.Seq {
		t.Fatalf("the first step after a restart read events after %v, want after the checkpoint's %d", cs.afters, cp.Seq)
	}
	// The checkpoint's state continues the turn and step numbering.
	var c session.ToolCall
	evs := mustEvents(t, store, e.sid)
	if err := evs[len(evs)-2].Decode(&c); err != nil || c.Turn != 1 || c.Step != 151 {
		t.Fatalf("the step after the restart is %+v", c)
	}
	// A call id used before the checkpoint is still refused: the store's
	// index is asked about ids the state does not hold.
	lookups := cs.usedLookups.Load()
	if _, err := restarted.Step(context.Background(), e.sid, []agent.ToolCall{call(id(3), "math_add", `{}`)}); !errors.Is(err, agent.ErrInvalidCalls) {
		t.Fatalf("reused call id: %v", err)
	}
	if cs.usedLookups.Load() != lookups+1 {
		t.Fatal("a step's call ids were not looked up in the store's index")
	}
	// The ids Run mints are unique by NewID's contract: it asks nothing.
	lookups = cs.usedLookups.Load()
	if rep, err := restarted.Run(context.Background(), e.sid, "return 1", "", agent.RunOptions{}); err != nil || rep.Result.IsError() {
		t.Fatalf("run after a restart: %v %+v", err, rep)
	}
	if n := cs.usedLookups.Load() - lookups; n != 0 {
		t.Fatalf("a run with a minted call id looked it up %d times", n)
	}
	// One whose caller names its call id is checked.
	if _, err := restarted.Run(context.Background(), e.sid, "return 1", "", agent.RunOptions{CallID: id(4)}); !errors.Is(err, agent.ErrInvalidCalls) {
		t.Fatalf("a run reusing a call id: %v", err)
	}
}

func id(i int) string { b, _ := json.Marshal(i); return "c" + string(b) }

// A checkpoint costs no write of its own: the step that finds one due saves
// it with its first write, as the state before that write's events.
func TestCheckpointsRideTheStepsWrite(t *testing.T) {
	cs := newCountingStore(session.NewMemory())
	e := newEnv(t, cs, registry.ModeNative, agent.Options{})
	var last session.Checkpoint
	for i := 0; i < 100; i++ { // two events a step: past the checkpoint interval
		before := cs.submits.Load()
		if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call(id(i), "math_add", `{"a":1,"b":2}`)}); err != nil {
			t.Fatal(err)
		}
		if n := cs.submits.Load() - before; n != 1 {
			t.Fatalf("step %d made %d writes, want 1", i+1, n)
		}
		cp, err := cs.LoadCheckpoint(context.Background(), e.sid)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Seq != last.Seq {
			// A new checkpoint: the state before this step's two events.
			if cp.Seq != int64(2*i) {
				t.Fatalf("step %d saved a checkpoint at seq %d, want %d", i+1, cp.Seq, 2*i)
			}
			last = cp
		}
	}
	if last.Seq == 0 {
		t.Fatal("no checkpoint after 200 events")
	}
}

// Two agents sharing a store with leases never interleave one session's
// steps: every step's tool/call and tool/result are adjacent in the log.
func TestLeasesSerializeStepsAcrossAgents(t *testing.T) {
	store := session.NewMemory()
	e := newEnv(t, store, registry.ModeNative, agent.Options{Leases: true})
	other := agent.New(e.rt, store, agent.Options{Leases: true})
	var wg sync.WaitGroup
	for i, a := range []*agent.Agent{e.agent, other, e.agent, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				sleep := `{"ms":2}`
				if _, err := a.Step(context.Background(), e.sid, []agent.ToolCall{call(id(i*100+j), "util_sleep", sleep)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	evs := mustEvents(t, store, e.sid)
	if len(evs) != 80 {
		t.Fatalf("%d events, want 80", len(evs))
	}
	for k := 0; k < len(evs); k += 2 {
		var c session.ToolCall
		var r session.ToolResult
		if evs[k].Decode(&c) != nil || evs[k+1].Decode(&r) != nil || c.CallID != r.CallID {
			t.Fatalf("steps interleaved at seq %d: %s then %s", evs[k].Seq, evs[k].Data, evs[k+1].Data)
		}
	}
}

func types(evs []session.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// A session's cached state remembers a bounded number of call ids, however
// long the session: past the bound a step's ids are looked up in the store's
// index, so an id used long before is still refused.
func TestCachedCallIDsAreBounded(t *testing.T) {
	cs := newCountingStore(session.NewMemory())
	e := newEnv(t, cs, registry.ModeNative, agent.Options{})
	const steps = 4100 // past the bound of 4,096
	for i := range steps {
		if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call(id(i), "math_add", `{"a":1,"b":2}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := agent.CachedCallIDs(e.agent, e.sid); got > 4096 || got == 0 {
		t.Fatalf("the cached state holds %d call ids after %d steps", got, steps)
	}
	lookups := cs.usedLookups.Load()
	for _, reused := range []int{0, steps - 1} { // forgotten, and remembered
		if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call(id(reused), "math_add", `{}`)}); !errors.Is(err, agent.ErrInvalidCalls) {
			t.Fatalf("call id %s reused: %v", id(reused), err)
		}
	}
	if cs.usedLookups.Load() != lookups+1 {
		t.Fatalf("%d index lookups for a forgotten and a remembered id, want 1", cs.usedLookups.Load()-lookups)
	}
	if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call("fresh", "math_add", `{"a":1,"b":2}`)}); err != nil {
		t.Fatalf("a new id after the bound: %v", err)
	}
}
