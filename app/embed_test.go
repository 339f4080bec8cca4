package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/registry"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

func echoTool(t *testing.T) *registry.Tool {
	t.Helper()
	return registry.MustTyped("echo", "Echoes text.", func(_ context.Context, _ registry.Exec, in echoIn) (echoOut, error) {
		return echoOut{Echo: in.Text}, nil
	}, nil)
}

// TestEmbedderToolsAndApprover: Options.Tools are registered before the
// configured policies are checked (a policy may name them), Options.Approver
// answers their asks, and ModelTools gives run_code the SDK prompt with the
// tools' declarations.
func TestEmbedderToolsAndApprover(t *testing.T) {
	cfg := parse(t, "demo: false\nmode: code\npolicies:\n  - {tool: echo, decision: ask, reason: echoes are loud}\n")
	if _, err := app.New(context.Background(), cfg, app.Options{}); err == nil || !strings.Contains(err.Error(), "matches no tool") {
		t.Fatalf("without the tool: err = %v, want matches no tool", err)
	}
	var asked []agent.Ask
	a, err := app.New(context.Background(), cfg, app.Options{
		Tools: []*registry.Tool{echoTool(t)},
		Approver: agent.ApproverFunc(func(_ context.Context, ask agent.Ask) (agent.Verdict, error) {
			asked = append(asked, ask)
			return agent.Allow(""), nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	res, err := a.Run(context.Background(), app.RunRequest{Code: `return (await tools.echo({text: "hi"})).echo`})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || string(res.Value) != `{"logs":[],"result":"hi"}` {
		t.Fatalf("run: %+v", res)
	}
	if len(asked) != 1 || asked[0].Tool != "echo" || string(asked[0].Arguments) != `{"text":"hi"}` || asked[0].Reason != "echoes are loud" || !asked[0].Nested {
		t.Fatalf("approver saw %+v", asked)
	}

	tools, err := a.ModelTools("")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != registry.RunCode {
		t.Fatalf("code mode offers %+v", tools)
	}
	for _, want := range []string{"echo(args: {", "what to echo", "Echoes text."} {
		if !strings.Contains(tools[0].Description, want) {
			t.Errorf("run_code's description lacks %q:\n%s", want, tools[0].Description)
		}
	}
	if _, err := a.ModelTools("nope"); !errors.Is(err, app.ErrUnknownScope) {
		t.Errorf("unknown scope: %v", err)
	}
}
