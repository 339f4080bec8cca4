package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/examples/tools"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/session"
)

// scope is the scope test sessions run in.
const scope = "default"

// env is a registry with the demo pack and the probe tool, a runtime with
// run_code installed, a store with one session, and an agent.
type env struct {
	reg   *registry.Registry
	rt    *runtime.Runtime
	store session.Store
	agent *agent.Agent
	sid   string
	rec   *recorder
}

func newEnv(t testing.TB, store session.Store, mode registry.Mode, opts agent.Options) *env {
	t.Helper()
	reg, rt, rec, err := setup(mode)
	if err != nil {
		t.Fatal(err)
	}
	if store == nil {
		store = session.NewMemory()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	t.Cleanup(func() { store.Close() })
	e := &env{reg: reg, rt: rt, store: store, agent: agent.New(rt, store, opts), sid: "s1", rec: rec}
	if err := store.CreateSession(context.Background(), session.Session{ID: e.sid, Scope: scope}); err != nil {
		t.Fatal(err)
	}
	return e
}

// setup builds the registry (scope "default" in mode, with the demo pack and
// the probe tool) and a runtime with run_code installed.
func setup(mode registry.Mode) (*registry.Registry, *runtime.Runtime, *recorder, error) {
	reg := registry.New()
	if err := reg.CreateScope(scope, registry.Global, mode); err != nil {
		return nil, nil, nil, err
	}
	if _, err := tools.New().Register(reg, scope); err != nil {
		return nil, nil, nil, err
	}
	rec := &recorder{gates: map[string]chan struct{}{}}
	tool, err := rec.probe()
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := reg.Register(scope, tool); err != nil {
		return nil, nil, nil, err
	}
	rt := runtime.New(reg, runtime.Options{})
	bridge.Install(rt, bridge.Options{})
	return reg, rt, rec, nil
}

// probeArgs drive the probe tool.
type probeArgs struct {
	ID       string   `json:"id"`
	Safe     bool     `json:"safe,omitempty"`
	Signal   string   `json:"signal,omitempty"`   // a gate to open when started
	Wait     string   `json:"wait,omitempty"`     // a gate to wait for before ending
	Open     string   `json:"open,omitempty"`     // a gate to open when ended
	Block    bool     `json:"block,omitempty"`    // wait for cancellation
	Contexts []string `json:"contexts,omitempty"` // deferred, in order
	Image    bool     `json:"image,omitempty"`    // defer a context with image content
	Conclude bool     `json:"conclude,omitempty"`
	Ask      bool     `json:"ask,omitempty"` // the test's pre-policy asks for it
}

func (p probeArgs) String() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// recorder keeps the order in which probe bodies started and ended
// ("start:ID", "end:ID") and the gates they wait on.
type recorder struct {
	mu     sync.Mutex
	events []string
	gates  map[string]chan struct{}
}

func (r *recorder) note(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func (r *recorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) gate(name string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.gates[name]
	if !ok {
		g = make(chan struct{})
		r.gates[name] = g
	}
	return g
}

// open opens a gate once.
func (r *recorder) open(name string) {
	g := r.gate(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-g:
	default:
		close(g)
	}
}

// probe is a raw tool whose behaviour its arguments choose.
func (r *recorder) probe() (*registry.Tool, error) {
	return registry.Raw(registry.RawDefinition{
		Name:        "probe",
		Description: "A test tool.",
		Output:      json.RawMessage(`{"type":"object"}`),
		Behavior: registry.Behavior{
			IsConcurrencySafe: func(args frozen.Value) bool {
				var p probeArgs
				return args.Unmarshal(&p) == nil && p.Safe
			},
			Execute: func(ctx context.Context, exec registry.Exec, args frozen.Value) (any, error) {
				var p probeArgs
				if err := args.Unmarshal(&p); err != nil {
					return nil, err
				}
				r.note("start:" + p.ID)
				defer func() {
					r.note("end:" + p.ID)
					if p.Open != "" {
						r.open(p.Open)
					}
				}()
				if p.Signal != "" {
					r.open(p.Signal)
				}
				if p.Wait != "" {
					select {
					case <-r.gate(p.Wait):
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(10 * time.Second):
						return nil, fmt.Errorf("probe %s: gate %q never opened (calls did not overlap)", p.ID, p.Wait)
					}
				}
				if p.Block {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				for _, c := range p.Contexts {
					exec.DeferContext(c)
				}
				if p.Image {
					exec.Defer(registry.Context{Source: "probe-image", Text: "an image", Content: []registry.ContentBlock{registry.Image("image/png", "iVBORw0KGgo=")}})
				}
				if p.Conclude {
					exec.ConcludeTurn()
				}
				return map[string]any{"id": p.ID}, nil
			},
		},
	})
}

func probe(id string, p probeArgs) agent.ToolCall {
	p.ID = id
	return agent.ToolCall{ID: id, Name: "probe", Arguments: p.String()}
}

func call(id, name, args string) agent.ToolCall {
	return agent.ToolCall{ID: id, Name: name, Arguments: args}
}

func runCode(id, code string) agent.ToolCall {
	b, err := json.Marshal(map[string]string{"code": code, "description": "test program"})
	if err != nil {
		panic(err)
	}
	return agent.ToolCall{ID: id, Name: registry.RunCode, Arguments: string(b)}
}

func (e *env) step(t *testing.T, calls ...agent.ToolCall) agent.StepResult {
	t.Helper()
	res, err := e.agent.Step(context.Background(), e.sid, calls)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	if len(res.Results) != len(calls) {
		t.Fatalf("Step returned %d results for %d calls", len(res.Results), len(calls))
	}
	for i, r := range res.Results {
		if r.ToolCallID != calls[i].ID || r.Result == nil || r.Result.CallID() != calls[i].ID {
			t.Fatalf("result %d is for %q (%v), want %q", i, r.ToolCallID, r.Result, calls[i].ID)
		}
	}
	return res
}

func (e *env) events(t *testing.T) []session.Event {
	t.Helper()
	evs, err := e.store.Events(context.Background(), e.sid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// logged is an event reduced to what tests compare: its type and the call
// id it concerns ("" for none).
func logged(t *testing.T, evs []session.Event) []string {
	t.Helper()
	out := make([]string, len(evs))
	for i, e := range evs {
		var p struct {
			CallID    string `json:"call_id"`
			SubCallID string `json:"sub_call_id"`
		}
		if err := e.Decode(&p); err != nil {
			t.Fatal(err)
		}
		id := p.CallID
		if p.SubCallID != "" {
			id = p.SubCallID
		}
		out[i] = e.Type + " " + id
	}
	return out
}

func decode[T any](t *testing.T, e session.Event) T {
	t.Helper()
	var v T
	if err := e.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// ofType returns the decoded events of one type.
func ofType[T any](t *testing.T, evs []session.Event, typ string) []T {
	t.Helper()
	var out []T
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, decode[T](t, e))
		}
	}
	return out
}

// waitFor blocks until the session log has an event that match accepts and
// returns it.
func waitFor(t *testing.T, store session.Store, sid string, match func(session.Event) bool) session.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var after int64
	for {
		evs, err := store.Events(ctx, sid, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if match(e) {
				return e
			}
			after = e.Seq
		}
		if err := store.Wait(ctx, sid, after); err != nil {
			t.Fatalf("waiting for an event: %v", err)
		}
	}
}

func isType(typ string) func(session.Event) bool {
	return func(e session.Event) bool { return e.Type == typ }
}

func index(list []string, s string) int {
	i := slices.Index(list, s)
	if i < 0 {
		panic(fmt.Sprintf("%q not in %v", s, list))
	}
	return i
}

// checkClosed asserts the log invariant: every tool/call has exactly one
// tool/result after it, and seqs are 1..N.
func checkClosed(t *testing.T, evs []session.Event) {
	t.Helper()
	open := map[string]int{}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		switch e.Type {
		case session.TypeToolCall:
			open[decode[session.ToolCall](t, e).CallID]++
		case session.TypeToolResult:
			id := decode[session.ToolResult](t, e).CallID
			if open[id] != 1 {
				t.Fatalf("tool/result %s at seq %d closes %d open calls", id, e.Seq, open[id])
			}
			open[id] = 0
		}
	}
	for id, n := range open {
		if n != 0 {
			t.Fatalf("tool/call %s has no tool/result", id)
		}
	}
}

func mustContain(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}

// mustOutcome fails t unless r succeeded (wantCode "") or failed with
// wantCode and, when wantMessage is set, a message containing it.
func mustOutcome(t *testing.T, r *runtime.Result, wantCode registry.Code, wantMessage string) {
	t.Helper()
	if wantCode == "" && r.IsError() {
		t.Fatalf("result failed: %+v", r.Error())
	}
	if wantCode != "" && r.Code() != wantCode {
		t.Fatalf("code = %q (%v), want %s", r.Code(), r.Error(), wantCode)
	}
	if wantMessage != "" {
		mustContain(t, r.Error().Message, wantMessage)
	}
}
