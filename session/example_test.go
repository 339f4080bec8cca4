package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// A loop logs a call before running it and its result after; replay rebuilds
// the model-facing messages from the log alone.
func Example() {
	ctx := context.Background()
	store, err := session.Open(ctx, "memory://") // or sqlite://codemode.db, postgres://…
	if err != nil {
		panic(err)
	}
	defer store.Close()
	if err := store.CreateSession(ctx, session.Session{ID: "s1", Scope: "default"}); err != nil {
		panic(err)
	}

	call, _ := session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "math_add", Arguments: `{"a":2,"b":3}`})
	result, _ := session.NewEvent(session.TypeToolResult, session.ToolResult{CallID: "c1", Result: session.Result{Content: []registry.ContentBlock{registry.Text(`{"sum":5}`)}}})
	for _, e := range []session.Event{call, result} {
		if _, err := store.Append(ctx, "s1", e); err != nil {
			panic(err)
		}
	}

	events, _ := store.Events(ctx, "s1", 0, 0)
	for _, e := range events {
		fmt.Println(e.Seq, e.Type)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, m := range session.Messages(events) {
		enc.Encode(m)
	}
	// Output:
	// 1 tool/call
	// 2 tool/result
	// {"role":"assistant","tool_calls":[{"id":"c1","name":"math_add","arguments":"{\"a\":2,\"b\":3}"}]}
	// {"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"{\"sum\":5}"}]}
}

// Crash recovery: every call a dead process left without a result is closed
// as interrupted.
func ExampleStore_OpenCalls() {
	ctx := context.Background()
	store := session.NewMemory()
	store.CreateSession(ctx, session.Session{ID: "s1"})
	call, _ := session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c7", Name: "util_sleep", Arguments: `{"ms":100}`})
	store.Append(ctx, "s1", call)
	// … the process is killed here; at the next start:

	open, _ := store.OpenCalls(ctx)
	for _, oc := range open {
		closed, _ := session.NewEvent(session.TypeToolResult, session.ToolResult{
			CallID: oc.Call.CallID, Result: session.Result{IsError: true,
				Content: []registry.ContentBlock{registry.Text("interrupted: the process stopped")},
				Error:   &session.ErrorInfo{Code: registry.CodeAborted, Message: "the process stopped"},
			}})
		store.Append(ctx, oc.SessionID, closed)
		fmt.Println("closed", oc.SessionID, oc.Call.CallID, oc.Call.Name)
	}
	open, _ = store.OpenCalls(ctx)
	fmt.Println(len(open), "open")
	// Output:
	// closed s1 c7 util_sleep
	// 0 open
}

// A step queues its events without waiting and gates its reply on the last
// ticket; the session is created in the transaction of its first events,
// with a checkpoint of the state they leave, so that a restart resumes from
// the checkpoint and the events after it.
func ExampleStore_Submit() {
	ctx := context.Background()
	store := session.NewMemory() // or a SQLite or PostgreSQL store: the same calls
	defer store.Close()

	call, _ := session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "math_add", Arguments: `{"a":2,"b":3}`})
	result, _ := session.NewEvent(session.TypeToolResult, session.ToolResult{CallID: "c1", Result: session.Result{Content: []registry.ContentBlock{registry.Text("5")}}})
	first := store.Submit(ctx, session.Write{SessionID: "s1", Create: &session.Session{Scope: "default"}, Events: []session.Event{call}})
	last := store.Submit(ctx, session.Write{SessionID: "s1", Events: []session.Event{result},
		Checkpoint: &session.Checkpoint{State: json.RawMessage(`{"turn":1,"open_calls":[]}`)}})
	// … the tool's work could overlap the commit; the reply waits for it:
	if _, err := last.Wait(ctx); err != nil {
		panic(err)
	}
	<-first.Done() // resolved already: tickets resolve in order

	cp, _ := store.LoadCheckpoint(ctx, "s1")
	tail, _ := store.Events(ctx, "s1", cp.Seq, 0)
	fmt.Println("checkpoint at", cp.Seq, string(cp.State), "then", len(tail), "events")
	sess, _ := store.GetSession(ctx, "s1")
	fmt.Println(sess.ID, sess.Scope, sess.LastSeq)
	// Output:
	// checkpoint at 2 {"turn":1,"open_calls":[]} then 0 events
	// s1 default 2
}

// Two processes stepping one session take turns: a lease, renewed while the
// step runs, and writes fenced by it.
func ExampleStore_AcquireLease() {
	ctx := context.Background()
	store := session.NewMemory()
	defer store.Close()
	store.CreateSession(ctx, session.Session{ID: "s1"})

	lease, err := store.AcquireLease(ctx, "s1", "replica-a/7f3c", 30*time.Second)
	if err != nil {
		panic(err)
	}
	if _, err := store.AcquireLease(ctx, "s1", "replica-b/01d2", 30*time.Second); errors.Is(err, session.ErrLeased) {
		fmt.Println("replica b waits: the session is leased")
	}
	e, _ := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "a", Text: "hello"})
	if _, err := store.Submit(ctx, session.Write{SessionID: "s1", Lease: &lease, Events: []session.Event{e}}).Wait(ctx); err != nil {
		panic(err)
	}
	store.ReleaseLease(ctx, lease)
	if next, err := store.AcquireLease(ctx, "s1", "replica-b/01d2", 30*time.Second); err == nil {
		fmt.Println("replica b holds it now, token", next.Token > lease.Token)
	}
	// Output:
	// replica b waits: the session is leased
	// replica b holds it now, token true
}

// A backend's commit numbers each write of a batch after its session's last
// seq, as the writes before it in the batch leave it, and fails a write
// alone when it cannot be made; the Committer batches the writes and
// resolves their tickets. Here the "database" is a map, which only the
// committer's goroutine touches.
func ExampleCommitter() {
	last := map[string]int64{} // each session's last seq
	c := session.NewCommitter(func(batch []*session.Pending) error {
		for _, p := range batch {
			p.Base, p.Err = 0, nil
			base, exists := last[p.SessionID]
			switch {
			case p.Create != nil && exists:
				p.Err = session.ErrExists
				continue
			case p.Create == nil && !exists:
				p.Err = session.ErrNotFound
				continue
			}
			p.Base = base
			last[p.SessionID] = base + int64(len(p.Events))
		}
		return nil // one transaction, committed
	}, nil)
	defer c.Close()

	ctx := context.Background()
	e, _ := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "user", Text: "hi"})
	created := c.Submit(ctx, session.Write{SessionID: "s", Create: &session.Session{}, Events: []session.Event{e, e}})
	more := c.Submit(ctx, session.Write{SessionID: "s", Events: []session.Event{e}})
	missing := c.Submit(ctx, session.Write{SessionID: "nobody", Events: []session.Event{e}})
	for _, t := range []*session.Ticket{created, more, missing} {
		events, err := t.Wait(ctx)
		var seqs []int64
		for _, e := range events {
			seqs = append(seqs, e.Seq)
		}
		fmt.Println(seqs, err)
	}
	// Output:
	// [1 2] <nil>
	// [3] <nil>
	// [] session: not found
}
