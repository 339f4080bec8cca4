package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

func ptr[T any](v T) *T { return &v }

func newRT(t *testing.T) (*registry.Registry, *Runtime) {
	t.Helper()
	reg := registry.New()
	c := newChecker(t)
	t.Cleanup(c.done)
	return reg, New(reg, Options{Trace: c.trace})
}

// sumTool: {a: number, b: number} -> {sum: number}
func sumTool(t *testing.T, b registry.Behavior) *registry.Tool {
	t.Helper()
	if b.Execute == nil {
		b.Execute = func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
			var in struct{ A, B float64 }
			if err := args.Unmarshal(&in); err != nil {
				return nil, err
			}
			return map[string]any{"sum": in.A + in.B}, nil
		}
	}
	tool, err := registry.Define(registry.Definition{
		Name:        "add",
		Description: "Adds.",
		Parameters: &schema.Node{Type: "object", Required: []string{"a", "b"}, Properties: map[string]*schema.Node{
			"a": {Type: "number"}, "b": {Type: "number"},
		}},
		Output: &schema.Node{Type: "object", AdditionalProperties: ptr(false), Required: []string{"sum"},
			Properties: map[string]*schema.Node{"sum": {Type: "number"}}},
		Behavior: b,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// anyTool accepts any arguments and returns whatever the body returns.
func anyTool(t *testing.T, name string, b registry.Behavior) *registry.Tool {
	t.Helper()
	tool, err := registry.Define(registry.Definition{Name: name, Output: &schema.Node{Type: "json"}, Behavior: b})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// transportTool is a Code Mode transport (run_code) with behaviour b.
func transportTool(t *testing.T, b registry.Behavior) *registry.Tool {
	t.Helper()
	tool, err := registry.DefineCodeTransport(registry.Definition{Name: registry.RunCode, Output: &schema.Node{Type: "json"}, Behavior: b})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// registerIdleSum registers the sum tool with a body that only records, in *ran, that it ran.
func registerIdleSum(t *testing.T, reg *registry.Registry) (ran *bool) {
	ran = new(bool)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { *ran = true; return nil, nil }}))
	return ran
}

// addWrapperContext adds an around wrapper that appends the context "from wrapper".
func addWrapperContext(rt *Runtime) {
	rt.AddAround(func(ctx context.Context, _ Call, next Next) Outcome {
		out := next(ctx)
		out.Contexts = append(out.Contexts, registry.Context{Source: "wrapper", Text: "from wrapper"})
		return out
	})
}

func mustRegister(t *testing.T, reg *registry.Registry, scope string, tool *registry.Tool) func() {
	t.Helper()
	un, err := reg.Register(scope, tool)
	if err != nil {
		t.Fatal(err)
	}
	return un
}

func text(r *Result) string {
	var b strings.Builder
	for _, c := range r.Content() {
		b.WriteString(c.Text)
	}
	return b.String()
}

func wantCode(t *testing.T, r *Result, code registry.Code) {
	t.Helper()
	if r.Code() != code {
		t.Fatalf("code = %q (%s), want %q", r.Code(), text(r), code)
	}
	if (code == "") == r.IsError() {
		t.Fatalf("IsError = %v for code %q", r.IsError(), code)
	}
}

func TestSuccessPath(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	r := rt.Execute(context.Background(), Request{CallID: "c1", Name: "add", Arguments: `{"a": 2, "b": 3}`})
	wantCode(t, r, "")
	if r.Value().String() != `{"sum":5}` || r.CallID() != "c1" || r.Name() != "add" || !r.BodyStarted() {
		t.Fatalf("value %s", r.Value())
	}
	if got := text(r); got != "{\n  \"sum\": 5\n}" {
		t.Fatalf("content %q", got)
	}
}

func TestOneTokenAndFrozenArgsSharedByEveryStage(t *testing.T) {
	reg, rt := newRT(t)
	const raw = `{"n": 123456789012345678901234567890, "z": -0, "s": "é"}`
	var mu sync.Mutex
	tokens := map[string]Token{}
	args := map[string]string{}
	see := func(stage string, c Call) {
		mu.Lock()
		defer mu.Unlock()
		tokens[stage] = c.Token
		args[stage] = c.Args.String()
	}
	mustRegister(t, reg, registry.Global, anyTool(t, "t", registry.Behavior{Execute: func(_ context.Context, exec registry.Exec, a frozen.Value) (any, error) {
		e, ok := exec.(*execution)
		if !ok {
			return nil, errors.New("no token")
		}
		see("body", Call{Token: e.call.Token, Args: a})
		return a, nil
	}}))
	rt.AddPrePolicy(registry.Global, func(_ context.Context, c Call) (Decision, error) { see("pre", c); return Allow(), nil })
	rt.AddGuard(registry.Global, func(_ context.Context, c Call) string { see("guard", c); return "" })
	rt.AddAround(func(ctx context.Context, c Call, next Next) Outcome { see("around", c); return next(ctx) })
	rt.AddPostPolicy(registry.Global, func(_ context.Context, c Call, _ PostView) (PostDecision, error) {
		see("post", c)
		return PostDecision{}, nil
	})
	var observed *Result
	rt.AddObserver(func(c Call, r *Result) { see("observer", c); observed = r })

	r := rt.Execute(context.Background(), Request{CallID: "c", Name: "t", Arguments: raw})
	wantCode(t, r, "")
	want := `{"n":123456789012345678901234567890,"z":-0,"s":"é"}`
	first := tokens["pre"]
	if first.IsZero() {
		t.Fatal("no token")
	}
	for stage, tok := range tokens {
		if tok != first {
			t.Errorf("%s saw a different token", stage)
		}
		if args[stage] != want {
			t.Errorf("%s saw args %s", stage, args[stage])
		}
	}
	if r.Value().String() != want || observed != r {
		t.Fatalf("result value %s", r.Value())
	}
	if _, err := json.Marshal(first); err == nil {
		t.Fatal("a token serialized")
	}
	// Two executions never share a token.
	rt.Execute(context.Background(), Request{CallID: "d", Name: "t", Arguments: raw})
	if tokens["pre"] == first {
		t.Fatal("token reused")
	}
}

func TestArgumentsReadOnce(t *testing.T) {
	reg, rt := newRT(t)
	var finals, observed atomic.Int32
	mustRegister(t, reg, registry.Global, anyTool(t, "t", registry.Behavior{
		Execute:         func(context.Context, registry.Exec, frozen.Value) (any, error) { t.Error("body ran"); return nil, nil },
		FinalizeContent: func(frozen.Value, registry.Final) []registry.ContentBlock { finals.Add(1); return nil },
	}))
	rt.AddObserver(func(Call, *Result) { observed.Add(1) })
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, raw := range []string{`{"a":`, `nope`, `{} {}`, "\x00"} {
		r := rt.Execute(cancelled, Request{Name: "t", Arguments: raw})
		wantCode(t, r, registry.CodeInvalidArgs) // wins over the cancelled caller
	}
	if finals.Load() != 4 || observed.Load() != 4 {
		t.Fatalf("finalize %d observers %d, want 4 each", finals.Load(), observed.Load())
	}
	// Empty arguments mean {}.
	r := rt.Execute(context.Background(), Request{Name: "nope", Arguments: ""})
	wantCode(t, r, registry.CodeUnknownTool)
}

type hostileErr struct{}

func (hostileErr) Error() string { panic("no message for you") }

// chainErr has a hostile chain: Unwrap, Is and As panic.
type chainErr struct{}

func (chainErr) Error() string { return "hostile chain" }
func (chainErr) Unwrap() error { panic("unwrap") }
func (chainErr) Is(error) bool { panic("is") }
func (chainErr) As(any) bool   { panic("as") }

// loopErr wraps itself forever.
type loopErr struct{}

func (e *loopErr) Error() string { return "loops" }
func (e *loopErr) Unwrap() error { return e }

type nilPtrErr struct{ msg *string }

func (e *nilPtrErr) Error() string { return *e.msg }

func TestBodyFailuresNormalize(t *testing.T) {
	var typedNil *nilPtrErr
	cases := []struct {
		name string
		body registry.ExecuteFunc
		code registry.Code
		want string
	}{
		{"error", func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, errors.New("boom") }, registry.CodeToolFailed, "boom"},
		{"structured", func(context.Context, registry.Exec, frozen.Value) (any, error) {
			return nil, &registry.Error{Code: registry.CodeDenied, Message: "mine"}
		}, registry.CodeDenied, "mine"},
		{"wrapped structured", func(context.Context, registry.Exec, frozen.Value) (any, error) {
			return nil, errors.Join(errors.New("x"), &registry.Error{Code: registry.CodeToolTimeout, Message: "slow"})
		}, registry.CodeToolTimeout, "slow"},
		{"panic string", func(context.Context, registry.Exec, frozen.Value) (any, error) { panic("kaboom") }, registry.CodeToolFailed, "kaboom"},
		{"panic nil", func(context.Context, registry.Exec, frozen.Value) (any, error) { panic(nil) }, registry.CodeToolFailed, "panicked"},
		{"panic int", func(context.Context, registry.Exec, frozen.Value) (any, error) { panic(42) }, registry.CodeToolFailed, "42"},
		{"hostile error", func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, hostileErr{} }, registry.CodeToolFailed, "unprintable"},
		{"panic hostile error", func(context.Context, registry.Exec, frozen.Value) (any, error) { panic(hostileErr{}) }, registry.CodeToolFailed, "unprintable"},
		{"typed nil error", func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, typedNil }, registry.CodeToolFailed, "unprintable"},
		{"hostile chain", func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, chainErr{} }, registry.CodeToolFailed, "hostile chain"},
		{"cyclic chain", func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, &loopErr{} }, registry.CodeToolFailed, "loops"},
		{"non-JSON value", func(context.Context, registry.Exec, frozen.Value) (any, error) { return func() {}, nil }, registry.CodeInvalidToolOutput, "not JSON"},
		{"schema violation", func(context.Context, registry.Exec, frozen.Value) (any, error) {
			return map[string]any{"sum": "five"}, nil
		}, registry.CodeInvalidToolOutput, "output schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, rt := newRT(t)
			mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: tc.body}))
			var postSaw registry.Code
			rt.AddPostPolicy(registry.Global, func(_ context.Context, _ Call, v PostView) (PostDecision, error) {
				postSaw = v.Code
				return PostDecision{}, nil
			})
			r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
			wantCode(t, r, tc.code)
			if !strings.Contains(r.Error().Message, tc.want) || !strings.Contains(text(r), tc.want) {
				t.Fatalf("message %q / content %q, want %q", r.Error().Message, text(r), tc.want)
			}
			if !r.Value().IsZero() {
				t.Fatal("failure kept a value")
			}
			if postSaw != tc.code {
				t.Fatalf("post-policy saw %q, want the already-normalized %q", postSaw, tc.code)
			}
		})
	}
}

func TestCodeOnlyGate(t *testing.T) {
	reg, rt := newRT(t)
	reg.SetCodeTransport(transportTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, nil }}))
	if err := reg.CreateScope("agent", registry.Global, registry.ModeCode); err != nil {
		t.Fatal(err)
	}
	var bodies atomic.Int32
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
		bodies.Add(1)
		return map[string]any{"sum": 1}, nil
	}}))
	var policy atomic.Int32
	rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { policy.Add(1); return Allow(), nil })
	rt.AddGuard(registry.Global, func(context.Context, Call) string { policy.Add(1); return "" })
	approver := approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer {
		policy.Add(1)
		return ApprovalAnswer{Outcome: ApprovalAllowOnce}
	})

	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: "agent", Approver: approver})
	wantCode(t, r, registry.CodeUnknownTool)
	if !strings.Contains(r.Error().Message, "run_code") || policy.Load() != 0 || bodies.Load() != 0 {
		t.Fatalf("message %q, policy calls %d, bodies %d", r.Error().Message, policy.Load(), bodies.Load())
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	r = rt.Execute(cancelled, Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: "agent"})
	wantCode(t, r, registry.CodeAbortedBeforeDispatch)

	// An SDK sub-call carries a parent and is exempt.
	parent := Token{p: &tokenState{}}
	r = rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: "agent", Parent: parent})
	wantCode(t, r, "")
	if policy.Load() != 2 || bodies.Load() != 1 {
		t.Fatalf("sub-call: policy %d bodies %d", policy.Load(), bodies.Load())
	}
	// run_code itself is directly callable in code mode.
	r = rt.Execute(context.Background(), Request{Name: registry.RunCode, Arguments: `{}`, Scope: "agent"})
	wantCode(t, r, "")
	// ...but not from inside a program.
	r = rt.Execute(context.Background(), Request{Name: registry.RunCode, Arguments: `{}`, Scope: "agent", Parent: parent})
	wantCode(t, r, registry.CodeUnknownTool)
}

type approverFunc func(context.Context, ApprovalRequest) ApprovalAnswer

func (f approverFunc) Approve(ctx context.Context, r ApprovalRequest) ApprovalAnswer {
	return f(ctx, r)
}

func TestPrePolicy(t *testing.T) {
	cases := []struct {
		name string
		hook PrePolicy
		code registry.Code
		want string
	}{
		{"deny", func(context.Context, Call) (Decision, error) { return Deny("no way"), nil }, registry.CodeDenied, "no way"},
		{"deny default reason", func(context.Context, Call) (Decision, error) { return Deny(""), nil }, registry.CodeDenied, "denied by policy"},
		{"error", func(context.Context, Call) (Decision, error) { return Decision{}, errors.New("policy broke") }, registry.CodeInternal, "policy broke"},
		{"structured error keeps its code", func(context.Context, Call) (Decision, error) {
			return Decision{}, &registry.Error{Code: registry.CodeApprovalRejected, Message: "nope"}
		}, registry.CodeApprovalRejected, "nope"},
		{"panic", func(context.Context, Call) (Decision, error) { panic("bad hook") }, registry.CodeInternal, "bad hook"},
		{"hostile panic", func(context.Context, Call) (Decision, error) { panic(hostileErr{}) }, registry.CodeInternal, "unprintable"},
		{"hostile chain", func(context.Context, Call) (Decision, error) { return Decision{}, chainErr{} }, registry.CodeInternal, "hostile chain"},
		{"cyclic chain", func(context.Context, Call) (Decision, error) { return Decision{}, &loopErr{} }, registry.CodeInternal, "loops"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, rt := newRT(t)
			ran := false
			mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
				ran = true
				return map[string]any{"sum": 0}, nil
			}}))
			later := false
			rt.AddPrePolicy(registry.Global, tc.hook)
			rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { later = true; return Allow(), nil })
			r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
			wantCode(t, r, tc.code)
			if !strings.Contains(r.Error().Message, tc.want) || ran || later || r.BodyStarted() {
				t.Fatalf("message %q body %v later %v", r.Error().Message, ran, later)
			}
		})
	}
}

func TestAskRouting(t *testing.T) {
	cases := []struct {
		name     string
		approver Approver
		code     registry.Code
		want     string
	}{
		{"no approver fails closed", nil, registry.CodeDenied, "no one to ask"},
		{"allow once", approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer {
			return ApprovalAnswer{Outcome: ApprovalAllowOnce}
		}), "", ""},
		{"rejected with reason", approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer {
			return ApprovalAnswer{Outcome: ApprovalRejected, Reason: "not today"}
		}), registry.CodeApprovalRejected, "not today"},
		{"cancelled", approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer {
			return ApprovalAnswer{Outcome: ApprovalCancelled}
		}), registry.CodeDenied, "cancelled"},
		{"nobody answers", approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer { return ApprovalAnswer{} }), registry.CodeDenied, "nobody answered"},
		{"approver panics", approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer { panic("x") }), registry.CodeDenied, "approver failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, rt := newRT(t)
			mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
			var asked ApprovalRequest
			rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { return Ask("writes need a person"), nil })
			approver := tc.approver
			if approver != nil {
				inner := approver
				approver = approverFunc(func(ctx context.Context, r ApprovalRequest) ApprovalAnswer { asked = r; return inner.Approve(ctx, r) })
			}
			r := rt.Execute(context.Background(), Request{CallID: "c9", Name: "add", Arguments: `{"a":1,"b":2}`, Approver: approver})
			wantCode(t, r, tc.code)
			if tc.code != "" && !strings.Contains(r.Error().Message, tc.want) {
				t.Fatalf("message %q", r.Error().Message)
			}
			if approver != nil && (asked.Reason != "writes need a person" || asked.Call.CallID != "c9") {
				t.Fatalf("approver saw %+v", asked)
			}
		})
	}
	t.Run("caller cancels during approval", func(t *testing.T) {
		reg, rt := newRT(t)
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
		rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { return Ask(""), nil })
		ctx, cancel := context.WithCancel(context.Background())
		r := rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`, Approver: approverFunc(func(ctx context.Context, _ ApprovalRequest) ApprovalAnswer {
			cancel()
			<-ctx.Done()
			return ApprovalAnswer{Outcome: ApprovalAllowOnce} // too late
		})})
		wantCode(t, r, registry.CodeAbortedBeforeDispatch)
	})
}

// TestInvalidArgsFailBeforeAsk: arguments that fail the tool's schema are
// INVALID_ARGS before an ask reaches a person, so nobody approves a call that
// cannot run; an unknown tool and a guard's veto still win.
func TestInvalidArgsFailBeforeAsk(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	var policies, asks int
	rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { policies++; return Ask("writes need a person"), nil })
	approver := approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer {
		asks++
		return ApprovalAnswer{Outcome: ApprovalAllowOnce}
	})
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":"lots","b":2}`, Approver: approver})
	wantCode(t, r, registry.CodeInvalidArgs)
	if !strings.Contains(r.Error().Message, "/a") {
		t.Errorf("message %q does not name /a", r.Error().Message)
	}
	if policies != 1 || asks != 0 {
		t.Fatalf("invalid arguments: pre-policy ran %d times, asked %d times; want 1, 0", policies, asks)
	}
	wantCode(t, rt.Execute(context.Background(), Request{Name: "nope", Arguments: `{"a":"lots"}`, Approver: approver}), registry.CodeUnknownTool)
	wantCode(t, rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Approver: approver}), "")
	if asks != 1 {
		t.Fatalf("valid call: asked %d times in all, want 1", asks)
	}
	remove := rt.AddGuard(registry.Global, func(context.Context, Call) string { return "owner veto" })
	r = rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":"lots","b":2}`, Approver: approver})
	wantCode(t, r, registry.CodeDenied)
	if r.Error().Message != "owner veto" || asks != 1 {
		t.Fatalf("guarded invalid call: %+v, asks = %d", r.Error(), asks)
	}
	remove()
}

func TestGuards(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	for _, s := range []struct{ name, parent string }{{"team", registry.Global}, {"child", "team"}, {"other", registry.Global}} {
		if err := reg.CreateScope(s.name, s.parent, registry.ModeNative); err != nil {
			t.Fatal(err)
		}
	}
	rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { return Allow(), nil })
	rt.AddGuard(registry.Global, func(context.Context, Call) string { return "" }) // abstains
	remove := rt.AddGuard("team", func(context.Context, Call) string { return "owner veto" })

	for scope, want := range map[string]registry.Code{"team": registry.CodeDenied, "child": registry.CodeDenied, "other": "", registry.Global: ""} {
		r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: scope})
		wantCode(t, r, want)
		if want != "" && r.Error().Message != "owner veto" {
			t.Fatalf("%s: %q", scope, r.Error().Message)
		}
	}
	remove()
	wantCode(t, rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: "team"}), "")

	// An allow from an approver cannot beat a guard's veto.
	rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { return Ask(""), nil })
	rt.AddGuard(registry.Global, func(context.Context, Call) string { panic("guard bug") })
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Approver: approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer {
		return ApprovalAnswer{Outcome: ApprovalAllowOnce}
	})})
	wantCode(t, r, registry.CodeDenied)
	if !strings.Contains(r.Error().Message, "guard bug") {
		t.Fatal(r.Error().Message)
	}
}

func TestScopedPrePolicyGatesOnlyItsScope(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	_ = reg.CreateScope("a", registry.Global, registry.ModeNative)
	_ = reg.CreateScope("b", registry.Global, registry.ModeNative)
	rt.AddPrePolicy("a", func(context.Context, Call) (Decision, error) { return Deny("a only"), nil })
	wantCode(t, rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: "a"}), registry.CodeDenied)
	wantCode(t, rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: "b"}), "")
	wantCode(t, rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`}), "")
}

// A view's hooks are picked once, yet every hook added or removed applies
// to the calls that start afterwards in views already used.
func TestScopedHooksFollowAddAndRemove(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	_ = reg.CreateScope("a", registry.Global, registry.ModeNative)
	call := func() *Result {
		return rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`, Scope: "a"})
	}
	removeScoped := rt.AddPrePolicy("a", func(context.Context, Call) (Decision, error) { return Allow(), nil })
	wantCode(t, call(), "")
	removeGuard := rt.AddGuard("a", func(context.Context, Call) string { return "vetoed" })
	wantCode(t, call(), registry.CodeDenied)
	var observed int
	removeObserver := rt.AddObserver(func(Call, *Result) { observed++ })
	wantCode(t, call(), registry.CodeDenied)
	removeGuard()
	wantCode(t, call(), "")
	if observed != 2 {
		t.Fatalf("the observer saw %d calls, want 2", observed)
	}
	removeObserver()
	removeScoped()
	wantCode(t, call(), "")
	if observed != 2 {
		t.Fatal("a removed observer still observes")
	}
}

func TestCancellation(t *testing.T) {
	t.Run("while pre-policy waits", func(t *testing.T) {
		reg, rt := newRT(t)
		ran := registerIdleSum(t, reg)
		ctx, cancel := context.WithCancel(context.Background())
		rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { cancel(); return Allow(), nil })
		wantCode(t, rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`}), registry.CodeAbortedBeforeDispatch)
		if *ran {
			t.Fatal("dispatched")
		}
	})
	t.Run("checked again after a wrapper delegates", func(t *testing.T) {
		reg, rt := newRT(t)
		ran := registerIdleSum(t, reg)
		ctx, cancel := context.WithCancel(context.Background())
		rt.AddAround(func(ctx context.Context, _ Call, next Next) Outcome { cancel(); return next(ctx) })
		r := rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, registry.CodeAbortedBeforeDispatch)
		if *ran || r.BodyStarted() {
			t.Fatal("dispatched")
		}
	})
	t.Run("wrapper hands in a cancelled context", func(t *testing.T) {
		reg, rt := newRT(t)
		ran := registerIdleSum(t, reg)
		rt.AddAround(func(_ context.Context, _ Call, next Next) Outcome {
			dead, cancel := context.WithCancel(context.Background())
			cancel()
			return next(dead)
		})
		wantCode(t, rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`}), registry.CodeAbortedBeforeDispatch)
		if *ran {
			t.Fatal("dispatched")
		}
	})
	t.Run("late success is ABORTED and keeps deferred contexts", func(t *testing.T) {
		reg, rt := newRT(t)
		ctx, cancel := context.WithCancel(context.Background())
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
			exec.DeferContext("note")
			cancel()
			return map[string]any{"sum": 3}, nil
		}}))
		r := rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, registry.CodeAborted)
		if cs := r.Contexts(); len(cs) != 1 || cs[0].Text != "note" || cs[0].Source != "add" {
			t.Fatalf("contexts %+v", cs)
		}
	})
	t.Run("a tool failure after cancellation keeps its own outcome", func(t *testing.T) {
		reg, rt := newRT(t)
		ctx, cancel := context.WithCancel(context.Background())
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
			cancel()
			return nil, errors.New("disk full")
		}}))
		r := rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, registry.CodeToolFailed)
	})
	t.Run("a denial after cancellation keeps its own outcome", func(t *testing.T) {
		reg, rt := newRT(t)
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
		ctx, cancel := context.WithCancel(context.Background())
		rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { cancel(); return Deny("no"), nil })
		wantCode(t, rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`}), registry.CodeDenied)
	})
	t.Run("a cooperative body sees cancellation as ABORTED", func(t *testing.T) {
		reg, rt := newRT(t)
		ctx, cancel := context.WithCancel(context.Background())
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(ctx context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
			cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		}}))
		wantCode(t, rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`}), registry.CodeAborted)
	})
	t.Run("an uncooperative body is waited for", func(t *testing.T) {
		reg, rt := newRT(t)
		ctx, cancel := context.WithCancel(context.Background())
		var finished atomic.Bool
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
			cancel()
			time.Sleep(20 * time.Millisecond)
			finished.Store(true)
			return map[string]any{"sum": 1}, nil
		}}))
		r := rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, registry.CodeAborted)
		if !finished.Load() {
			t.Fatal("ABORTED returned before the body finished")
		}
	})
}

func TestAroundWrappers(t *testing.T) {
	t.Run("short circuit is validated like a body value", func(t *testing.T) {
		reg, rt := newRT(t)
		ran := registerIdleSum(t, reg)
		value := any(map[string]any{"sum": 42})
		rt.AddAround(func(context.Context, Call, Next) Outcome { return Outcome{Value: value} })
		r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, "")
		if r.Value().String() != `{"sum":42}` || *ran || r.BodyStarted() {
			t.Fatalf("value %s ran %v", r.Value(), *ran)
		}
		value = map[string]any{"total": 42} // a result shaped for another tool
		wantCode(t, rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`}), registry.CodeInvalidToolOutput)
	})
	t.Run("wrapper contexts are kept after tool contexts", func(t *testing.T) {
		reg, rt := newRT(t)
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
			exec.DeferContext("from tool")
			return map[string]any{"sum": 1}, nil
		}}))
		addWrapperContext(rt)
		rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) {
			return Accept(registry.Context{Source: "post", Text: "from post"}), nil
		})
		r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		var got []string
		for _, c := range r.Contexts() {
			got = append(got, c.Text)
		}
		if strings.Join(got, ",") != "from tool,from wrapper,from post" {
			t.Fatalf("contexts %v", got)
		}
	})
	t.Run("panicking wrapper", func(t *testing.T) {
		reg, rt := newRT(t)
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
		rt.AddAround(func(context.Context, Call, Next) Outcome { panic("wrapper bug") })
		r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, registry.CodeInternal)
		if !strings.Contains(r.Error().Message, "wrapper bug") {
			t.Fatal(r.Error().Message)
		}
	})
	t.Run("body runs under the caller's cancellation when the wrapper replaced the context", func(t *testing.T) {
		reg, rt := newRT(t)
		ctx, cancel := context.WithCancel(context.Background())
		var wrapperCtx context.Context
		sawCancel := make(chan bool, 1)
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(bctx context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
			cancel()
			select {
			case <-bctx.Done():
				sawCancel <- true
			case <-time.After(5 * time.Second):
				sawCancel <- false
			}
			return nil, bctx.Err()
		}}))
		rt.AddAround(func(_ context.Context, _ Call, next Next) Outcome {
			wrapperCtx = context.Background() // severs the caller's context
			out := next(wrapperCtx)
			if wrapperCtx.Err() != nil {
				t.Error("the wrapper's own context was changed")
			}
			return out
		})
		r := rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		if !<-sawCancel {
			t.Fatal("the body did not see the caller's cancellation")
		}
		wantCode(t, r, registry.CodeAborted)
	})
}

func TestTimeoutAndRetryWrappers(t *testing.T) {
	reg, rt := newRT(t)
	tool := anyTool(t, "slow", registry.Behavior{Timeout: 20 * time.Millisecond, Execute: func(ctx context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	mustRegister(t, reg, registry.Global, tool)
	var attempts atomic.Int32
	mustRegister(t, reg, registry.Global, anyTool(t, "flaky", registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
		if attempts.Add(1) < 3 {
			return nil, Transient(errors.New("try again"))
		}
		return "ok", nil
	}}))
	mustRegister(t, reg, registry.Global, anyTool(t, "broken", registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
		attempts.Add(1)
		return nil, errors.New("permanent")
	}}))
	rt.AddAround(Timeout(time.Minute))
	rt.AddAround(Retry(RetryOptions{Attempts: 3, Backoff: time.Millisecond}))

	r := rt.Execute(context.Background(), Request{Name: "slow"})
	wantCode(t, r, registry.CodeToolTimeout)
	if !strings.Contains(r.Error().Message, "20ms") {
		t.Fatal(r.Error().Message)
	}
	r = rt.Execute(context.Background(), Request{Name: "flaky"})
	wantCode(t, r, "")
	if attempts.Load() != 3 || text(r) != "ok" {
		t.Fatalf("attempts %d", attempts.Load())
	}
	attempts.Store(0)
	wantCode(t, rt.Execute(context.Background(), Request{Name: "broken"}), registry.CodeToolFailed)
	if attempts.Load() != 1 {
		t.Fatalf("a permanent failure was retried %d times", attempts.Load())
	}
}

func TestPresentationMetaTopLevelOnly(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, anyTool(t, "m", registry.Behavior{
		Execute:          func(context.Context, registry.Exec, frozen.Value) (any, error) { return map[string]any{"x": 1}, nil },
		PresentationMeta: func(_, v frozen.Value) (any, error) { return map[string]any{"diff": v.String()}, nil },
	}))
	mustRegister(t, reg, registry.Global, anyTool(t, "plain", registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return 1, nil }}))
	r := rt.Execute(context.Background(), Request{Name: "m"})
	if r.Meta().String() != `{"diff":"{\"x\":1}"}` {
		t.Fatalf("meta %s", r.Meta())
	}
	r = rt.Execute(context.Background(), Request{Name: "m", Parent: Token{p: &tokenState{}}})
	if !r.Meta().IsZero() {
		t.Fatalf("nested call got meta %s", r.Meta())
	}
	if r = rt.Execute(context.Background(), Request{Name: "plain"}); !r.Meta().IsZero() {
		t.Fatal("meta without a presentationMeta")
	}
}

func TestPostPolicy(t *testing.T) {
	body := func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
		exec.DeferContext("tool note")
		return map[string]any{"sum": 3}, nil
	}
	meta := func(_, v frozen.Value) (any, error) { return map[string]any{"v": v.String()}, nil }
	cases := []struct {
		name     string
		decision PostDecision
		err      error
		code     registry.Code
		value    string
		content  string
		meta     string
		contexts string
	}{
		{"accept", PostDecision{}, nil, "", `{"sum":3}`, "{\n  \"sum\": 3\n}", `{"v":"{\"sum\":3}"}`, "tool note"},
		{"content replacement keeps value and meta", ReplaceContent([]registry.ContentBlock{registry.Text("redacted")}), nil, "", `{"sum":3}`, "redacted", `{"v":"{\"sum\":3}"}`, "tool note"},
		{"value replacement re-renders content and meta", ReplaceValue(map[string]any{"sum": 7}), nil, "", `{"sum":7}`, "{\n  \"sum\": 7\n}", `{"v":"{\"sum\":7}"}`, "tool note"},
		{"invalid replacement", ReplaceValue(map[string]any{"sum": "seven"}), nil, registry.CodeInvalidToolOutput, "", "", "", "tool note"},
		{"block", Block("try smaller numbers", registry.Context{Source: "policy", Text: "blocked note"}), nil, registry.CodeDenied, "", "try smaller numbers", "", "blocked note"},
		{"error", PostDecision{}, errors.New("post broke"), registry.CodeInternal, "", "", "", "tool note"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg, rt := newRT(t)
			mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: body, PresentationMeta: meta}))
			rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) { return tc.decision, tc.err })
			r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
			wantCode(t, r, tc.code)
			if r.Value().String() != tc.value {
				t.Errorf("value %s", r.Value())
			}
			if tc.content != "" && text(r) != tc.content {
				t.Errorf("content %q", text(r))
			}
			if r.Meta().String() != tc.meta && tc.code == "" {
				t.Errorf("meta %s", r.Meta())
			}
			var cs []string
			for _, c := range r.Contexts() {
				cs = append(cs, c.Text)
			}
			if strings.Join(cs, ",") != tc.contexts {
				t.Errorf("contexts %v", cs)
			}
		})
	}
	t.Run("a failed result's value cannot be replaced", func(t *testing.T) {
		reg, rt := newRT(t)
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, errors.New("x") }}))
		rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) {
			return ReplaceValue(map[string]any{"sum": 1}), nil
		})
		r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, registry.CodeInternal)
		if !r.Value().IsZero() {
			t.Fatal("failure got a value")
		}
	})
	t.Run("tool disappears before post-policy resolves", func(t *testing.T) {
		reg, rt := newRT(t)
		un := mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
		rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) {
			un()
			return ReplaceValue(map[string]any{"sum": 1}), nil
		})
		r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, registry.CodeInternal)
		if !strings.Contains(r.Error().Message, "no longer registered") {
			t.Fatal(r.Error().Message)
		}
	})
}

func TestFinalizeContent(t *testing.T) {
	type path struct {
		name  string
		setup func(reg *registry.Registry, rt *Runtime)
		body  registry.ExecuteFunc
		code  registry.Code
	}
	okBody := func(context.Context, registry.Exec, frozen.Value) (any, error) { return map[string]any{"sum": 3}, nil }
	paths := []path{
		{"success", nil, okBody, ""},
		{"pre-policy deny", func(_ *registry.Registry, rt *Runtime) {
			rt.AddPrePolicy(registry.Global, func(context.Context, Call) (Decision, error) { return Deny("no"), nil })
		}, okBody, registry.CodeDenied},
		{"guard veto", func(_ *registry.Registry, rt *Runtime) {
			rt.AddGuard(registry.Global, func(context.Context, Call) string { return "veto" })
		}, okBody, registry.CodeDenied},
		{"around failure", func(_ *registry.Registry, rt *Runtime) {
			rt.AddAround(func(context.Context, Call, Next) Outcome { return Outcome{Err: errors.New("wrapper failed")} })
		}, okBody, registry.CodeToolFailed},
		{"body failure", nil, func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, errors.New("x") }, registry.CodeToolFailed},
		{"post failure", func(_ *registry.Registry, rt *Runtime) {
			rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) { return PostDecision{}, errors.New("p") })
		}, okBody, registry.CodeInternal},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			reg, rt := newRT(t)
			var calls atomic.Int32
			var saw registry.Final
			mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: p.body, FinalizeContent: func(_ frozen.Value, f registry.Final) []registry.ContentBlock {
				calls.Add(1)
				saw = f
				return []registry.ContentBlock{registry.Text("final")}
			}}))
			if p.setup != nil {
				p.setup(reg, rt)
			}
			r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
			wantCode(t, r, p.code)
			if calls.Load() != 1 || text(r) != "final" || saw.Code != p.code || saw.IsError != (p.code != "") {
				t.Fatalf("finalizer ran %d times, saw %+v, content %q", calls.Load(), saw, text(r))
			}
		})
	}
	t.Run("nil keeps content", func(t *testing.T) {
		reg, rt := newRT(t)
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{FinalizeContent: func(frozen.Value, registry.Final) []registry.ContentBlock { return nil }}))
		if r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`}); text(r) != "{\n  \"sum\": 3\n}" {
			t.Fatal(text(r))
		}
	})
	t.Run("panic is an error result and runs once", func(t *testing.T) {
		reg, rt := newRT(t)
		var calls atomic.Int32
		mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{FinalizeContent: func(frozen.Value, registry.Final) []registry.ContentBlock {
			calls.Add(1)
			panic("finalizer bug")
		}}))
		r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
		wantCode(t, r, registry.CodeInternal)
		if calls.Load() != 1 || !r.Value().IsZero() || !strings.Contains(text(r), "finalizer bug") {
			t.Fatalf("calls %d value %s", calls.Load(), r.Value())
		}
	})
	t.Run("captured when the call starts", func(t *testing.T) {
		reg, rt := newRT(t)
		var un func()
		first := sumTool(t, registry.Behavior{
			Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
				un() // hot reload while the call runs
				mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{FinalizeContent: func(frozen.Value, registry.Final) []registry.ContentBlock {
					return []registry.ContentBlock{registry.Text("new finalizer")}
				}}))
				return map[string]any{"sum": 3}, nil
			},
			FinalizeContent: func(frozen.Value, registry.Final) []registry.ContentBlock {
				return []registry.ContentBlock{registry.Text("old finalizer")}
			},
		})
		un = mustRegister(t, reg, registry.Global, first)
		if r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`}); text(r) != "old finalizer" {
			t.Fatal(text(r))
		}
	})
}

func TestContextsAndConclusion(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, anyTool(t, "composite", registry.Behavior{Execute: func(_ context.Context, exec registry.Exec, args frozen.Value) (any, error) {
		exec.DeferContext("deferred")
		exec.ConcludeTurn()
		if args.String() == `{"fail":true}` {
			return nil, errors.New("failed")
		}
		return "done", nil
	}}))
	r := rt.Execute(context.Background(), Request{Name: "composite"})
	if !r.ConcludesTurn() || len(r.Contexts()) != 1 {
		t.Fatalf("conclude %v contexts %v", r.ConcludesTurn(), r.Contexts())
	}
	r = rt.Execute(context.Background(), Request{Name: "composite", Arguments: `{"fail":true}`})
	wantCode(t, r, registry.CodeToolFailed)
	if len(r.Contexts()) != 1 {
		t.Fatal("a failing composite lost its deferred contexts")
	}
	rt.AddPostPolicy(registry.Global, func(context.Context, Call, PostView) (PostDecision, error) { return Block(""), nil })
	r = rt.Execute(context.Background(), Request{Name: "composite"})
	if len(r.Contexts()) != 0 || r.ConcludesTurn() {
		t.Fatal("a blocked call kept the tool's contexts or conclusion")
	}
}

func TestObservers(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	var seen []string
	rt.AddObserver(func(_ Call, r *Result) {
		c := r.Content()
		c[0].Text = "mutated" // a copy: the result must not change
		seen = append(seen, "first")
		panic("observer bug")
	})
	rt.AddObserver(func(_ Call, r *Result) { seen = append(seen, "second:"+text(r)) })
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":1,"b":2}`})
	if strings.Join(seen, "|") != "first|second:{\n  \"sum\": 3\n}" || text(r) != "{\n  \"sum\": 3\n}" {
		t.Fatalf("seen %q content %q", seen, text(r))
	}
	// Observers see failures too.
	seen = nil
	rt.Execute(context.Background(), Request{Name: "missing"})
	if len(seen) != 2 {
		t.Fatalf("observers saw %d results of an unknown tool", len(seen))
	}
}

func TestLiveResolution(t *testing.T) {
	reg, rt := newRT(t)
	un := mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	queued := Request{Name: "add", Arguments: `{"a":1,"b":2}`}
	un() // the registry changes between queueing and start
	wantCode(t, rt.Execute(context.Background(), queued), registry.CodeUnknownTool)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
		return map[string]any{"sum": 100}, nil
	}}))
	if r := rt.Execute(context.Background(), queued); r.Value().String() != `{"sum":100}` {
		t.Fatal(r.Value())
	}
}

func TestInvalidArgsListEveryViolation(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{}))
	r := rt.Execute(context.Background(), Request{Name: "add", Arguments: `{"a":"x","b":null}`})
	wantCode(t, r, registry.CodeInvalidArgs)
	msg := r.Error().Message
	if !strings.Contains(msg, "/a") || !strings.Contains(msg, "/b") || r.BodyStarted() {
		t.Fatalf("message %q", msg)
	}
}

func TestConcurrencySafe(t *testing.T) {
	reg, rt := newRT(t)
	mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{IsConcurrencySafe: func(a frozen.Value) bool { return a.String() != `{"a":0,"b":0}` }}))
	mustRegister(t, reg, registry.Global, anyTool(t, "panicky", registry.Behavior{
		Execute:           func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, nil },
		IsConcurrencySafe: func(frozen.Value) bool { panic("x") },
	}))
	mustRegister(t, reg, registry.Global, anyTool(t, "plain", registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, nil }}))
	for _, tc := range []struct {
		name, args string
		want       bool
	}{
		{"add", `{"a":1,"b":2}`, true},
		{"add", `{"a":0,"b":0}`, false},
		{"add", `{"a":"x"}`, false},
		{"add", `{`, false},
		{"panicky", `{}`, false},
		{"plain", `{}`, false},
		{"missing", `{}`, false},
	} {
		if got := rt.ConcurrencySafe(registry.Global, tc.name, tc.args); got != tc.want {
			t.Errorf("%s %s = %v", tc.name, tc.args, got)
		}
	}
	if rt.ConcurrencySafe("no-such-scope", "add", `{"a":1,"b":2}`) {
		t.Error("unknown scope is safe")
	}
}

func FuzzExecuteArguments(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":2}`, `{"a":1e999,"b":-0}`, `[]`, `"x"`, `{"a":{"a":{}}}`, ``} {
		f.Add(s)
	}
	reg := registry.New()
	rt := New(reg, Options{})
	tool, err := registry.Define(registry.Definition{
		Name: "add",
		Parameters: &schema.Node{Type: "object", Properties: map[string]*schema.Node{
			"a": {Type: "number"}, "b": {Type: "number"},
		}},
		Output:   &schema.Node{Type: "json"},
		Behavior: registry.Behavior{Execute: func(_ context.Context, _ registry.Exec, a frozen.Value) (any, error) { return a, nil }},
	})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := reg.Register(registry.Global, tool); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := rt.Execute(context.Background(), Request{Name: "add", Arguments: raw})
		if r.IsError() {
			if c := r.Code(); c != registry.CodeInvalidArgs && c != registry.CodeInvalidToolOutput {
				t.Fatalf("unexpected code %s for %q: %s", c, raw, r.Error().Message)
			}
			return
		}
		// What the body saw is what the caller sent, compacted.
		want, _ := frozen.ParseString(orDefault(raw, "{}"))
		if !r.Value().Equal(want) {
			t.Fatalf("value %s, want %s", r.Value(), want)
		}
	})
}

func TestNotStarted(t *testing.T) {
	r := NotStarted("c7", "add", "the step was cancelled")
	wantCode(t, r, registry.CodeAbortedBeforeDispatch)
	if r.CallID() != "c7" || r.Name() != "add" || text(r) != "the step was cancelled" || r.BodyStarted() || !r.Value().IsZero() {
		t.Fatalf("%+v", r)
	}
}

// A hostile error from a body that fails after the caller cancelled goes
// through the cancellation checks (errors.Is on its chain) without panicking
// or looping.
func TestHostileErrorAfterCancellation(t *testing.T) {
	for name, err := range map[string]error{"hostile chain": chainErr{}, "cyclic chain": &loopErr{}, "panicking Error": hostileErr{}} {
		t.Run(name, func(t *testing.T) {
			reg, rt := newRT(t)
			ctx, cancel := context.WithCancel(context.Background())
			mustRegister(t, reg, registry.Global, sumTool(t, registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
				cancel()
				return nil, err
			}}))
			rt.AddAround(Retry(RetryOptions{Attempts: 2})) // IsTransient walks the chain too
			r := rt.Execute(ctx, Request{Name: "add", Arguments: `{"a":1,"b":2}`})
			wantCode(t, r, registry.CodeToolFailed)
			if r.Error().Message == "" {
				t.Fatal("no message")
			}
		})
	}
}

// The body's context under Timeout: caller cancellation reaches it, and it
// is released as soon as the body returns, whether the body is the
// timeout's next or another wrapper runs in between (each attempt of a
// retry then has its own).
func TestTimeoutBodyContext(t *testing.T) {
	type env struct {
		bodies []context.Context // each attempt's context
	}
	run := func(t *testing.T, inner func(*env) []Around, cancelCaller bool) (*env, *Result) {
		reg, rt := newRT(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		ev := &env{}
		mustRegister(t, reg, registry.Global, anyTool(t, "t", registry.Behavior{Execute: func(bctx context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
			ev.bodies = append(ev.bodies, bctx)
			if cancelCaller {
				cancel(errors.New("caller gone"))
				select {
				case <-bctx.Done():
				case <-time.After(5 * time.Second):
					t.Error("the body did not see the caller's cancellation")
				}
				return nil, bctx.Err()
			}
			if bctx.Err() != nil {
				t.Errorf("the body's context was done as it ran: %v", bctx.Err())
			}
			if len(ev.bodies) < 2 {
				return nil, Transient(errors.New("again"))
			}
			return "ok", nil
		}}))
		rt.AddAround(func(ctx context.Context, _ Call, next Next) Outcome {
			out := next(ctx)
			for i, b := range ev.bodies {
				if b.Err() == nil {
					t.Errorf("attempt %d: the body's context was not released when the timeout returned", i+1)
				}
			}
			return out
		})
		rt.AddAround(Timeout(time.Minute))
		if inner != nil {
			for _, a := range inner(ev) {
				rt.AddAround(a)
			}
		}
		return ev, rt.Execute(ctx, Request{Name: "t"})
	}
	t.Run("body right under the timeout", func(t *testing.T) {
		ev, r := run(t, nil, false)
		wantCode(t, r, registry.CodeToolFailed)
		if len(ev.bodies) != 1 {
			t.Fatalf("%d attempts", len(ev.bodies))
		}
	})
	t.Run("a wrapper between the timeout and the body", func(t *testing.T) {
		released := false
		run(t, func(ev *env) []Around {
			return []Around{func(ctx context.Context, _ Call, next Next) Outcome {
				out := next(ctx)
				released = len(ev.bodies) == 1 && ev.bodies[0].Err() != nil && ctx.Err() == nil
				return out
			}}
		}, false)
		if !released {
			t.Fatal("the body's context was not released when the body returned")
		}
	})
	t.Run("a retry between the timeout and the body", func(t *testing.T) {
		ev, r := run(t, func(*env) []Around { return []Around{Retry(RetryOptions{Attempts: 2, Backoff: time.Millisecond})} }, false)
		wantCode(t, r, "")
		if len(ev.bodies) != 2 {
			t.Fatalf("%d attempts", len(ev.bodies))
		}
	})
	passThrough := func(*env) []Around {
		return []Around{func(ctx context.Context, _ Call, next Next) Outcome { return next(ctx) }}
	}
	for name, inner := range map[string]func(*env) []Around{"right under the timeout": nil, "below another wrapper": passThrough} {
		t.Run("caller cancellation, body "+name, func(t *testing.T) {
			ev, r := run(t, inner, true)
			wantCode(t, r, registry.CodeAborted)
			if len(ev.bodies) != 1 || context.Cause(ev.bodies[0]).Error() != "caller gone" {
				t.Fatalf("%d attempts, cause %v", len(ev.bodies), context.Cause(ev.bodies[0]))
			}
		})
	}
}

func TestResultImages(t *testing.T) {
	size := int64(3)
	img := registry.Image("image/png", "AAAA")
	img.Size = &size
	r := &Result{content: []registry.ContentBlock{registry.Text("a"), img, registry.Text("b"), registry.Image("image/gif", "BBBB")}}
	got := r.Images()
	if len(got) != 2 || got[0].MimeType != "image/png" || got[1].MimeType != "image/gif" {
		t.Fatalf("images %+v", got)
	}
	*got[0].Size = 9 // a copy: the result must not change
	got[1].Data = "changed"
	if *r.content[1].Size != 3 || r.content[3].Data != "BBBB" {
		t.Fatal("Images shares the result's content")
	}
	if (&Result{content: []registry.ContentBlock{registry.Text("a")}}).Images() != nil {
		t.Fatal("images of a text result")
	}
}

// TestIdempotencyKeys: a call's key depends on its session and call id
// only: the same call made again has it, any other call has another, and a
// call without an id has none.
func TestIdempotencyKeys(t *testing.T) {
	reg, rt := newRT(t)
	var keys []string
	mustRegister(t, reg, registry.Global, anyTool(t, "k", registry.Behavior{Execute: func(_ context.Context, exec registry.Exec, a frozen.Value) (any, error) {
		keys = append(keys, exec.IdempotencyKey())
		return a, nil
	}}))
	for _, req := range []Request{
		{CallID: "c1", SessionID: "s1"}, {CallID: "c1", SessionID: "s1"},
		{CallID: "c2", SessionID: "s1"}, {CallID: "c1", SessionID: "s2"}, {SessionID: "s1"},
	} {
		req.Name, req.Arguments = "k", "{}"
		if r := rt.Execute(context.Background(), req); r.IsError() {
			t.Fatal(r.Error())
		}
	}
	if len(keys) != 5 || keys[0] != keys[1] || keys[0] == keys[2] || keys[0] == keys[3] || keys[2] == keys[3] || keys[4] != "" ||
		len(keys[0]) != len("cm1-")+32 {
		t.Fatalf("keys %q", keys)
	}
}

// TestNestingBodyAndRunTimeout: a call of the code transport runs the
// nesting body with its Nesting (token, approver, view, the caller's
// RunOptions), and the timeout wrapper's backstop follows a run timeout the
// caller chose past the tool's own.
func TestNestingBodyAndRunTimeout(t *testing.T) {
	reg, rt := newRT(t)
	reg.SetCodeTransport(transportTool(t, registry.Behavior{
		Timeout: 50 * time.Millisecond,
		Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
			return nil, errors.New("not the nesting body")
		},
	}))
	if err := reg.CreateScope("agent", registry.Global, registry.ModeCode); err != nil {
		t.Fatal(err)
	}
	rt.AddAround(Timeout(0))
	var seen *Nesting
	rt.SetNestingBody(func(ctx context.Context, n *Nesting, _ frozen.Value) (any, error) {
		seen = n
		select {
		case <-time.After(150 * time.Millisecond):
			return "slept", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	approver := approverFunc(func(context.Context, ApprovalRequest) ApprovalAnswer { return ApprovalAnswer{} })
	r := rt.Execute(context.Background(), Request{CallID: "c1", Name: registry.RunCode, Arguments: `{}`, Scope: "agent", Approver: approver, Run: RunOptions{Timeout: time.Second, Events: "sink"}})
	if r.IsError() {
		t.Fatalf("with a run timeout of 1s: %v", r.Error())
	}
	if seen == nil || seen.Exec.CallID() != "c1" || seen.Parent.IsZero() || seen.Approver == nil || seen.View == nil || seen.View.Scope() != "agent" || seen.Run.Events != "sink" {
		t.Fatalf("nesting %+v", seen)
	}
	r = rt.Execute(context.Background(), Request{CallID: "c2", Name: registry.RunCode, Arguments: `{}`, Scope: "agent"})
	wantCode(t, r, registry.CodeToolTimeout)
}
