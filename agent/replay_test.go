package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// loopMessages is the message list a model would have seen, built from what
// the loop returned: each step's calls, its results, and the previous
// step's contexts as user messages before it.
type loopMessages struct {
	msgs    []session.Message
	pending []registry.Context
}

func (l *loopMessages) add(calls []agent.ToolCall, res agent.StepResult) {
	for _, c := range l.pending {
		l.msgs = append(l.msgs, session.Message{Role: session.RoleUser, Source: c.Source, Content: []registry.ContentBlock{registry.Text(c.Text)}})
	}
	l.pending = res.Contexts
	if len(calls) == 0 {
		return
	}
	asst := session.Message{Role: session.RoleAssistant}
	for _, c := range calls {
		asst.ToolCalls = append(asst.ToolCalls, session.MessageToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	l.msgs = append(l.msgs, asst)
	for _, r := range res.Results {
		l.msgs = append(l.msgs, session.Message{Role: session.RoleTool, ToolCallID: r.ToolCallID, Content: r.Result.Content(), IsError: r.Result.IsError()})
	}
}

// The model-facing messages rebuilt from the log alone equal those the loop
// produced, across steps with contexts, failures, a conclusion and a
// run_code call whose nested calls stay out of the messages.
func TestReplayEqualsLoop(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		e := newEnv(t, store, registry.ModeBoth, agent.Options{})
		program := `
const a = await tools.math_add({a: 2, b: 3})
const p = await tools.probe({id: "nested", contexts: ["from inside"]})
console.log("sum", a.sum)
return {sum: a.sum, probe: p.id}`
		steps := [][]agent.ToolCall{
			{call("c1", "math_add", `{"a": 1, "b": 2}`), probe("c2", probeArgs{Safe: true, Contexts: []string{"ctx one", "ctx two"}})},
			{runCode("c3", program), call("c4", "util_echo", `{"value": [1, 2, {"x": null}]}`)},
			{call("c5", "util_fail", `{"message": "boom"}`), probe("c6", probeArgs{Conclude: true, Contexts: []string{"last words"}})},
			{call("c7", "kv_set", `{"key": "k", "value": 12345678901234567890}`), call("c8", "no_such_tool", `{}`)},
			{},
		}
		var want loopMessages
		for _, calls := range steps {
			want.add(calls, e.step(t, calls...))
		}
		evs := e.events(t)
		got := session.Messages(evs)
		if g, w := mustJSON(t, got), mustJSON(t, want.msgs); g != w {
			t.Fatalf("messages from the log:\n%s\nfrom the loop:\n%s", g, w)
		}

		// The nested calls are in the log, between run_code's call and result.
		log := logged(t, evs)
		call, result := index(log, "tool/call c3"), index(log, "tool/result c3")
		var nested []string
		for i, l := range log {
			if strings.HasPrefix(l, "tool/code-dispatch") {
				if i < call || i > result {
					t.Fatalf("nested event %q outside its run_code call: %v", l, log)
				}
				nested = append(nested, l)
			}
		}
		wantNested := []string{
			"tool/code-dispatch-start c3:code:1", "tool/code-dispatch c3:code:1",
			"tool/code-dispatch-start c3:code:2", "tool/code-dispatch c3:code:2",
		}
		if strings.Join(nested, "|") != strings.Join(wantNested, "|") {
			t.Fatalf("nested events: %v", nested)
		}
		d := ofType[session.CodeDispatch](t, evs, session.TypeCodeDispatch)[0]
		if d.RootCallID != "c3" || d.ParentCallID != "c3" || d.Name != "math_add" || d.IsError ||
			string(d.Arguments) != `{"a":2,"b":3}` || d.StartedAt.IsZero() || d.EndedAt.Before(d.StartedAt) {
			t.Fatalf("dispatch event: %+v", d)
		}
		// The nested probe's context rode on run_code's result and was
		// committed with the others.
		var texts []string
		for _, c := range ofType[session.UserContext](t, evs, session.TypeUserContext) {
			texts = append(texts, c.CallID+":"+c.Text)
		}
		if got, want := strings.Join(texts, "|"), "c2:ctx one|c2:ctx two|c3:from inside|c6:last words"; got != want {
			t.Fatalf("committed contexts: %s, want %s", got, want)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The log's arguments are the model's raw string, byte for byte.
func TestStepLogsRawArguments(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	raw := "{ \"a\" : 1e0, \"b\":-0 ,\"c\":\"\\u00e9\" }"
	e.step(t, call("c1", "math_add", raw))
	c := ofType[session.ToolCall](t, e.events(t), session.TypeToolCall)[0]
	if c.Arguments != raw {
		t.Fatalf("logged arguments %q, want %q", c.Arguments, raw)
	}
}
