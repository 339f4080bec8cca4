package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/session"
)

// recorder is an EventSink that keeps every event in order, with a clock
// reading per event.
type recorder struct {
	mu     sync.Mutex
	events []string // "start name id" / "end name id error?"
	starts []session.CodeDispatchStart
	ends   []session.CodeDispatch
}

func (r *recorder) DispatchStarted(_ context.Context, ev session.CodeDispatchStart) func(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "start "+ev.Name+" "+ev.SubCallID)
	r.starts = append(r.starts, ev)
	return nil
}

func (r *recorder) DispatchSettled(_ context.Context, ev session.CodeDispatch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := "end " + ev.Name + " " + ev.SubCallID
	if ev.IsError {
		s += " error"
	}
	r.events = append(r.events, s)
	r.ends = append(r.ends, ev)
}

func (r *recorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

type env struct {
	t    *testing.T
	reg  *registry.Registry
	rt   *runtime.Runtime
	sink *recorder
}

func newEnv(t *testing.T, opts bridge.Options) *env {
	t.Helper()
	reg, rt := newRuntime(t, opts)
	return &env{t: t, reg: reg, rt: rt, sink: &recorder{}}
}

// newRuntime returns a registry with the code-mode scope "s" and a runtime
// on it with the bridge installed with opts.
func newRuntime(t testing.TB, opts bridge.Options) (*registry.Registry, *runtime.Runtime) {
	t.Helper()
	reg := registry.New()
	if err := reg.CreateScope("s", registry.Global, registry.ModeCode); err != nil {
		t.Fatal(err)
	}
	rt := runtime.New(reg, runtime.Options{})
	bridge.Install(rt, opts)
	return reg, rt
}

// tool registers a tool taking any arguments and returning what body returns.
func (e *env) tool(name string, safe bool, body registry.ExecuteFunc) func() {
	e.t.Helper()
	b := registry.Behavior{Execute: body}
	if safe {
		b.IsConcurrencySafe = func(frozen.Value) bool { return true }
	}
	t, err := registry.Define(registry.Definition{Name: name, Output: &schema.Node{Type: "json"}, Behavior: b})
	if err != nil {
		e.t.Fatal(err)
	}
	un, err := e.reg.Register("s", t)
	if err != nil {
		e.t.Fatal(err)
	}
	return un
}

func (e *env) run(ctx context.Context, code string) *runtime.Result {
	e.t.Helper()
	args, _ := json.Marshal(map[string]string{"code": code, "description": "test program"})
	return e.rt.Execute(ctx, runtime.Request{CallID: "call_1", Name: registry.RunCode, Arguments: string(args), Scope: "s", Run: runtime.RunOptions{Events: e.sink}})
}

func value(t *testing.T, r *runtime.Result) (logs []string, result string) {
	t.Helper()
	if r.IsError() {
		t.Fatalf("run failed: %+v %s", r.Error(), text(r))
	}
	var v struct {
		Logs   []string
		Result json.RawMessage
	}
	if err := r.Value().Unmarshal(&v); err != nil {
		t.Fatal(err)
	}
	return v.Logs, string(v.Result)
}

func text(r *runtime.Result) string {
	var b strings.Builder
	for _, c := range r.Content() {
		b.WriteString(c.Text)
	}
	return b.String()
}

func echo(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) { return args, nil }

func TestRunReturnsValueAndLogs(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("add", true, func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
		var in struct{ A, B float64 }
		_ = args.Unmarshal(&in)
		return map[string]any{"sum": in.A + in.B}, nil
	})
	r := e.run(context.Background(), `
		const a = await tools.add({a: 2, b: 3})
		console.log("sum is", a.sum)
		return {sum: a.sum}`)
	logs, result := value(t, r)
	if strings.Join(logs, "|") != "sum is 5" || result != `{"sum":5}` {
		t.Fatalf("logs %q result %s", logs, result)
	}
	if got := text(r); got != "sum is 5\n\n{\n  \"sum\": 5\n}" {
		t.Fatalf("content %q", got)
	}
	if log := e.sink.log(); strings.Join(log, "|") != "start add call_1:code:1|end add call_1:code:1" {
		t.Fatalf("events %v", log)
	}
}

func TestRendering(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	for code, want := range map[string]string{
		`return "plain text"`:           "plain text",
		`return [1, {a: null}]`:         "[\n  1,\n  {\n    \"a\": null\n  }\n]",
		``:                              bridge.NoOutput + "\n" + bridge.NoOutputHint,
		`console.log("only a log")`:     "only a log",
		`return null`:                   "null",
		`const x: number = 1; return x`: "1",
	} {
		if got := text(e.run(context.Background(), code)); got != want {
			t.Errorf("%q rendered %q, want %q", code, got, want)
		}
	}
}

func TestFailuresAreStructured(t *testing.T) {
	e := newEnv(t, bridge.Options{Limits: sandbox.Options{Timeout: 300 * time.Millisecond}})
	cases := []struct{ code, kind, msg string }{
		{`console.log("before"); throw new Error("boom")`, "runtime", "boom"},
		{`return (`, "syntax", ""},
		{`while (true) {}`, "timeout", ""},
	}
	for _, tc := range cases {
		r := e.run(context.Background(), tc.code)
		info := r.Error()
		if info == nil || info.Code != registry.CodeCodeRunFailed || info.Kind != tc.kind || !strings.Contains(info.Message, tc.msg) {
			t.Fatalf("%q: %+v", tc.code, info)
		}
		if !r.Value().IsZero() {
			t.Fatal("a failed run has a value")
		}
	}
	r := e.run(context.Background(), `console.log("kept"); throw new Error("x")`)
	if !strings.Contains(text(r), "kept") {
		t.Fatalf("captured logs missing from failure content: %q", text(r))
	}
	// The description is optional: missing or blank, the run works.
	for _, args := range []string{`{"code":"return 1","description":"   "}`, `{"code":"return 1"}`} {
		if r := e.rt.Execute(context.Background(), runtime.Request{Name: registry.RunCode, Arguments: args, Scope: "s"}); r.IsError() {
			t.Fatalf("%s: %v", args, r.Error())
		}
	}
}

func TestDescribeRun(t *testing.T) {
	for _, tc := range []struct{ code, desc, want string }{
		{"return 1", "adds things", "adds things"},
		{"// Sum the invoices\nconst a = 1", " ", "Sum the invoices"},
		{"\n\n  const total = await tools.math_add({a: 1, b: 2})\nreturn total", "", "const total = await tools.math_add({a: 1, b: 2})"},
		{"```js\n/* list files */\n```", "", "list files"},
		{strings.Repeat("x", 200), "", strings.Repeat("x", 79) + "…"},
		{"   ", "", "an empty program"},
	} {
		if got := bridge.DescribeRun(tc.code, tc.desc); got != tc.want {
			t.Errorf("DescribeRun(%q, %q) = %q, want %q", tc.code, tc.desc, got, tc.want)
		}
	}
	// run_code's call card carries the derived description.
	tool := newEnv(t, bridge.Options{}).reg.CodeTransport()
	card, _ := json.Marshal(tool.PresentCall(frozen.MustParse(`{"code":"// fetch the weather\nreturn 1"}`)))
	if string(card) != `{"description":"fetch the weather"}` {
		t.Fatalf("call card %s", card)
	}
}

func TestBindingsSeeOnlyFinalValue(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("v", true, func(context.Context, registry.Exec, frozen.Value) (any, error) { return map[string]any{"x": 1}, nil })
	e.rt.AddPostPolicy(registry.Global, func(_ context.Context, c runtime.Call, _ runtime.PostView) (runtime.PostDecision, error) {
		if c.Name == "v" {
			return runtime.ReplaceValue(map[string]any{"x": 2}), nil
		}
		return runtime.PostDecision{}, nil
	})
	var parents []runtime.Token
	var outer runtime.Token
	e.rt.AddObserver(func(c runtime.Call, _ *runtime.Result) {
		if c.Name == "v" {
			parents = append(parents, c.Parent)
		} else {
			outer = c.Token
		}
	})
	_, result := value(t, e.run(context.Background(), `return await tools.v({})`))
	if result != `{"x":2}` {
		t.Fatalf("program saw %s", result)
	}
	if len(parents) != 1 || parents[0] != outer || parents[0].IsZero() {
		t.Fatal("a nested call's parent is not the run_code token")
	}
	if _, err := json.Marshal(parents[0]); err == nil {
		t.Fatal("the parent token serialized")
	}
}

func TestFailuresReachTheProgram(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("fails", false, func(context.Context, registry.Exec, frozen.Value) (any, error) {
		return nil, errors.New("disk on fire")
	})
	e.tool("denied", false, echo)
	e.tool("panicky", false, echo)
	var postRan atomic.Int32
	e.rt.AddPrePolicy(registry.Global, func(_ context.Context, c runtime.Call) (runtime.Decision, error) {
		switch c.Name {
		case "denied":
			return runtime.Deny("not allowed here"), nil
		case "panicky":
			panic("policy bug")
		}
		return runtime.Allow(), nil
	})
	e.rt.AddPostPolicy(registry.Global, func(_ context.Context, c runtime.Call, _ runtime.PostView) (runtime.PostDecision, error) {
		if c.Name == "panicky" {
			postRan.Add(1)
		}
		return runtime.PostDecision{}, nil
	})
	_, result := value(t, e.run(context.Background(), `
		const out = []
		for (const name of ["fails", "denied", "panicky"]) {
			try { await tools[name]({}) } catch (e) { out.push([e.name, e.toolName, e.message, e instanceof ToolCallError]) }
		}
		return out`))
	want := `[["ToolCallError","fails","disk on fire",true],["ToolCallError","denied","not allowed here",true],["ToolCallError","panicky","pre-policy failed: pre-policy panicked: policy bug",true]]`
	if result != want {
		t.Fatalf("got  %s\nwant %s", result, want)
	}
	if postRan.Load() != 0 {
		t.Fatal("post-policy ran for a call whose pre-policy panicked")
	}
}

func TestBadArgumentsDispatchNothing(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	var dispatched atomic.Int32
	e.tool("echo", true, func(_ context.Context, _ registry.Exec, a frozen.Value) (any, error) {
		dispatched.Add(1)
		return a, nil
	})
	for _, arg := range []string{
		`{f() {}}`, `{s: Symbol("x")}`, `{n: 10n}`, `(() => { const o = {}; o.self = o; return o })()`,
		`{get bad() { throw new Error("getter") }}`, `{m: new Map()}`, `{set: new Set()}`, `{n: NaN}`, `{r: /x/}`,
		`{u8: new Uint8Array(1)}`, `new (class C {})()`,
	} {
		r := e.run(context.Background(), `try { await tools.echo(`+arg+`); return "dispatched" } catch (e) { return e.name + ": " + e.message }`)
		_, result := value(t, r)
		if !strings.HasPrefix(result, `"ToolCallError: `) {
			t.Errorf("%s: %s", arg, result)
		}
	}
	if dispatched.Load() != 0 || len(e.sink.log()) != 0 {
		t.Fatalf("bad arguments dispatched %d calls, logged %v", dispatched.Load(), e.sink.log())
	}
}

func TestArgumentSnapshotsAreIndependentAndDeep(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("echo", true, echo)
	_, result := value(t, e.run(context.Background(), `
		const o = {n: 1}
		const p1 = tools.echo(o)
		o.n = 2
		const p2 = tools.echo(o)
		const [a, b] = await Promise.all([p1, p2])
		let deep = 0
		for (let i = 0; i < 3000; i++) deep = [deep]
		const d = await tools.echo({deep})
		let depth = 0, x = d.deep
		while (Array.isArray(x)) { depth++; x = x[0] }
		return [a.n, b.n, depth]`))
	if result != `[1,2,3000]` {
		t.Fatalf("got %s", result)
	}
	if e.sink.starts[2].Arguments == nil || !strings.HasPrefix(string(e.sink.starts[2].Arguments), `{"deep":[[[[`) {
		t.Fatal("deep arguments were not logged intact")
	}
}

func TestSubCallIDsAndEventContent(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("echo", false, echo)
	value(t, e.run(context.Background(), `await tools.echo({a: 1}); await tools.echo({a: 2}); return 0`))
	if len(e.sink.ends) != 2 {
		t.Fatal(e.sink.log())
	}
	for i, ev := range e.sink.ends {
		wantID := fmt.Sprintf("call_1:code:%d", i+1)
		if ev.SubCallID != wantID || ev.Number != i+1 || ev.RootCallID != "call_1" || ev.ParentCallID != "call_1" || ev.IsError {
			t.Errorf("event %d: %+v", i, ev.CodeDispatchStart)
		}
		if ev.EndedAt.Before(ev.StartedAt) || len(ev.Content) == 0 {
			t.Errorf("event %d times %v %v content %v", i, ev.StartedAt, ev.EndedAt, ev.Content)
		}
	}
}

// gate lets a test hold tool bodies and release them in any order.
type gate struct {
	mu      sync.Mutex
	running map[string]bool
	started map[string]bool // ever ran
	maxSeen int
	release map[string]chan struct{}
}

func newGate(names ...string) *gate {
	g := &gate{running: map[string]bool{}, started: map[string]bool{}, release: map[string]chan struct{}{}}
	for _, n := range names {
		g.release[n] = make(chan struct{})
	}
	return g
}

func (g *gate) body(ctx context.Context, _ registry.Exec, a frozen.Value) (any, error) {
	var in struct{ ID string }
	_ = a.Unmarshal(&in)
	g.mu.Lock()
	g.running[in.ID] = true
	g.started[in.ID] = true
	g.maxSeen = max(g.maxSeen, len(g.running))
	ch := g.release[in.ID]
	g.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	g.mu.Lock()
	delete(g.running, in.ID)
	g.mu.Unlock()
	return map[string]any{"id": in.ID}, ctx.Err()
}

func (g *gate) waitRunning(t *testing.T, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		all := true
		for _, id := range ids {
			all = all && g.running[id]
		}
		g.mu.Unlock()
		if all {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%v never ran together", ids)
}

// Safe calls overlap, and each settles (post-policy, promise) as soon as its
// own body ends; the contexts still reach the run_code result in submission
// order.
func TestSafeCallsOverlapAndSettleOnTheirOwn(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	g := newGate("a", "b", "c")
	e.tool("safe", true, g.body)
	var mu sync.Mutex
	var post []string
	e.rt.AddPostPolicy(registry.Global, func(_ context.Context, c runtime.Call, v runtime.PostView) (runtime.PostDecision, error) {
		if c.Name == "safe" {
			mu.Lock()
			post = append(post, c.CallID)
			mu.Unlock()
			return runtime.Accept(registry.Context{Source: "post", Text: c.CallID}), nil
		}
		return runtime.PostDecision{}, nil
	})
	done := make(chan *runtime.Result)
	go func() {
		done <- e.run(context.Background(), `return await Promise.all([tools.safe({id: "a"}), tools.safe({id: "b"}), tools.safe({id: "c"})])`)
	}()
	g.waitRunning(t, "a", "b", "c") // all three overlap
	postCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(post)
	}
	close(g.release["c"]) // complete out of order: each settles at once
	waitUntil(t, func() bool { return postCount() == 1 })
	close(g.release["b"])
	waitUntil(t, func() bool { return postCount() == 2 })
	close(g.release["a"])
	r := <-done
	_, result := value(t, r)
	if result != `[{"id":"a"},{"id":"b"},{"id":"c"}]` {
		t.Fatal(result)
	}
	if strings.Join(post, ",") != "call_1:code:3,call_1:code:2,call_1:code:1" {
		t.Fatalf("post-policy order %v", post)
	}
	var ctxs []string
	for _, c := range r.Contexts() {
		ctxs = append(ctxs, c.Text)
	}
	if strings.Join(ctxs, ",") != "call_1:code:1,call_1:code:2,call_1:code:3" {
		t.Fatalf("contexts %v", ctxs)
	}
}

func TestExclusiveCallIsABarrier(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	g := newGate("s1", "s2", "x", "s3")
	e.tool("safe", true, g.body)
	e.tool("excl", false, g.body)
	done := make(chan *runtime.Result)
	go func() {
		done <- e.run(context.Background(), `return await Promise.all([
			tools.safe({id: "s1"}), tools.safe({id: "s2"}), tools.excl({id: "x"}), tools.safe({id: "s3"})])`)
	}()
	g.waitRunning(t, "s1", "s2")
	time.Sleep(20 * time.Millisecond)
	if log := e.sink.log(); len(log) != 2 {
		t.Fatalf("the exclusive call started before the safe ones drained: %v", log)
	}
	close(g.release["s1"])
	close(g.release["s2"])
	g.waitRunning(t, "x")
	time.Sleep(20 * time.Millisecond)
	for _, l := range e.sink.log() {
		if strings.Contains(l, "start safe call_1:code:4") {
			t.Fatal("a later call started while the exclusive one ran")
		}
	}
	close(g.release["x"])
	g.waitRunning(t, "s3")
	close(g.release["s3"])
	value(t, <-done)
	if g.maxSeen > 2 {
		t.Fatalf("%d calls ran at once", g.maxSeen)
	}
}

func TestMaxParallelSubCallsCapsTheWindow(t *testing.T) {
	e := newEnv(t, bridge.Options{MaxParallelSubCalls: 2})
	var running, peak atomic.Int32
	e.tool("slow", true, func(ctx context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
		running.Add(-1)
		return 1, nil
	})
	value(t, e.run(context.Background(), `return (await Promise.all([1,2,3,4,5,6].map(() => tools.slow({})))).length`))
	if peak.Load() != 2 {
		t.Fatalf("peak parallelism %d, want 2", peak.Load())
	}
}

func TestPrePolicyNeverOverlaps(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("safe", true, echo)
	var inPolicy, overlap atomic.Int32
	var order []string
	var mu sync.Mutex
	e.rt.AddPrePolicy(registry.Global, func(_ context.Context, c runtime.Call) (runtime.Decision, error) {
		if c.Name != "safe" {
			return runtime.Allow(), nil
		}
		if inPolicy.Add(1) > 1 {
			overlap.Add(1)
		}
		if strings.HasSuffix(c.CallID, ":1") {
			time.Sleep(30 * time.Millisecond) // a slow policy delays the next start
		}
		mu.Lock()
		order = append(order, c.CallID)
		mu.Unlock()
		inPolicy.Add(-1)
		return runtime.Allow(), nil
	})
	value(t, e.run(context.Background(), `return await Promise.all([tools.safe({}), tools.safe({}), tools.safe({})])`))
	if overlap.Load() != 0 || strings.Join(order, ",") != "call_1:code:1,call_1:code:2,call_1:code:3" {
		t.Fatalf("overlap %d order %v", overlap.Load(), order)
	}
}

// TestOneViewPerRun: a program's calls resolve in the view it was shown,
// whatever the registry does meanwhile: a tool unregistered mid-run still
// answers that run, one registered mid-run is not reached, and the next
// run sees the registry as it is.
func TestOneViewPerRun(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	var un func()
	e.tool("first", false, func(context.Context, registry.Exec, frozen.Value) (any, error) {
		un()
		e.tool("late", false, echo)
		return 1, nil
	})
	un = e.tool("gone", false, echo)
	_, result := value(t, e.run(context.Background(), `
		await tools.first({})
		const late = await tools.late({}).then(() => "reached", e => e.message)
		return JSON.stringify([await tools.gone({x: 1}), late])`))
	if !strings.Contains(result, `{\"x\":1}`) || !strings.Contains(result, "unknown tool") {
		t.Fatal(result)
	}
	_, result = value(t, e.run(context.Background(), `
		try { await tools.gone({}) } catch (e) { return e.message }`))
	if !strings.Contains(result, "unknown tool") {
		t.Fatalf("the next run: %s", result)
	}
}

func TestSettlementDrainsAndAbandons(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	g := newGate("held", "queued")
	e.tool("excl", false, g.body)
	r := e.run(context.Background(), `
		tools.excl({id: "held"})     // in flight when the program throws
		tools.excl({id: "queued"})   // queued behind the exclusive call: never starts
		await new Promise((resolve) => setTimeout(resolve, 20))
		throw new Error("bail out")`)
	if r.Error() == nil || r.Error().Kind != "runtime" {
		t.Fatalf("%+v", r.Error())
	}
	log := e.sink.log()
	// The in-flight call was cancelled and its settlement landed before
	// run_code returned; the queued one logged nothing.
	if strings.Join(log, "|") != "start excl call_1:code:1|end excl call_1:code:1 error" {
		t.Fatalf("events %v", log)
	}
}

func TestCancellingTheRun(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	g := newGate("a", "b")
	e.tool("excl", false, g.body)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *runtime.Result)
	go func() { done <- e.run(ctx, `await Promise.all([tools.excl({id: "a"}), tools.excl({id: "b"})])`) }()
	g.waitRunning(t, "a")
	cancel()
	r := <-done
	if r.Code() != registry.CodeCodeRunFailed || r.Error().Kind != "cancelled" {
		t.Fatalf("%+v", r.Error())
	}
	if log := e.sink.log(); strings.Join(log, "|") != "start excl call_1:code:1|end excl call_1:code:1 error" {
		t.Fatalf("events %v", log)
	}
}

func TestContextsImagesAndConclusionAreFerried(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("note", true, func(_ context.Context, exec registry.Exec, a frozen.Value) (any, error) {
		exec.DeferContext("note " + a.String())
		return 1, nil
	})
	pic, err := registry.Define(registry.Definition{Name: "pic", Output: &schema.Node{Type: "json"}, Behavior: registry.Behavior{
		Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return "img", nil },
		Render: func(frozen.Value, frozen.Value) []registry.ContentBlock {
			return []registry.ContentBlock{registry.Text("a picture"), registry.Image("image/png", "AAAA")}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.Register("s", pic); err != nil {
		t.Fatal(err)
	}
	e.tool("end", false, func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
		exec.ConcludeTurn()
		return 1, nil
	})

	r := e.run(context.Background(), `await tools.note({n: 1}); await tools.pic({}); await tools.note({n: 2}); await tools.end({}); return 1`)
	cs := r.Contexts()
	if len(cs) != 3 || cs[0].Text != `note {"n":1}` || len(cs[1].Content) != 1 || !cs[1].Content[0].IsImage() || cs[2].Text != `note {"n":2}` {
		t.Fatalf("contexts %+v", cs)
	}
	if !r.ConcludesTurn() {
		t.Fatal("conclusion not forwarded")
	}
	// Contexts survive a failing program; the conclusion does not.
	r = e.run(context.Background(), `await tools.note({n: 3}); await tools.end({}); throw new Error("x")`)
	if len(r.Contexts()) != 1 || r.ConcludesTurn() {
		t.Fatalf("failed run: contexts %v conclude %v", r.Contexts(), r.ConcludesTurn())
	}
	// A nested post-policy that removes the image stops it from being ferried.
	e.rt.AddPostPolicy(registry.Global, func(_ context.Context, c runtime.Call, _ runtime.PostView) (runtime.PostDecision, error) {
		if c.Name == "pic" {
			return runtime.ReplaceContent([]registry.ContentBlock{registry.Text("redacted")}), nil
		}
		return runtime.PostDecision{}, nil
	})
	if r = e.run(context.Background(), `await tools.pic({}); return 1`); len(r.Contexts()) != 0 {
		t.Fatalf("a removed image was ferried: %+v", r.Contexts())
	}
}

func TestNoAgentStillRuns(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("echo", true, echo)
	args := `{"code":"return (await tools.echo({a: 1})).a","description":"d"}`
	r := e.rt.Execute(context.Background(), runtime.Request{Name: registry.RunCode, Arguments: args, Scope: "s"})
	if _, result := value(t, r); result != "1" {
		t.Fatal(result)
	}
}

func TestRunCodeIsNotInTheSDK(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("echo", true, echo)
	_, result := value(t, e.run(context.Background(), `
		let code
		try { await tools.run_code({code: "return 1"}) } catch (e) { code = e.code }
		return [Object.keys(tools), "run_code" in tools, code]`))
	if result != `[["echo"],false,"UNKNOWN_TOOL"]` {
		t.Fatal(result)
	}
	v, _ := e.reg.View("s")
	for _, tool := range bridge.SDK(v).Tools() {
		if tool.Name == registry.RunCode {
			t.Fatal("run_code in the SDK")
		}
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition never held")
}

// A sub-call still in flight when the program settles is cancelled and
// drained, and the contexts it deferred are ferried onto the run_code result
// like any other sub-call's.
func TestInFlightSubCallContextsAreFerried(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	started := make(chan struct{})
	e.tool("slow", true, func(ctx context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
		exec.DeferContext("deferred while in flight")
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	r := e.run(context.Background(), `tools.slow({}); await new Promise(r => setTimeout(r, 20)); return "left it running"`)
	<-started
	if r.IsError() {
		t.Fatalf("%+v", r.Error())
	}
	cs := r.Contexts()
	if len(cs) != 1 || cs[0].Text != "deferred while in flight" {
		t.Fatalf("contexts %+v", cs)
	}
}

// noticeRecorder is a recorder that also keeps the notices it is told.
type noticeRecorder struct {
	recorder
	notices []session.ToolNotice
}

func (r *noticeRecorder) Noticed(_ context.Context, n session.ToolNotice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notices = append(r.notices, n)
}

// What a tool reports while it runs (an upstream's progress and log
// notifications) reaches the sink as tool/notice events and the run's logs,
// after the program's own lines.
func TestNoticesReachTheLogAndTheRunLogs(t *testing.T) {
	e := newEnv(t, bridge.Options{})
	e.tool("count", true, func(ctx context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
		for i := 1; i <= 2; i++ {
			registry.Notify(ctx, registry.Notice{Tool: "count", CallID: exec.CallID(), Kind: registry.NoticeProgress, Progress: float64(i), Total: 2, Message: "counting"})
		}
		registry.Notify(ctx, registry.Notice{Tool: "count", CallID: exec.CallID(), Kind: registry.NoticeLog, Level: "warning", Data: json.RawMessage(`"almost out"`)})
		return 2, nil
	})
	sink := &noticeRecorder{}
	args, _ := json.Marshal(map[string]string{"code": `console.log("mine"); return await tools.count({})`})
	r := e.rt.Execute(context.Background(), runtime.Request{CallID: "call_1", Name: registry.RunCode, Arguments: string(args), Scope: "s", Run: runtime.RunOptions{Events: sink}})
	logs, result := value(t, r)
	want := []string{"mine", "[count progress 1/2] counting", "[count progress 2/2] counting", "[count warning] almost out"}
	if result != "2" || strings.Join(logs, "|") != strings.Join(want, "|") {
		t.Fatalf("logs %q result %s", logs, result)
	}
	if len(sink.notices) != 3 || sink.notices[0].CallID != "call_1:code:1" || sink.notices[0].RootCallID != "call_1" || sink.notices[2].Level != "warning" {
		t.Fatalf("notices %+v", sink.notices)
	}
}
