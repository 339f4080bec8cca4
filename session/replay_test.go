package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/golden"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// logBuilder numbers events as a store would, one millisecond apart.
type logBuilder struct {
	t      *testing.T
	events []session.Event
	at     time.Time
}

func newLog(t *testing.T) *logBuilder {
	return &logBuilder{t: t, at: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}
}

func (l *logBuilder) add(typ string, payload any) *logBuilder {
	l.t.Helper()
	e, err := session.NewEvent(typ, payload)
	if err != nil {
		l.t.Fatal(err)
	}
	e.Seq = int64(len(l.events) + 1)
	l.at = l.at.Add(10 * time.Millisecond)
	e.Time = l.at
	l.events = append(l.events, e)
	return l
}

func (l *logBuilder) call(turn, step int, id, name, args string) *logBuilder {
	return l.add(session.TypeToolCall, session.ToolCall{Turn: turn, Step: step, CallID: id, Name: name, Arguments: args})
}

func (l *logBuilder) result(id string, content ...registry.ContentBlock) *logBuilder {
	return l.add(session.TypeToolResult, session.ToolResult{CallID: id, Result: session.Result{Content: content}})
}

func (l *logBuilder) failure(id, code, msg string) *logBuilder {
	return l.add(session.TypeToolResult, session.ToolResult{CallID: id, Result: session.Result{IsError: true,
		Content: []registry.ContentBlock{registry.Text(msg)}, Error: &session.ErrorInfo{Code: registry.Code(code), Message: msg}}})
}

func (l *logBuilder) start(parent, sub, name, args string) *logBuilder {
	return l.add(session.TypeCodeDispatchStart, session.CodeDispatchStart{RootCallID: parent, ParentCallID: parent,
		SubCallID: sub, Name: name, Arguments: json.RawMessage(args)})
}

func (l *logBuilder) settle(parent, sub, name, args string, ms int, isError bool, content ...registry.ContentBlock) *logBuilder {
	d := session.CodeDispatch{CodeDispatchStart: session.CodeDispatchStart{RootCallID: parent, ParentCallID: parent, SubCallID: sub, Name: name,
		Arguments: json.RawMessage(args)}, IsError: isError, Content: content,
		StartedAt: l.at, EndedAt: l.at.Add(time.Duration(ms) * time.Millisecond)}
	if isError {
		d.Error = &session.ErrorInfo{Code: "TOOL_FAILED", Message: content[0].Text}
	}
	return l.add(session.TypeCodeDispatch, d)
}

// sampleLog is one turn of two steps with Code Mode, approvals, a context and
// a call left open by a crash.
func sampleLog(t *testing.T) []session.Event {
	l := newLog(t)
	// Turn 1, step 1: two calls; the second is a program with SDK calls.
	l.call(1, 1, "c1", "math_add", `{"a": 2, "b": 3}`)
	l.call(1, 1, "c2", "run_code", `{"code":"const x = await tools.util_echo({value: 1})\nreturn x","description":"echo"}`)
	l.result("c1", registry.Text(`{"sum":5}`))
	l.start("c2", "c2:code:1", "util_echo", `{"value":1}`)
	l.settle("c2", "c2:code:1", "util_echo", `{"value":1}`, 3, false, registry.Text(`{"value":1}`))
	l.start("c2", "c2:code:2", "files_write", `{"path":"a.txt","content":"hi"}`)
	l.add(session.TypeApprovalAsked, session.ApprovalAsked{ApprovalID: "a1", CallID: "c2:code:2", Tool: "files_write",
		Arguments: json.RawMessage(`{"path":"a.txt","content":"hi"}`), Reason: "writes need a person"})
	l.add(session.TypeApprovalAnswered, session.ApprovalAnswered{ApprovalID: "a1", CallID: "c2:code:2",
		Decision: session.DecisionAllow, Reason: "looks fine"})
	l.settle("c2", "c2:code:2", "files_write", `{"path":"a.txt","content":"hi"}`, 12, false,
		registry.Text(`{"path":"a.txt","bytes":2}`), registry.Image("image/png", strings.Repeat("A", 400)))
	l.start("c2", "c2:code:3", "util_fail", `{"message":"boom"}`)
	l.settle("c2", "c2:code:3", "util_fail", `{"message":"boom"}`, 1, true, registry.Text("boom"))
	l.result("c2", registry.Text("{\n  \"value\": 1\n}")) // seq 12
	l.add(session.TypeUserContext, session.UserContext{Source: "files_write", Text: "a.txt changed", CallID: "c2"})
	// Step 2: c4 is logged after c3's result (an exclusive call runs alone).
	l.call(1, 2, "c3", "util_fail", `{"message":"`+strings.Repeat("long ", 50)+`"}`)
	l.failure("c3", "TOOL_FAILED", "boom")
	l.call(1, 2, "c4", "files_write", `{"path":"b.txt","content":"x"}`)
	l.add(session.TypeApprovalAsked, session.ApprovalAsked{ApprovalID: "a2", CallID: "c4", Tool: "files_write",
		Arguments: json.RawMessage(`{"path":"b.txt","content":"x"}`), Reason: "writes need a person"})
	l.add(session.TypeApprovalAnswered, session.ApprovalAnswered{ApprovalID: "a2", CallID: "c4",
		Decision: session.DecisionDeny, Reason: "not now"})
	l.failure("c4", "APPROVAL_REJECTED", "not now")
	// Turn 2: a call the process died in.
	l.call(2, 1, "c5", "util_sleep", `{"ms":60000}`)
	return l.events
}

func TestMessages(t *testing.T) {
	got := session.Messages(sampleLog(t))
	text := func(s string) []registry.ContentBlock { return []registry.ContentBlock{registry.Text(s)} }
	want := []session.Message{
		{Role: "assistant", ToolCalls: []session.MessageToolCall{
			{ID: "c1", Name: "math_add", Arguments: `{"a": 2, "b": 3}`},
			{ID: "c2", Name: "run_code", Arguments: `{"code":"const x = await tools.util_echo({value: 1})\nreturn x","description":"echo"}`},
		}},
		{Role: "tool", ToolCallID: "c1", Content: text(`{"sum":5}`)},
		{Role: "tool", ToolCallID: "c2", Content: text("{\n  \"value\": 1\n}")},
		{Role: "user", Source: "files_write", Content: text("a.txt changed")},
		{Role: "assistant", ToolCalls: []session.MessageToolCall{
			{ID: "c3", Name: "util_fail", Arguments: `{"message":"` + strings.Repeat("long ", 50) + `"}`},
			{ID: "c4", Name: "files_write", Arguments: `{"path":"b.txt","content":"x"}`},
		}},
		{Role: "tool", ToolCallID: "c3", Content: text("boom"), IsError: true},
		{Role: "tool", ToolCallID: "c4", Content: text("not now"), IsError: true},
		{Role: "assistant", ToolCalls: []session.MessageToolCall{{ID: "c5", Name: "util_sleep", Arguments: `{"ms":60000}`}}},
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", "  ")
		wj, _ := json.MarshalIndent(want, "", "  ")
		t.Fatalf("Messages:\n%s\nwant\n%s", gj, wj)
	}
}

func TestMessagesGrouping(t *testing.T) {
	tests := []struct {
		name string
		log  func(l *logBuilder)
		want []int // tool calls per assistant message, in order; -1 for a non-assistant message
	}{
		{"one step", func(l *logBuilder) {
			l.call(1, 1, "a", "x", "{}").call(1, 1, "b", "x", "{}").call(1, 1, "c", "x", "{}")
		}, []int{3}},
		{"two steps", func(l *logBuilder) { l.call(1, 1, "a", "x", "{}").call(1, 2, "b", "x", "{}") }, []int{1, 1}},
		{"same step number, next turn", func(l *logBuilder) { l.call(1, 1, "a", "x", "{}").call(2, 1, "b", "x", "{}") }, []int{1, 1}},
		{"results between calls of a step", func(l *logBuilder) {
			l.call(1, 1, "a", "x", "{}").result("a").call(1, 1, "b", "x", "{}").result("b")
		}, []int{2, -1, -1}},
		{"a context ends the step", func(l *logBuilder) {
			l.call(1, 1, "a", "x", "{}").add(session.TypeUserContext, session.UserContext{Source: "s", Text: "t"}).call(1, 1, "b", "x", "{}")
		}, []int{1, -1, 1}},
		{"nested and approval events are not messages", func(l *logBuilder) {
			l.call(1, 1, "a", "run_code", "{}").start("a", "a:code:1", "y", "{}").
				add(session.TypeApprovalAsked, session.ApprovalAsked{ApprovalID: "p", CallID: "a:code:1"}).
				add(session.TypeApprovalAnswered, session.ApprovalAnswered{ApprovalID: "p", CallID: "a:code:1", Decision: "allow"}).
				settle("a", "a:code:1", "y", "{}", 1, false).call(1, 1, "b", "x", "{}")
		}, []int{2}},
		{"unknown types and broken payloads are skipped", func(l *logBuilder) {
			l.add("turn/started", map[string]int{"turn": 1}).call(1, 1, "a", "x", "{}").
				add(session.TypeToolResult, json.RawMessage(`{"call_id":"a","content":"not blocks"}`)).
				add(session.TypeToolCall, json.RawMessage(`{"call_id":"b","turn":"one"}`))
		}, []int{1}},
	}
	for _, tt := range tests {
		l := newLog(t)
		tt.log(l)
		var got []int
		for _, m := range session.Messages(l.events) {
			if m.Role == session.RoleAssistant {
				got = append(got, len(m.ToolCalls))
			} else {
				got = append(got, -1)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := session.Messages(nil); len(got) != 0 {
		t.Errorf("Messages(nil) = %v", got)
	}
}

// The builder over any pages of a log gives Messages' messages, Settled's
// and then Rest's, and between pages holds no more than the open step's.
func TestMessageBuilderPages(t *testing.T) {
	logs := map[string][]session.Event{"sample": sampleLog(t)}
	l := newLog(t)
	for turn := 1; turn <= 3; turn++ {
		for step := 1; step <= 3; step++ {
			id := fmt.Sprintf("t%ds%d", turn, step)
			l.call(turn, step, id+"a", "x", "{}").call(turn, step, id+"b", "x", "{}").result(id + "a")
			l.call(turn, step, id+"c", "x", "{}").result(id + "b").result(id + "c") // a call after a result of its step
		}
		l.add(session.TypeUserContext, session.UserContext{Source: "s", Text: "t"})
	}
	logs["steps"] = l.events
	// held is how many messages a builder holds: Rest of a copy.
	held := func(b session.MessageBuilder) int { return len(b.Rest()) }
	for name, events := range logs {
		want := session.Messages(events)
		for size := 1; size <= len(events); size++ {
			var b session.MessageBuilder
			var got []session.Message
			most := 0
			for i := 0; i < len(events); i += size {
				b.Add(events[i:min(i+size, len(events))]...)
				got = append(got, b.Settled()...)
				most = max(most, held(b))
			}
			got = append(got, b.Rest()...)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, pages of %d: the builder gave %d messages, Messages %d", name, size, len(got), len(want))
			}
			if most > 4 { // a step of these logs is at most 4 messages
				t.Fatalf("%s, pages of %d: the builder held %d messages between pages", name, size, most)
			}
		}
	}
	var b session.MessageBuilder
	if b.Settled() != nil || b.Rest() != nil {
		t.Fatal("an empty builder has messages")
	}
}

// TestMessagesFromStore replays what a store gives back: the messages are
// the same as from the events that were appended.
func TestMessagesFromStore(t *testing.T) {
	ctx := context.Background()
	s := session.NewMemory()
	if err := s.CreateSession(ctx, session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	log := sampleLog(t)
	if _, err := s.Append(ctx, "s", log...); err != nil {
		t.Fatal(err)
	}
	stored, err := s.Events(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(session.Messages(stored), session.Messages(log)) {
		t.Fatal("messages replayed from the store differ from those of the appended events")
	}
}

func TestTimelineGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := session.WriteTimeline(&buf, sampleLog(t)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "timeline.golden", buf.Bytes())
}

func TestTimelineStructure(t *testing.T) {
	entries := session.Timeline(sampleLog(t))
	type row struct {
		kind    string
		depth   int
		id      string
		outcome string
	}
	var got []row
	for _, e := range entries {
		id := e.CallID
		if e.Kind == session.KindApproval {
			id = e.ApprovalID
		}
		got = append(got, row{e.Kind, e.Depth, id, e.Outcome})
	}
	want := []row{
		{"call", 0, "c1", "ok"},
		{"call", 0, "c2", "ok"},
		{"dispatch", 1, "c2:code:1", "ok"},
		{"dispatch", 1, "c2:code:2", "ok"},
		{"approval", 2, "a1", "allow"},
		{"dispatch", 1, "c2:code:3", "error"},
		{"context", 0, "c2", ""},
		{"call", 0, "c3", "error"},
		{"call", 0, "c4", "error"},
		{"approval", 1, "a2", "deny"},
		{"call", 0, "c5", "open"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Timeline:\n got %v\nwant %v", got, want)
	}
	if c2 := entries[1]; c2.EndSeq != 12 || c2.Duration != 100*time.Millisecond {
		t.Errorf("c2 closed by seq %d after %v, want 12 after 100ms", c2.EndSeq, c2.Duration)
	}
	if d := entries[3]; d.Duration != 12*time.Millisecond || len(d.Content) != 2 {
		t.Errorf("c2:code:2: duration %v, %d content blocks", d.Duration, len(d.Content))
	}
}

func TestTimelineOrphans(t *testing.T) {
	l := newLog(t)
	l.result("lost").
		settle("gone", "gone:code:1", "util_echo", "{}", 1, false).
		add(session.TypeApprovalAnswered, session.ApprovalAnswered{ApprovalID: "z", CallID: "gone", Decision: "timeout"}).
		start("c0", "c0:code:1", "x", "{}") // parent never logged: shown at top level
	var buf bytes.Buffer
	if err := session.WriteTimeline(&buf, l.events); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "timeline_orphans.golden", buf.Bytes())
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// longLog is n runs of two SDK calls each (six events a run), after the
// sample log, with the first run's calls still open when openFirst is set.
func longLog(t *testing.T, n int, openFirst bool) []session.Event {
	l := newLog(t)
	for i := range n {
		id := fmt.Sprintf("r%d", i)
		l.call(1, i+1, id, "run_code", `{"code":"…"}`)
		l.start(id, id+":code:1", "math_add", `{"a":1,"b":2}`)
		if i == 0 && openFirst {
			continue // the process died in it
		}
		l.settle(id, id+":code:1", "math_add", `{"a":1,"b":2}`, 1, false, registry.Text(`{"sum":3}`))
		l.start(id, id+":code:2", "math_add", `{"a":3,"b":3}`)
		l.settle(id, id+":code:2", "math_add", `{"a":3,"b":3}`, 1, false, registry.Text(`{"sum":6}`))
		l.result(id, registry.Text("6"))
	}
	return l.events
}

// A timeline written a page at a time is the one written from the whole
// log, whatever the pages, and it is written as the pages come, not at the
// end: a writer holds what a window of the log can still change.
func TestTimelineWriterPages(t *testing.T) {
	for _, open := range []bool{false, true} {
		events := longLog(t, 3000, open)
		var whole bytes.Buffer
		if err := session.WriteTimeline(&whole, events); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 7, 1000, 4096, len(events)} {
			var paged bytes.Buffer
			tw := session.NewTimelineWriter(&paged)
			early := -1 // bytes written once half the log is added
			for i := 0; i < len(events); i += size {
				if err := tw.Add(events[i:min(i+size, len(events))]); err != nil {
					t.Fatal(err)
				}
				if early < 0 && i+size >= len(events)/2 {
					early = paged.Len()
				}
			}
			heldAtEnd := whole.Len() - paged.Len()
			if err := tw.Close(); err != nil {
				t.Fatal(err)
			}
			if paged.String() != whole.String() {
				t.Fatalf("open=%v pages of %d: the paged timeline differs from the whole one", open, size)
			}
			if open {
				// An open run holds back every run after it, in order.
				if heldAtEnd != whole.Len() {
					t.Errorf("pages of %d: %d bytes written before Close, with the first run still open", size, whole.Len()-heldAtEnd)
				}
				continue
			}
			if size < len(events) && early <= 0 {
				t.Errorf("pages of %d: nothing written half way through the log", size)
			}
			// What is held at the end is the last window of the log (its
			// lines are about 60 bytes an event) and a page.
			if limit := 100 * (session.TimelineWindow + size); size < len(events) && heldAtEnd > limit {
				t.Errorf("pages of %d: %d bytes held at the end, want at most %d", size, heldAtEnd, limit)
			}
		}
	}
}

// An event about an entry the writer has written, a window of the log
// after it, starts an entry of its own at the top level.
func TestTimelineWriterLateEvent(t *testing.T) {
	l := newLog(t)
	l.call(1, 1, "c1", "run_code", `{}`).start("c1", "c1:code:1", "x", "{}").
		settle("c1", "c1:code:1", "x", "{}", 1, false).result("c1")
	for i := range session.TimelineWindow {
		l.add(session.TypeUserContext, session.UserContext{Source: "s", Text: fmt.Sprint(i)})
	}
	l.settle("c1", "c1:code:2", "x", "{}", 1, false) // late, and its start not logged
	var buf bytes.Buffer
	tw := session.NewTimelineWriter(&buf)
	last := len(l.events) - 1
	if err := errors.Join(tw.Add(l.events[:last]), tw.Add(l.events[last:]), tw.Close()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if last := lines[len(lines)-2]; !strings.HasPrefix(last, "#") || !strings.Contains(last, "sdk x c1:code:2") {
		t.Fatalf("the late settlement's line is %q, want one at the top level", last)
	}
	// From the whole log, it stays under its call.
	var whole bytes.Buffer
	if err := session.WriteTimeline(&whole, l.events); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(whole.String(), "\n  #4101 ") {
		t.Fatalf("WriteTimeline did not nest the late settlement:\n%s", whole.String()[:300])
	}
}
