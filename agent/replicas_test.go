package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// Two agents on one store take turns on a session: each folds only what it
// has not read, yet both see every step the other logged.
func TestAgentsAlternateOnOneSession(t *testing.T) {
	e := newEnv(t, nil, registry.ModeBoth, agent.Options{})
	other := agent.New(e.rt, e.store, agent.Options{})
	e.step(t, call("a1", "math_add", `{"a":1,"b":2}`))
	if _, err := other.Step(context.Background(), e.sid, []agent.ToolCall{call("b1", "math_add", `{"a":1,"b":2}`)}); err != nil {
		t.Fatal(err)
	}
	// The first agent must see b1, logged by the other one.
	if _, err := e.agent.Step(context.Background(), e.sid, []agent.ToolCall{call("b1", "math_add", `{"a":1,"b":2}`)}); !errors.Is(err, agent.ErrInvalidCalls) {
		t.Fatalf("reusing an id the other agent logged: %v", err)
	}
	e.step(t, call("a2", "math_add", `{"a":1,"b":2}`))
	var steps []int
	for _, c := range ofType[session.ToolCall](t, e.events(t), session.TypeToolCall) {
		steps = append(steps, c.Step)
	}
	if len(steps) != 3 || steps[0] != 1 || steps[1] != 2 || steps[2] != 3 {
		t.Fatalf("step numbers %v, want [1 2 3]", steps)
	}
}
