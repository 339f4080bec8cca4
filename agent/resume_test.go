package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/internal/gopool"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sqlite"
)

// suspending reads with a read-only call, then asks for an effectful one; it
// hands what it saw of the clock, randomness and timers before the ask to
// the first call, and returns it with what it saw after.
const suspending = `
const t0 = Date.now(), r0 = Math.random(), u0 = crypto.randomUUID(), p0 = performance.now();
const order = [];
setTimeout(() => order.push("timer"), 1);
const seen = { t0, r0, u0, p0 };
const a = await tools.probe({ id: "read", safe: true, contexts: [JSON.stringify(seen)] });
order.push(a.id);
await new Promise(r => setTimeout(r, 2));
const b = await tools.probe({ id: "write", ask: true, contexts: [JSON.stringify(order)] }); // diverges unless the order replays
order.push(b.id);
await new Promise(r => setTimeout(r, 2));
return { seen, order, later: Date.now() >= t0, r1: Math.random() !== r0 };`

func TestSuspendAndResume(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{Hold: 30 * time.Millisecond})
	askForProbe(e.rt)
	ctx := context.Background()
	rep, err := e.agent.Run(ctx, e.sid, suspending, "", agent.RunOptions{CallID: "run1", Hold: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result.Code() != registry.CodeSuspended {
		t.Fatalf("the run did not suspend: %s %v", rep.Result.Code(), rep.Result.Content())
	}
	if got := e.rec.log(); !slices.Equal(got, []string{"start:read", "end:read"}) {
		t.Fatalf("before the answer the tools ran %v", got)
	}
	// The session takes no step while its run is suspended.
	if _, err := e.agent.Step(ctx, e.sid, []agent.ToolCall{probe("c2", probeArgs{})}); !errors_Is(err, agent.ErrSuspended) {
		t.Fatalf("a step beside a suspended run: %v; want ErrSuspended", err)
	}
	st, err := e.agent.Call(ctx, e.sid, "run1")
	if err != nil || st.State != agent.CallOpen {
		t.Fatalf("the suspended call reads %+v, %v; want it open", st, err)
	}
	pending, err := e.agent.Approvals(ctx, e.sid)
	if err != nil || len(pending) != 1 || pending[0].CallID != "run1:code:2" {
		t.Fatalf("pending asks %+v, %v; want the write's", pending, err)
	}
	if _, err := e.agent.Resume(ctx, e.sid, "run1"); !errors_Is(err, agent.ErrWaiting) {
		t.Fatalf("resuming before the answer: %v; want ErrWaiting", err)
	}
	answer(t, e.agent, e.sid, pending[0].ID, true, "")
	st, err = e.agent.AwaitCall(ctx, e.sid, "run1", 10*time.Second)
	if err != nil || st.State != agent.CallSettled || st.Result == nil || st.Result.IsError {
		t.Fatalf("after the answer the call is %+v, %v", st, err)
	}
	var out struct {
		Result struct {
			Seen  map[string]any `json:"seen"`
			Order []string       `json:"order"`
			Later bool           `json:"later"`
			R1    bool           `json:"r1"`
		}
	}
	if err := json.Unmarshal([]byte(st.Result.Content[0].Text), &out.Result); err != nil {
		t.Fatalf("result %q: %v", st.Result.Content[0].Text, err)
	}
	// What the program saw before the ask is what it handed the read call then.
	var before map[string]any
	if err := json.Unmarshal([]byte(firstContext(t, e, "run1:code:1")), &before); err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(before, out.Result.Seen) {
		t.Fatalf("the resumed program saw %v before the ask; the first execution saw %v (%s)", out.Result.Seen, before, st.Result.Content[0].Text)
	}
	if order := out.Result.Order; len(order) != 3 || order[2] != "write" || !out.Result.Later || !out.Result.R1 {
		t.Fatalf("result %+v", out.Result)
	}
	if got := e.rec.log(); !slices.Equal(got, []string{"start:read", "end:read", "start:write", "end:write"}) {
		t.Fatalf("the tools ran %v; want each once", got)
	}
	// The session goes on.
	if _, err := e.agent.Step(ctx, e.sid, []agent.ToolCall{probe("c3", probeArgs{})}); err != nil {
		t.Fatalf("a step after the run resumed: %v", err)
	}
	if _, err := e.agent.Resume(ctx, e.sid, "run1"); !errors_Is(err, agent.ErrNotSuspended) {
		t.Fatalf("resuming again: %v; want ErrNotSuspended", err)
	}
}

// firstContext is the first context the settlement of sub-call id carried.
func firstContext(t *testing.T, e *env, id string) string {
	t.Helper()
	events, err := e.store.Events(context.Background(), e.sid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if d, ok := ev.Payload().(*session.CodeDispatch); ok && d.SubCallID == id && len(d.Contexts) > 0 {
			return d.Contexts[0].Text
		}
	}
	t.Fatalf("no settlement of %s with a context", id)
	return ""
}

func mapsEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// A resumed run that makes another call than the log has fails with
// REPLAY_DIVERGED, naming the call and the difference; nothing runs.
func TestResumeDiverges(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	logged := &bridge.Resume{Starts: []session.CodeDispatchStart{{SubCallID: "r:code:1", Number: 1, Name: "probe", Arguments: json.RawMessage(`{"id":"a"}`)}},
		Settled: map[int]session.CodeDispatch{}, Waiting: map[string]bool{}}
	for _, code := range []string{
		`await tools.probe({id: "b"})`,
		`await tools.kv_get({key: "a"})`,
	} {
		args, _ := json.Marshal(map[string]string{"code": code})
		res := e.rt.Execute(context.Background(), runtime.Request{
			CallID: "r", Name: registry.RunCode, Arguments: string(args), Scope: scope, SessionID: e.sid, CodeEntry: true,
			Run: runtime.RunOptions{Resume: logged},
		})
		if res.Code() != registry.CodeReplayDiverged || !strings.Contains(res.Error().Message, "call 1") {
			t.Errorf("%s: %s %v; want REPLAY_DIVERGED naming call 1", code, res.Code(), res.Error())
		}
	}
	if got := e.rec.log(); len(got) != 0 {
		t.Fatalf("a diverged replay ran %v", got)
	}
}

func errors_Is(err, target error) bool {
	return err != nil && strings.Contains(err.Error(), target.Error())
}

// An ask a suspended run waits for ends as "timeout" once it is older than
// the approval timeout: the service's sweep answers it, and the run resumes
// to see its call denied.
func TestSuspendedAskTimesOut(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{Hold: 20 * time.Millisecond, ApprovalTimeout: time.Hour, Now: func() time.Time { return time.Unix(0, now.Load()) }})
	askForProbe(e.rt)
	ctx := context.Background()
	code := `try { await tools.probe({ id: "w", ask: true }); return "ran" } catch (e) { return e.code }`
	rep, err := e.agent.Run(ctx, e.sid, code, "", agent.RunOptions{CallID: "run1", Hold: 20 * time.Millisecond})
	if err != nil || rep.Result.Code() != registry.CodeSuspended {
		t.Fatalf("run: %v %v", rep, err)
	}
	if n, err := e.agent.ResumeWaiting(ctx); n != 0 || err != nil {
		t.Fatalf("before the timeout the sweep resumed %d runs (%v)", n, err)
	}
	now.Add(int64(2 * time.Hour))
	if n, err := e.agent.ResumeWaiting(ctx); n != 1 || err != nil {
		t.Fatalf("past the timeout the sweep resumed %d runs (%v); want 1", n, err)
	}
	st, err := e.agent.AwaitCall(ctx, e.sid, "run1", 10*time.Second)
	if err != nil || st.State != agent.CallSettled || st.Result.Content[0].Text != "DENIED" {
		t.Fatalf("the run after its ask timed out: %+v %v", st.Result, err)
	}
	if got := e.rec.log(); len(got) != 0 {
		t.Fatalf("the denied call ran: %v", got)
	}
}

// A thousand suspended runs hold no goroutine and no worker: only log rows
// (and the agent's bounded cache of session states).
func TestThousandSuspendedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("a thousand runs")
	}
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{Hold: time.Millisecond})
	askForProbe(e.rt)
	ctx := context.Background()
	before := goruntime.NumGoroutine()
	const runs = 1000
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sid := fmt.Sprintf("t%d", i)
			if err := e.store.CreateSession(ctx, session.Session{ID: sid, Scope: scope}); err != nil {
				errs <- err
				return
			}
			rep, err := e.agent.Run(ctx, sid, `return await tools.probe({ id: "w", ask: true })`, "", agent.RunOptions{Hold: time.Millisecond})
			if err == nil && rep.Result.Code() != registry.CodeSuspended {
				err = fmt.Errorf("run %d: %s", i, rep.Result.Code())
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Goroutines idle in the pool (they end after a while of no work) hold
	// no run; lingering writes settle within moments.
	held := func() int { return goruntime.NumGoroutine() - gopool.Idle() - before }
	testkit.Eventually(t, "the suspended runs to hold no goroutine", func() bool { return held() <= 16 })
	open, err := e.store.OpenCalls(ctx)
	if err != nil || len(open) != runs {
		t.Fatalf("%d open calls (%v); want the %d suspended runs", len(open), err, runs)
	}
}

// BenchmarkSuspendedRun measures what a suspended run costs the service: the
// heap it keeps after it suspended (heap-B/run, with the log in a SQLite file,
// so log rows are not counted), and the time to run it to its suspension.
func BenchmarkSuspendedRun(b *testing.B) {
	store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "log.db"))
	if err != nil {
		b.Fatal(err)
	}
	e := newEnv(b, store, registry.ModeBoth, agent.Options{Hold: time.Microsecond})
	askForProbe(e.rt)
	ctx := context.Background()
	code := `const t = Date.now(); const a = await tools.probe({ id: "r", safe: true }); return await tools.probe({ id: "w" + t, ask: true })`
	var ms goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	heap := ms.HeapAlloc
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sid := fmt.Sprintf("b%d", i)
		if err := e.store.CreateSession(ctx, session.Session{ID: sid, Scope: scope}); err != nil {
			b.Fatal(err)
		}
		rep, err := e.agent.Run(ctx, sid, code, "", agent.RunOptions{Hold: time.Microsecond})
		if err != nil || rep.Result.Code() != registry.CodeSuspended {
			b.Fatalf("run %d: %v %v", i, rep, err)
		}
	}
	b.StopTimer()
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(heap))/float64(b.N), "heap-B/run")
}

// StopResuming waits for a resumption under way, so that a stopping service
// does not close workers and store under it; after it, answers resume
// nothing (the run stays suspended for the next process).
func TestStopResumingWaitsForResumptions(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{Hold: 20 * time.Millisecond})
	askForProbe(e.rt)
	ctx := context.Background()
	code := `const r = await tools.probe({ id: "w", ask: true }); await new Promise(ok => setTimeout(ok, 200)); return r.id`
	for _, id := range []string{"run1", "run2"} {
		rep, err := e.agent.Run(ctx, e.sid, code, "", agent.RunOptions{CallID: id, Hold: 20 * time.Millisecond})
		if err != nil || rep.Result.Code() != registry.CodeSuspended {
			t.Fatalf("%s: %v %v", id, rep, err)
		}
		pending, err := e.agent.Approvals(ctx, e.sid)
		if err != nil || len(pending) != 1 {
			t.Fatalf("pending %+v %v", pending, err)
		}
		answer(t, e.agent, e.sid, pending[0].ID, true, "")
		if id == "run2" {
			break
		}
		// The resumption is under way (it waits 200 ms in its program).
		testkit.Eventually(t, "the resumption to start", func() bool { return slices.Contains(e.rec.log(), "start:w") })
		e.agent.StopResuming()
		st, err := e.agent.Call(ctx, e.sid, "run1")
		if err != nil || st.State != agent.CallSettled {
			t.Fatalf("StopResuming returned before the resumed run ended: %+v %v", st, err)
		}
	}
	if _, err := e.agent.ResumeWaiting(ctx); err != nil {
		t.Fatal(err)
	}
	e.agent.StopResuming() // nothing was started
	st, err := e.agent.Call(ctx, e.sid, "run2")
	if err != nil || st.State != agent.CallOpen {
		t.Fatalf("a run answered after StopResuming: %+v %v; want it still suspended", st, err)
	}
}
