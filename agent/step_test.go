package agent_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

// stores runs a test against the in-memory store and a SQLite file.
func stores(t *testing.T, test func(t *testing.T, store session.Store)) {
	t.Run("memory", func(t *testing.T) { test(t, session.NewMemory()) })
	t.Run("sqlite", func(t *testing.T) {
		store, err := session.Open(context.Background(), "sqlite://"+t.TempDir()+"/x.db")
		if err != nil {
			t.Fatal(err)
		}
		test(t, store)
	})
}

// Three safe calls overlap and the last finishes first; results are still
// returned and logged in model order, and the tool/calls in model order.
func TestStepModelOrderUnderOutOfOrderCompletion(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		e := newEnv(t, store, registry.ModeBoth, agent.Options{})
		res := e.step(t,
			probe("c1", probeArgs{Safe: true, Wait: "c3-ended"}),
			probe("c2", probeArgs{Safe: true, Wait: "c3-ended"}),
			probe("c3", probeArgs{Safe: true, Open: "c3-ended"}),
		)
		rec := e.rec.log()
		if index(rec, "end:c3") > index(rec, "end:c1") || index(rec, "end:c3") > index(rec, "end:c2") {
			t.Fatalf("c3 should have finished first: %v", rec)
		}
		for i, r := range res.Results {
			if r.Result.IsError() {
				t.Fatalf("result %d failed: %v", i, r.Result.Error())
			}
		}
		want := []string{
			"tool/call c1", "tool/call c2", "tool/call c3",
			"tool/result c1", "tool/result c2", "tool/result c3",
		}
		if got := logged(t, e.events(t)); !slices.Equal(got, want) {
			t.Fatalf("log:\n got %v\nwant %v", got, want)
		}
		for i, c := range ofType[session.ToolCall](t, e.events(t), session.TypeToolCall) {
			if c.Turn != 1 || c.Step != 1 || c.Name != "probe" {
				t.Fatalf("tool/call %d = %+v", i, c)
			}
		}
	})
}

// An exclusive call starts only after the safe calls before it finished and
// their results are logged; the calls after it wait for its result.
func TestStepExclusiveCallIsABarrier(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	e.step(t,
		probe("s1", probeArgs{Safe: true, Wait: "s2-started"}),
		probe("s2", probeArgs{Safe: true, Signal: "s2-started"}),
		probe("x", probeArgs{}),
		probe("s3", probeArgs{Safe: true, Wait: "s4-started"}),
		probe("s4", probeArgs{Safe: true, Signal: "s4-started"}),
	)
	rec := e.rec.log()
	for _, before := range []string{"end:s1", "end:s2"} {
		if index(rec, before) > index(rec, "start:x") {
			t.Fatalf("x started before %s: %v", before, rec)
		}
	}
	for _, after := range []string{"start:s3", "start:s4"} {
		if index(rec, after) < index(rec, "end:x") {
			t.Fatalf("%s started before x ended: %v", after, rec)
		}
	}
	want := []string{
		"tool/call s1", "tool/call s2", "tool/result s1", "tool/result s2",
		"tool/call x", "tool/result x",
		"tool/call s3", "tool/call s4", "tool/result s3", "tool/result s4",
	}
	if got := logged(t, e.events(t)); !slices.Equal(got, want) {
		t.Fatalf("log:\n got %v\nwant %v", got, want)
	}
}

// Contexts of a step's results are committed at the next step, FIFO: call
// order, then tool-deferred, wrapper, post-policy within a call; source and
// content are kept, and each is committed once. The next step may be run by
// another agent over the same store (nothing is kept between requests).
func TestStepContextsFIFOAcrossSteps(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	e.rt.AddAround(func(ctx context.Context, c runtime.Call, next runtime.Next) runtime.Outcome {
		out := next(ctx)
		if c.Name == "probe" {
			out.Contexts = append(out.Contexts, registry.Context{Source: "wrapper", Text: "w:" + c.CallID})
		}
		return out
	})
	e.rt.AddPostPolicy(scope, func(_ context.Context, c runtime.Call, _ runtime.PostView) (runtime.PostDecision, error) {
		if c.Name != "probe" {
			return runtime.PostDecision{}, nil
		}
		return runtime.Accept(registry.Context{Source: "post", Text: "p:" + c.CallID}), nil
	})
	first := e.step(t,
		probe("c1", probeArgs{Safe: true, Wait: "c2-ended", Contexts: []string{"c1-a", "c1-b"}}),
		probe("c2", probeArgs{Safe: true, Open: "c2-ended", Contexts: []string{"c2-a"}, Image: true}),
	)
	image := []registry.ContentBlock{registry.Image("image/png", "iVBORw0KGgo=")}
	want := []session.UserContext{
		{Source: "probe", Text: "c1-a", CallID: "c1"},
		{Source: "probe", Text: "c1-b", CallID: "c1"},
		{Source: "wrapper", Text: "w:c1", CallID: "c1"},
		{Source: "post", Text: "p:c1", CallID: "c1"},
		{Source: "probe", Text: "c2-a", CallID: "c2"},
		{Source: "probe-image", Text: "an image", Content: image, CallID: "c2"},
		{Source: "wrapper", Text: "w:c2", CallID: "c2"},
		{Source: "post", Text: "p:c2", CallID: "c2"},
	}
	if len(first.Contexts) != len(want) {
		t.Fatalf("step 1 contexts: %+v", first.Contexts)
	}
	for i, c := range first.Contexts {
		if c.Source != want[i].Source || c.Text != want[i].Text || !reflect.DeepEqual(c.Content, want[i].Content) {
			t.Fatalf("step 1 context %d = %+v, want %+v", i, c, want[i])
		}
	}
	if got := ofType[session.UserContext](t, e.events(t), session.TypeUserContext); len(got) != 0 {
		t.Fatalf("contexts committed during their own step: %+v", got)
	}

	other := agent.New(e.rt, e.store, agent.Options{})
	if _, err := other.Step(context.Background(), e.sid, []agent.ToolCall{call("c3", "math_add", `{"a":1,"b":2}`)}); err != nil {
		t.Fatal(err)
	}
	evs := e.events(t)
	if got := ofType[session.UserContext](t, evs, session.TypeUserContext); !reflect.DeepEqual(got, want) {
		t.Fatalf("committed:\n got %+v\nwant %+v", got, want)
	}
	log := logged(t, evs)
	if last, next := index(log, "tool/result c2"), index(log, "tool/call c3"); next-last != len(want)+1 {
		t.Fatalf("contexts not committed between step 1 and step 2: %v", log)
	}

	e.step(t, call("c4", "math_add", `{"a":1,"b":2}`))
	if got := ofType[session.UserContext](t, e.events(t), session.TypeUserContext); len(got) != len(want) {
		t.Fatalf("contexts committed twice: %d events", len(got))
	}
}

// Turn and step numbers come from the log: a step after one whose result
// concluded the turn starts turn+1, step 1.
func TestStepTurnNumbering(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	steps := [][]agent.ToolCall{
		{probe("a", probeArgs{})},
		{probe("b1", probeArgs{Safe: true}), probe("b2", probeArgs{Safe: true, Conclude: true})},
		{probe("c", probeArgs{})},
		{probe("d", probeArgs{Conclude: true})},
		{probe("e", probeArgs{})},
	}
	for i, calls := range steps {
		res := e.step(t, calls...)
		if concl := i == 1 || i == 3; res.ConcludesTurn != concl {
			t.Fatalf("step %d: ConcludesTurn = %v", i, res.ConcludesTurn)
		}
	}
	var got [][3]any
	for _, c := range ofType[session.ToolCall](t, e.events(t), session.TypeToolCall) {
		got = append(got, [3]any{c.CallID, c.Turn, c.Step})
	}
	want := [][3]any{{"a", 1, 1}, {"b1", 1, 2}, {"b2", 1, 2}, {"c", 2, 1}, {"d", 2, 2}, {"e", 3, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("numbering:\n got %v\nwant %v", got, want)
	}
}

func TestStepRejectsBadCallsBeforeAppending(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	e.step(t, call("used", "math_add", `{"a":1,"b":2}`))
	before := len(e.events(t))
	tests := []struct {
		name  string
		calls []agent.ToolCall
	}{
		{"duplicate id", []agent.ToolCall{call("d", "math_add", `{}`), call("d", "util_echo", `{}`)}},
		{"empty id", []agent.ToolCall{call("", "math_add", `{}`)}},
		{"id used in an earlier step", []agent.ToolCall{call("new", "math_add", `{}`), call("used", "math_add", `{}`)}},
		{"arguments not UTF-8", []agent.ToolCall{call("u", "math_add", "{\"a\":\"\xff\"}")}},
		{"id over MaxCallIDBytes", []agent.ToolCall{call(strings.Repeat("i", agent.MaxCallIDBytes+1), "run_code", `{"code":"return 1"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.agent.Step(context.Background(), e.sid, tt.calls)
			if !errors.Is(err, agent.ErrInvalidCalls) {
				t.Fatalf("err = %v, want ErrInvalidCalls", err)
			}
			if n := len(e.events(t)); n != before {
				t.Fatalf("%d events appended", n-before)
			}
		})
	}
	if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call(strings.Repeat("i", agent.MaxCallIDBytes), "math_add", `{"a":1,"b":2}`)}); err != nil {
		t.Fatalf("an id of MaxCallIDBytes: %v", err)
	}
	if _, err := e.agent.Step(context.Background(), "nope", []agent.ToolCall{call("x", "math_add", `{}`)}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("unknown session: err = %v", err)
	}
}

// Cancelling the caller mid-step cancels the call in flight and gives the
// calls that never started a synthetic tool/call + tool/result pair.
func TestStepCancelledMidStepAbortsTheRest(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res agent.StepResult
		err error
	}
	done := make(chan outcome, 1)
	calls := []agent.ToolCall{
		probe("p1", probeArgs{Safe: true, Block: true, Signal: "p1-started"}),
		probe("x", probeArgs{}),
		probe("p3", probeArgs{Safe: true}),
	}
	go func() {
		res, err := e.agent.Step(ctx, e.sid, calls)
		done <- outcome{res, err}
	}()
	// Cancel once p1's body runs: its tool/call can be durable before the
	// body starts, and a call cancelled then is aborted before dispatch.
	<-e.rec.gate("p1-started")
	cancel()
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	if c := out.res.Results[0].Result.Code(); c != registry.CodeAborted {
		t.Fatalf("in-flight call: code %s, want ABORTED", c)
	}
	for _, r := range out.res.Results[1:] {
		if r.Result.Code() != registry.CodeAbortedBeforeDispatch {
			t.Fatalf("%s: code %s, want ABORTED_BEFORE_DISPATCH", r.ToolCallID, r.Result.Code())
		}
		mustContain(t, r.Result.Error().Message, "the step was cancelled before this call started")
	}
	if rec := e.rec.log(); slices.Contains(rec, "start:x") || slices.Contains(rec, "start:p3") {
		t.Fatalf("an abandoned call ran: %v", rec)
	}
	evs := e.events(t)
	checkClosed(t, evs)
	want := []string{"tool/call p1", "tool/result p1", "tool/call x", "tool/result x", "tool/call p3", "tool/result p3"}
	if got := logged(t, evs); !slices.Equal(got, want) {
		t.Fatalf("log:\n got %v\nwant %v", got, want)
	}
	res := decode[session.ToolResult](t, evs[3])
	if !res.IsError || res.Error == nil || res.Error.Code != registry.CodeAbortedBeforeDispatch {
		t.Fatalf("synthetic result: %+v", res)
	}
	if c := decode[session.ToolCall](t, evs[2]); c.Arguments != calls[1].Arguments || c.Turn != 1 || c.Step != 1 {
		t.Fatalf("synthetic call: %+v", c)
	}
}

// failingStore fails every append of one event type.
type failingStore struct {
	session.Store
	typ string
}

func (s failingStore) Append(ctx context.Context, id string, evs ...session.Event) ([]session.Event, error) {
	for _, e := range evs {
		if e.Type == s.typ {
			return nil, errors.New("disk full")
		}
	}
	return s.Store.Append(ctx, id, evs...)
}

func (s failingStore) Submit(ctx context.Context, w session.Write) *session.Ticket {
	for _, e := range w.Events {
		if e.Type == s.typ {
			return session.FailedTicket(errors.New("disk full"))
		}
	}
	return s.Store.Submit(ctx, w)
}

// A call whose tool/call cannot be appended never runs, and the step
// reports the store failure.
func TestStepDoesNotRunUnloggedCalls(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	a := agent.New(e.rt, failingStore{e.store, session.TypeToolCall}, agent.Options{})
	res, err := a.Step(context.Background(), e.sid, []agent.ToolCall{probe("p1", probeArgs{}), probe("p2", probeArgs{Safe: true})})
	if err == nil {
		t.Fatal("no error from a failing store")
	}
	mustContain(t, err.Error(), "disk full")
	if rec := e.rec.log(); len(rec) != 0 {
		t.Fatalf("unlogged calls ran: %v", rec)
	}
	if len(res.Results) != 2 || !res.Results[0].Result.IsError() {
		t.Fatalf("results: %+v", res.Results)
	}
	if evs := e.events(t); len(evs) != 0 {
		t.Fatalf("orphan events: %v", logged(t, evs))
	}
}

// Concurrent steps of one session in one process run one after the other.
func TestStepSerializesStepsOfOneSession(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{
				probe(id+"1", probeArgs{Safe: true}), probe(id+"2", probeArgs{Safe: true}),
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	calls := ofType[session.ToolCall](t, e.events(t), session.TypeToolCall)
	steps := map[int]string{}
	for _, c := range calls {
		if prev, ok := steps[c.Step]; ok && prev != c.CallID[:1] {
			t.Fatalf("step %d mixes calls of two requests: %+v", c.Step, calls)
		}
		steps[c.Step] = c.CallID[:1]
	}
	if len(steps) != 3 {
		t.Fatalf("steps: %v", steps)
	}
	log := logged(t, e.events(t))
	for i := 0; i < len(log); i += 4 { // call, call, result, result per step
		id := log[i][len("tool/call "):][:1]
		for _, l := range log[i : i+4] {
			if l[len(l)-2:len(l)-1] != id {
				t.Fatalf("steps interleave in the log: %v", log)
			}
		}
	}
}
