package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

func TestEventMarshalFlat(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	tests := []struct {
		name string
		e    session.Event
		want string
	}{
		{"payload", session.Event{Seq: 7, Type: "tool/call", Time: at, Data: json.RawMessage(`{"turn":1,"call_id":"c1"}`)},
			`{"seq":7,"type":"tool/call","time":"2025-01-02T03:04:05.000006Z","turn":1,"call_id":"c1"}`},
		{"verbatim numbers and spacing", session.Event{Seq: 1, Type: "x", Time: at, Data: json.RawMessage(` { "n" : 123456789012345678901234567890, "z": -0 } `)},
			`{"seq":1,"type":"x","time":"2025-01-02T03:04:05.000006Z","n" : 123456789012345678901234567890, "z": -0}`},
		{"empty object", session.Event{Seq: 2, Type: "x", Time: at, Data: json.RawMessage(`{ }`)},
			`{"seq":2,"type":"x","time":"2025-01-02T03:04:05.000006Z"}`},
		{"no data", session.Event{Seq: 3, Type: "x", Time: at},
			`{"seq":3,"type":"x","time":"2025-01-02T03:04:05.000006Z"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.e) // through encoding/json, as the HTTP layer does
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var want bytes.Buffer
		json.Compact(&want, []byte(tt.want))
		if string(got) != want.String() {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, want.String())
		}
	}
}

func TestEventMarshalRejects(t *testing.T) {
	for _, data := range []string{`[1]`, `{"a":`, `"s"`, `{"seq":1}`, `{"a":1,"time":"x"}`, `{"ty\u0070e":"x"}`} {
		if b, err := (session.Event{Type: "x", Data: json.RawMessage(data)}).MarshalJSON(); err == nil {
			t.Errorf("MarshalJSON with data %s = %s, want an error", data, b)
		}
	}
}

func TestEventUnmarshal(t *testing.T) {
	in := `{"type":"tool/result", "call_id":"c1", "seq":12,"content":[{"type":"text","text":"hi"}],
		"time":"2025-01-02T03:04:05.5+02:00", "big": 123456789012345678901234567890}`
	var e session.Event
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	if e.Seq != 12 || e.Type != "tool/result" || !e.Time.Equal(time.Date(2025, 1, 2, 1, 4, 5, 5e8, time.UTC)) {
		t.Fatalf("envelope = %d %q %v", e.Seq, e.Type, e.Time)
	}
	wantData := `{"call_id":"c1","content":[{"type":"text","text":"hi"}],"big":123456789012345678901234567890}`
	if string(e.Data) != wantData {
		t.Fatalf("data = %s, want %s", e.Data, wantData)
	}
	var r session.ToolResult
	if err := e.Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.CallID != "c1" || len(r.Content) != 1 || r.Content[0] != registry.Text("hi") {
		t.Fatalf("decoded %+v", r)
	}

	for _, bad := range []string{`[]`, `{"seq":1.5}`, `{"seq":"1"}`, `{"time":"yesterday"}`, `{"type":3}`,
		`{"seq":1,"seq":2}`, `{"seq":1,"s\u0065q":2}`, `{`, `nul`} {
		var e session.Event
		if err := json.Unmarshal([]byte(bad), &e); err == nil {
			t.Errorf("Unmarshal(%s) succeeded: %+v", bad, e)
		}
	}
}

func TestNewEvent(t *testing.T) {
	e, err := session.NewEvent(session.TypeToolCall, session.ToolCall{Turn: 1, Step: 2, CallID: "c", Name: "n", Arguments: `{"a":1}`})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"turn":1,"step":2,"call_id":"c","name":"n","arguments":"{\"a\":1}"}`
	if e.Type != session.TypeToolCall || string(e.Data) != want {
		t.Fatalf("NewEvent = %q %s, want %s", e.Type, e.Data, want)
	}
	raw := json.RawMessage(`{"z": -0,  "n":1e400}`)
	if e, err := session.NewEvent("x", raw); err != nil || string(e.Data) != string(raw) {
		t.Fatalf("NewEvent(raw) = %s, %v: want it verbatim", e.Data, err)
	}
	for _, tt := range []struct {
		typ     string
		payload any
	}{
		{"", struct{}{}},
		{"a b", struct{}{}},
		{"x", []int{1}},
		{"x", map[string]int{"seq": 1}},
		{"x", json.RawMessage(`{"a"`)},
		{"x", func() {}},
		{strings.Repeat("t", 65), struct{}{}},
		// Structs whose members would be the envelope's, however they get there.
		{"x", struct {
			Kind string `json:"type"`
		}{"k"}},
		{"x", &struct {
			N int `json:"seq"`
		}{1}},
		{"x", struct {
			A int
			envelopeMember
		}{}},
		{"x", struct{ *envelopeMember }{&envelopeMember{}}},
		{"x", selfMarshaled{}},
		{"x", (*session.ToolCall)(nil)},
		{"x", struct {
			A int
			selfMarshaled
		}{}},
	} {
		if _, err := session.NewEvent(tt.typ, tt.payload); err == nil {
			t.Errorf("NewEvent(%q, %T) succeeded", tt.typ, tt.payload)
		}
	}
}

// envelopeMember is embedded by payloads that must be refused.
type envelopeMember struct {
	When string `json:"time"`
}

// selfMarshaled marshals to an object with an envelope member.
type selfMarshaled struct{}

func (selfMarshaled) MarshalJSON() ([]byte, error) { return []byte(`{"seq":1}`), nil }

func TestPayloadJSONNames(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		payload any
		want    string
	}{
		{session.ToolResult{CallID: "c", Result: session.Result{Content: []registry.ContentBlock{registry.Text("t")}, IsError: true,
			Error: &session.ErrorInfo{Code: "ABORTED", Message: "m"}, Meta: json.RawMessage(`{"k":1}`)}},
			`{"call_id":"c","content":[{"type":"text","text":"t"}],"is_error":true,"error":{"code":"ABORTED","message":"m"},"meta":{"k":1}}`},
		{session.CodeDispatch{CodeDispatchStart: session.CodeDispatchStart{RootCallID: "r", ParentCallID: "p", SubCallID: "s", Number: 1, Name: "n", Arguments: json.RawMessage(`{}`)},
			Content: []registry.ContentBlock{}, StartedAt: at, EndedAt: at},
			`{"root_call_id":"r","parent_call_id":"p","sub_call_id":"s","number":1,"name":"n","arguments":{},"is_error":false,"content":[],"started_at":"2025-01-01T00:00:00Z","ended_at":"2025-01-01T00:00:00Z"}`},
		{session.CodeDispatchStart{RootCallID: "r", ParentCallID: "p", SubCallID: "s", Name: "n", Arguments: json.RawMessage(`{"a":1}`)},
			`{"root_call_id":"r","parent_call_id":"p","sub_call_id":"s","name":"n","arguments":{"a":1}}`},
		{session.UserContext{Source: "src", Text: "t", CallID: "c"}, `{"source":"src","text":"t","call_id":"c"}`},
		{session.ApprovalAsked{ApprovalID: "a", CallID: "c", Tool: "files_write", Arguments: json.RawMessage(`{}`), Reason: "r"},
			`{"approval_id":"a","call_id":"c","tool":"files_write","arguments":{},"reason":"r"}`},
		{session.ApprovalAnswered{ApprovalID: "a", CallID: "c", Decision: session.DecisionTimeout},
			`{"approval_id":"a","call_id":"c","decision":"timeout"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.payload)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%T:\n got %s\nwant %s", tt.payload, got, tt.want)
		}
	}
}

// FuzzEventJSON: unmarshalling arbitrary bytes never panics; whatever
// unmarshals marshals again, and reading that back gives the same event.
func FuzzEventJSON(f *testing.F) {
	for _, s := range []string{
		`{"seq":1,"type":"tool/call","time":"2025-01-02T03:04:05Z","turn":1,"call_id":"c","arguments":"{\"n\": 1e999}"}`,
		`{"seq":2,"data":{"nested":[1,{"a":"}"}]},"z":-0,"n":123456789012345678901234567890}`,
		`{"s\u0065q":3,"type":"x\"y","time":null}`,
		`{"seq":1,"seq":2}`,
		`{ }`, `[]`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `{"time":"2025-01-02T03:04:05.123+05:30","k":[[[]]]}`,
		`{"a" : 1 , "b" : [ 1 , 2 ] }`, `{"type":"tool/result","content":[{"type":"image","data":"AAAA"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var e1 session.Event
		if json.Unmarshal(in, &e1) != nil {
			return
		}
		out, err := e1.MarshalJSON()
		if err != nil {
			t.Fatalf("unmarshalled %q into %+v, which does not marshal: %v", in, e1, err)
		}
		if !json.Valid(out) {
			t.Fatalf("marshalled invalid JSON %q", out)
		}
		var e2 session.Event
		if err := json.Unmarshal(out, &e2); err != nil {
			t.Fatalf("re-unmarshal %q: %v", out, err)
		}
		if e1.Seq != e2.Seq || e1.Type != e2.Type || !e1.Time.Equal(e2.Time) || !bytes.Equal(e1.Data, e2.Data) {
			t.Fatalf("round trip changed the event:\n%+v\n%+v", e1, e2)
		}
	})
}

func TestPayloadDecodesEveryType(t *testing.T) {
	tests := []struct {
		typ  string
		data string
		want any
	}{
		{session.TypeToolCall, `{"turn":1,"step":2,"call_id":"c","name":"n","arguments":"{}"}`, &session.ToolCall{Turn: 1, Step: 2, CallID: "c", Name: "n", Arguments: "{}"}},
		{session.TypeToolResult, `{"call_id":"c","content":[],"is_error":true}`, &session.ToolResult{CallID: "c", Result: session.Result{Content: []registry.ContentBlock{}, IsError: true}}},
		{session.TypeCodeDispatchStart, `{"sub_call_id":"c:code:3","number":3,"name":"n","arguments":{}}`, &session.CodeDispatchStart{SubCallID: "c:code:3", Number: 3, Name: "n", Arguments: json.RawMessage(`{}`)}},
		{session.TypeCodeDispatch, `{"sub_call_id":"c:code:1","number":1,"is_error":false,"content":[]}`, &session.CodeDispatch{CodeDispatchStart: session.CodeDispatchStart{SubCallID: "c:code:1", Number: 1}, Content: []registry.ContentBlock{}}},
		{session.TypeUserContext, `{"source":"s","text":"t","call_id":"c"}`, &session.UserContext{Source: "s", Text: "t", CallID: "c"}},
		{session.TypeApprovalAsked, `{"approval_id":"a","call_id":"c","tool":"t","arguments":{},"reason":"r"}`, &session.ApprovalAsked{ApprovalID: "a", CallID: "c", Tool: "t", Arguments: json.RawMessage(`{}`), Reason: "r"}},
		{session.TypeApprovalAnswered, `{"approval_id":"a","call_id":"c","decision":"allow"}`, &session.ApprovalAnswered{ApprovalID: "a", CallID: "c", Decision: "allow"}},
	}
	for _, tt := range tests {
		got := session.Event{Type: tt.typ, Data: json.RawMessage(tt.data)}.Payload()
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Payload() = %#v, want %#v", tt.typ, got, tt.want)
		}
	}
	// A newer writer's type, and data that does not fit its type, decode to nil.
	if p := (session.Event{Type: "tool/new-kind", Data: json.RawMessage(`{}`)}).Payload(); p != nil {
		t.Errorf("unknown type: %#v", p)
	}
	bad := session.Event{Type: session.TypeToolCall, Data: json.RawMessage(`{"turn":"one"}`)}
	if p := bad.Payload(); p != nil {
		t.Errorf("malformed tool/call: %#v", p)
	}
	if _, err := bad.DecodePayload(); err == nil {
		t.Error("DecodePayload of a malformed tool/call did not fail")
	}
}

func TestResultOfIsTheWireForm(t *testing.T) {
	reg := registry.New()
	_, err := reg.Register(registry.Global, registry.MustDefine(registry.Definition{
		Name:   "meta",
		Output: &schema.Node{Type: "json"},
		Behavior: registry.Behavior{
			Execute:          func(context.Context, registry.Exec, frozen.Value) (any, error) { return 1, nil },
			Render:           func(_, _ frozen.Value) []registry.ContentBlock { return nil },
			PresentationMeta: func(_, _ frozen.Value) (any, error) { return map[string]any{"k": 1}, nil },
		},
	}))
	if err != nil {
		t.Fatal(err)
	}
	res := runtime.New(reg, runtime.Options{}).Execute(context.Background(), runtime.Request{CallID: "c", Name: "meta"})
	got, err := json.Marshal(session.ToolResultOf("c", res))
	if err != nil {
		t.Fatal(err)
	}
	// Content and contexts are never null; meta is carried.
	if want := `{"call_id":"c","content":[],"is_error":false,"meta":{"k":1}}`; string(got) != want {
		t.Errorf("ToolResultOf = %s, want %s", got, want)
	}
	w := session.ResultOf(runtime.NotStarted("c", "x", "never ran"))
	if !w.IsError || w.Error.Code != registry.CodeAbortedBeforeDispatch || len(w.Content) != 1 || w.Contexts == nil {
		t.Errorf("ResultOf(NotStarted) = %+v", w)
	}
}
