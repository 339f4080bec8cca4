package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// appendRaw appends hand-made events, as a crashed process left them.
func appendRaw(t *testing.T, store session.Store, sid string, events ...[2]any) {
	t.Helper()
	for _, ev := range events {
		e, err := session.NewEvent(ev[0].(string), ev[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Append(context.Background(), sid, e); err != nil {
			t.Fatal(err)
		}
	}
}

// Recover closes a call left open (with its unsettled nested call and its
// pending approvals), is idempotent, touches nothing else, and the session
// keeps working.
func TestRecoverClosesOpenCalls(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	e.step(t, call("c1", "math_add", `{"a":1,"b":2}`), probe("c2", probeArgs{Contexts: []string{"kept"}}))
	args := json.RawMessage(`{"ms":60000}`)
	appendRaw(t, e.store, e.sid,
		[2]any{session.TypeUserContext, session.UserContext{Source: "probe", Text: "kept", CallID: "c2"}},
		[2]any{session.TypeToolCall, session.ToolCall{Turn: 1, Step: 2, CallID: "c3", Name: registry.RunCode, Arguments: `{"code":"…","description":"d"}`}},
		[2]any{session.TypeCodeDispatchStart, session.CodeDispatchStart{RootCallID: "c3", ParentCallID: "c3", SubCallID: "c3:code:1", Name: "util_sleep", Arguments: args}},
		[2]any{session.TypeApprovalAsked, session.ApprovalAsked{ApprovalID: "ap1", CallID: "c3:code:1", Tool: "util_sleep", Arguments: args, Reason: "r"}},
		[2]any{session.TypeApprovalAsked, session.ApprovalAsked{ApprovalID: "ap0", CallID: "c30", Tool: "x", Arguments: args, Reason: "another call's"}},
	)
	before := e.events(t)

	n, err := e.agent.Recover(context.Background(), 0)
	if err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v; want 1", n, err)
	}
	after := e.events(t)
	for i, ev := range before {
		if a := after[i]; a.Seq != ev.Seq || a.Type != ev.Type || !bytes.Equal(a.Data, ev.Data) || !a.Time.Equal(ev.Time) {
			t.Fatalf("event %d changed:\n%+v\n%+v", i, ev, a)
		}
	}
	added := after[len(before):]
	if got, want := logged(t, added), []string{"tool/code-dispatch c3:code:1", "approval/answered c3:code:1", "tool/result c3"}; !slices.Equal(got, want) {
		t.Fatalf("recovery appended %v, want %v", got, want)
	}
	d := decode[session.CodeDispatch](t, added[0])
	if !d.IsError || d.Error.Code != registry.CodeAborted || d.Name != "util_sleep" || string(d.Arguments) != string(args) || d.StartedAt.IsZero() {
		t.Fatalf("dispatch closed as %+v", d)
	}
	if a := decode[session.ApprovalAnswered](t, added[1]); a.ApprovalID != "ap1" || a.Decision != session.DecisionCancelled || a.Reason != "process stopped" {
		t.Fatalf("approval closed as %+v", a)
	}
	r := decode[session.ToolResult](t, added[2])
	if !r.IsError || r.Error == nil || r.Error.Code != registry.CodeAborted || r.Error.Message != agent.Interrupted ||
		len(r.Content) != 1 || r.Content[0].Text != agent.Interrupted {
		t.Fatalf("call closed as %+v", r)
	}
	checkClosed(t, after)

	if n, err := e.agent.Recover(context.Background(), 0); err != nil || n != 0 {
		t.Fatalf("second Recover = %d, %v", n, err)
	}
	if len(e.events(t)) != len(after) {
		t.Fatal("second Recover appended")
	}
	if open, _ := e.store.OpenCalls(context.Background()); len(open) != 0 {
		t.Fatalf("still open: %+v", open)
	}

	e.step(t, call("c4", "math_add", `{"a":1,"b":2}`))
	c := ofType[session.ToolCall](t, e.events(t), session.TypeToolCall)
	if last := c[len(c)-1]; last.CallID != "c4" || last.Turn != 1 || last.Step != 3 {
		t.Fatalf("the next step is %+v, want turn 1 step 3", last)
	}
	if ctxs := ofType[session.UserContext](t, e.events(t), session.TypeUserContext); len(ctxs) != 1 {
		t.Fatalf("contexts recommitted after recovery: %+v", ctxs)
	}
	if pending, _ := e.agent.Approvals(context.Background(), e.sid); len(pending) != 1 || pending[0].ID != "ap0" {
		t.Fatalf("pending after recovery: %+v", pending)
	}
}

// olderThan spares calls that are younger.
func TestRecoverOlderThan(t *testing.T) {
	var now time.Time
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{Now: func() time.Time { return now }})
	appendRaw(t, e.store, e.sid, [2]any{session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "math_add", Arguments: "{}"}})
	at := e.events(t)[0].Time
	now = at.Add(time.Minute)
	if n, err := e.agent.Recover(context.Background(), time.Hour); err != nil || n != 0 {
		t.Fatalf("Recover(1h) = %d, %v; the call is a minute old", n, err)
	}
	if n, err := e.agent.Recover(context.Background(), 30*time.Second); err != nil || n != 1 {
		t.Fatalf("Recover(30s) = %d, %v", n, err)
	}
}

// Approvals and Answer read a long log a page at a time and still see what is past the
// first pages: an ask after 2,500 other events is listed and answered, and a second answer
// past them is refused.
func TestApprovalsPageThroughALongLog(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	evs := make([]session.Event, 0, 2500)
	for i := 0; i < 2500; i++ {
		ev, err := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "filler", Text: "x"})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if _, err := e.store.Append(context.Background(), e.sid, evs...); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, e.store, e.sid, [2]any{session.TypeApprovalAsked, session.ApprovalAsked{ApprovalID: "ap_late", CallID: "c9", Tool: "kv_set", Arguments: json.RawMessage(`{}`), Reason: "r"}})
	got, err := e.agent.Approvals(context.Background(), e.sid)
	if err != nil || len(got) != 1 || got[0].ID != "ap_late" {
		t.Fatalf("approvals = %+v, %v", got, err)
	}
	if err := e.agent.Answer(context.Background(), e.sid, "ap_late", true, ""); err != nil {
		t.Fatal(err)
	}
	if err := e.agent.Answer(context.Background(), e.sid, "ap_late", true, ""); !errors.Is(err, agent.ErrAnswered) {
		t.Fatalf("second answer: %v", err)
	}
	if got, _ := e.agent.Approvals(context.Background(), e.sid); len(got) != 0 {
		t.Fatalf("approvals after the answer = %+v", got)
	}
}

// An ApprovalWatch reads each time only what the log holds past its last
// read (a task polled every 500 ms on a long session reads no history
// again), and still follows asks and answers; AsksOf keeps a call's own asks
// and its program's.
func TestApprovalWatchReadsOnlyWhatIsNew(t *testing.T) {
	cs := newCountingStore(session.NewMemory())
	e := newEnv(t, cs, registry.ModeBoth, agent.Options{})
	ctx := context.Background()
	evs := make([]session.Event, 0, 2500)
	for range 2500 {
		ev, err := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "filler", Text: "x"})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if _, err := e.store.Append(ctx, e.sid, evs...); err != nil {
		t.Fatal(err)
	}
	w := e.agent.WatchApprovals(e.sid)
	pending := func() []agent.PendingApproval {
		t.Helper()
		cs.mu.Lock()
		cs.afters = nil
		cs.mu.Unlock()
		got, err := w.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := pending(); len(got) != 0 {
		t.Fatalf("pending = %+v", got)
	}
	header, err := cs.GetSession(ctx, e.sid)
	if err != nil {
		t.Fatal(err)
	}
	last := header.LastSeq
	appendRaw(t, e.store, e.sid,
		[2]any{session.TypeApprovalAsked, session.ApprovalAsked{ApprovalID: "ap1", CallID: "c1:code:2", Tool: "kv_set", Arguments: json.RawMessage(`{}`), Reason: "r"}},
		[2]any{session.TypeApprovalAsked, session.ApprovalAsked{ApprovalID: "ap2", CallID: "c10", Tool: "kv_delete", Arguments: json.RawMessage(`{}`), Reason: "r"}})
	got := pending()
	if len(got) != 2 || got[0].ID != "ap1" || got[1].ID != "ap2" {
		t.Fatalf("pending = %+v", got)
	}
	cs.mu.Lock()
	afters := slices.Clone(cs.afters)
	cs.mu.Unlock()
	if len(afters) == 0 || afters[0] != last {
		t.Errorf("the second read began after %v, want after %d (where the first stopped)", afters, last)
	}
	if own := agent.AsksOf(got, "c1"); len(own) != 1 || own[0].ID != "ap1" {
		t.Errorf("AsksOf(c1) = %+v, want ap1 only (c10 is another call)", own)
	}
	if err := e.agent.Answer(ctx, e.sid, "ap1", true, ""); err != nil {
		t.Fatal(err)
	}
	if got := pending(); len(got) != 1 || got[0].ID != "ap2" {
		t.Fatalf("pending after ap1's answer = %+v", got)
	}
}

// Recovery reads a session from its first open call on, a page at a time:
// not the history before it, and what it keeps is what is still open. A
// sub-call settled pages after its start is not closed again; one still
// open after 2,400 settled ones is.
func TestRecoverReadsFromTheOpenCall(t *testing.T) {
	cs := newCountingStore(session.NewMemory())
	e := newEnv(t, cs, registry.ModeBoth, agent.Options{})
	for i := range 3 {
		e.step(t, call(fmt.Sprintf("done%d", i), "math_add", `{"a":1,"b":2}`))
	}
	appendRaw(t, e.store, e.sid, [2]any{session.TypeToolCall, session.ToolCall{Turn: 2, Step: 1, CallID: "c9", Name: registry.RunCode, Arguments: `{"code":"…"}`}})
	open := e.events(t)[len(e.events(t))-1].Seq
	args := json.RawMessage(`{}`)
	start := func(sub string) session.Event {
		ev, err := session.NewEvent(session.TypeCodeDispatchStart, session.CodeDispatchStart{RootCallID: "c9", ParentCallID: "c9", SubCallID: sub, Name: "math_add", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	settle := func(sub string) session.Event {
		ev, err := session.NewEvent(session.TypeCodeDispatch, session.CodeDispatch{CodeDispatchStart: session.CodeDispatchStart{RootCallID: "c9", ParentCallID: "c9", SubCallID: sub, Name: "math_add", Arguments: args}})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	evs := []session.Event{start("c9:code:0")} // settled 2,400 events later, pages away
	for i := 1; i <= 1200; i++ {
		sub := fmt.Sprintf("c9:code:%d", i)
		evs = append(evs, start(sub), settle(sub))
	}
	evs = append(evs, settle("c9:code:0"), start("c9:code:open"))
	if _, err := e.store.Append(context.Background(), e.sid, evs...); err != nil {
		t.Fatal(err)
	}

	cs.mu.Lock()
	cs.afters = nil
	cs.mu.Unlock()
	if n, err := e.agent.Recover(context.Background(), 0); err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v", n, err)
	}
	cs.mu.Lock()
	afters := slices.Clone(cs.afters)
	cs.mu.Unlock()
	if len(afters) < 3 || afters[0] != open-1 || !slices.IsSorted(afters) {
		t.Fatalf("recovery read the log from %v; want pages from seq %d (the open call) on", afters, open-1)
	}
	all := e.events(t)
	added := all[len(all)-2:]
	if got, want := logged(t, added), []string{"tool/code-dispatch c9:code:open", "tool/result c9"}; !slices.Equal(got, want) {
		t.Fatalf("recovery appended %v, want %v", got, want)
	}
	checkClosed(t, all)
}

// RecoverLapsed closes the open calls of a session whose lease lapsed,
// whatever their age, and no other's: not one whose lease lives, nor one
// held by no lease; it releases the leases it took.
func TestRecoverLapsed(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{Leases: true})
	open := func(sid, callID string) {
		appendRaw(t, e.store, sid, [2]any{session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: callID, Name: "math_add", Arguments: `{}`}})
	}
	for _, sid := range []string{"lapsed", "live", "free"} {
		if err := e.store.CreateSession(ctx, session.Session{ID: sid, Scope: scope}); err != nil {
			t.Fatal(err)
		}
		open(sid, sid+"-call")
	}
	if _, err := e.store.AcquireLease(ctx, "lapsed", "gone", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.AcquireLease(ctx, "live", "alive", time.Hour); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	n, err := e.agent.RecoverLapsed(ctx)
	if err != nil || n != 1 {
		t.Fatalf("RecoverLapsed = %d, %v; want 1", n, err)
	}
	left, err := e.store.OpenCalls(ctx)
	if err != nil || len(left) != 2 || left[0].SessionID != "free" || left[1].SessionID != "live" {
		t.Fatalf("open calls left %+v, %v", left, err)
	}
	if _, err := e.store.AcquireLease(ctx, "lapsed", "next", time.Hour); err != nil {
		t.Fatalf("the lease taken over was not released: %v", err)
	}
	if ids, _, err := e.store.(session.LeaseSweeper).LapsedLeases(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("lapsed leases after the sweep: %v, %v", ids, err)
	}
	if n, err := e.agent.RecoverLapsed(ctx); err != nil || n != 0 {
		t.Fatalf("a second RecoverLapsed = %d, %v", n, err)
	}
	// Without leases the agent leaves them all alone.
	if n, err := agent.New(e.rt, e.store, agent.Options{}).RecoverLapsed(ctx); err != nil || n != 0 {
		t.Fatalf("RecoverLapsed without leases = %d, %v", n, err)
	}
}

// With leases, a step that takes a session whose log has calls without
// results (their step is gone: its process stopped, or lost its lease)
// closes them as interrupted before its own calls, so that the calls of the
// session never follow one without a result; without leases it leaves them.
func TestStepClosesCallsLeftOpen(t *testing.T) {
	for _, leases := range []bool{true, false} {
		e := newEnv(t, nil, registry.ModeBoth, agent.Options{Leases: leases})
		e.step(t, call("c1", "math_add", `{"a":1,"b":2}`))
		appendRaw(t, e.store, e.sid, [2]any{session.TypeToolCall, session.ToolCall{Turn: 1, Step: 2, CallID: "left", Name: "math_add", Arguments: `{}`}})
		e.step(t, call("c2", "math_add", `{"a":1,"b":2}`))
		got := logged(t, e.events(t))
		want := []string{"tool/call c1", "tool/result c1", "tool/call left", "tool/result left", "tool/call c2", "tool/result c2"}
		if !leases {
			want = slices.Delete(want, 3, 4)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("leases %v: logged %v, want %v", leases, got, want)
		}
		if leases {
			r := decode[session.ToolResult](t, e.events(t)[3])
			if !r.IsError || r.Error == nil || r.Error.Code != registry.CodeAborted || r.Error.Message != agent.Interrupted {
				t.Fatalf("closed as %+v", r)
			}
		}
	}
}
