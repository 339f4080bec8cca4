package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

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
