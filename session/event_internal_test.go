package session

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// Every payload type of the log marshals without an envelope member, so
// NewEvent need not look for one in its output.
func TestPayloadTypesAreEnvelopeFree(t *testing.T) {
	for _, v := range []any{ToolCall{}, ToolResult{}, &ToolResult{}, CodeDispatchStart{}, CodeDispatch{}, UserContext{},
		ApprovalAsked{}, ApprovalAnswered{}, ToolNotice{}, struct{}{}} {
		if !envelopeFree(reflect.TypeOf(v)) {
			t.Errorf("%T is not envelope-free", v)
		}
	}
	for _, v := range []any{map[string]any{}, []int{}, "s", struct{ Time int }{}} {
		if envelopeFree(reflect.TypeOf(v)) {
			t.Errorf("%T is envelope-free", v)
		}
	}
}

// NewEvent marks the bytes it checked so that prepare does not check them
// again; the mark covers those bytes only, not what replaces them.
func TestNewEventMarksItsData(t *testing.T) {
	e, err := NewEvent(TypeCodeDispatchStart, CodeDispatchStart{RootCallID: "r", ParentCallID: "r", SubCallID: "r:code:1", Number: 1, Name: "t", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !e.checked.covers(e.Data) {
		t.Fatal("NewEvent's own data is not marked")
	}
	copied := e
	if !copied.checked.covers(copied.Data) {
		t.Fatal("a copy of the event lost the mark")
	}
	if spaced, _ := NewEvent("x/y", json.RawMessage(` {"a":1}`)); spaced.checked.covers(spaced.Data) {
		t.Fatal("data with space around it is marked (prepare keeps it verbatim only when it is not)")
	}
	for name, data := range map[string]json.RawMessage{
		"replaced":    json.RawMessage(`{"seq":1}`),
		"resliced":    e.Data[:len(e.Data)-1],
		"not JSON":    json.RawMessage(`{`),
		"reallocated": append(json.RawMessage(nil), e.Data...),
	} {
		bad := e
		bad.Data = data
		if bad.checked.covers(bad.Data) {
			t.Errorf("%s: the mark covers other bytes", name)
		}
		if name == "reallocated" {
			continue // the same, valid bytes elsewhere: checked again, and accepted
		}
		if _, err := prepare([]Event{bad}, time.Now()); err == nil {
			t.Errorf("%s: prepare accepted %s", name, data)
		}
	}
	if _, err := prepare([]Event{e}, time.Now()); err != nil {
		t.Fatalf("prepare refused NewEvent's event: %v", err)
	}
}
