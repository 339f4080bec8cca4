package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

type refundIn struct {
	Order  string `json:"order" jsonschema:"order id" schema:"minLength=1"`
	Amount int    `json:"amount" jsonschema:"cents" schema:"minimum=1"`
	Reason string `json:"reason,omitempty" schema:"enum=damaged|late"`
}

type refundOut struct {
	Refunded int    `json:"refunded" schema:"minimum=0"`
	Status   string `json:"status"`
}

func refundTool(t *testing.T, body registry.TypedFunc[refundIn, refundOut]) *registry.Tool {
	t.Helper()
	tool, err := registry.Typed("refund", "Refunds part of an order.", body, &registry.Behavior{Hints: registry.Hints{Title: "Refund"}})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestTypedInfersClosedSchemas(t *testing.T) {
	tool := refundTool(t, func(context.Context, registry.Exec, refundIn) (refundOut, error) { return refundOut{}, nil })
	const wantParams = `{"type":"object","properties":{"amount":{"type":"integer","description":"cents","minimum":1},"order":{"type":"string","description":"order id","minLength":1},"reason":{"type":"string","enum":["damaged","late"]}},"required":["order","amount"],"additionalProperties":false}`
	if got := string(tool.Parameters()); got != wantParams {
		t.Errorf("parameters\n got %s\nwant %s", got, wantParams)
	}
	const wantOutput = `{"type":"object","properties":{"refunded":{"type":"integer","minimum":0},"status":{"type":"string"}},"required":["refunded","status"],"additionalProperties":false}`
	if got := string(tool.OutputSchema()); got != wantOutput {
		t.Errorf("output\n got %s\nwant %s", got, wantOutput)
	}
	if !tool.ValidatesArgs() || tool.Hints().Title != "Refund" {
		t.Errorf("ValidatesArgs = %v, Hints = %+v", tool.ValidatesArgs(), tool.Hints())
	}
}

func TestTypedBodyGetsTypedInput(t *testing.T) {
	var got refundIn
	tool := refundTool(t, func(_ context.Context, _ registry.Exec, in refundIn) (refundOut, error) {
		got = in
		return refundOut{Refunded: in.Amount, Status: "done"}, nil
	})
	v, err := tool.Invoke(context.Background(), stubExec{}, frozen.MustParse(`{"order":"o-1","amount":250,"reason":"late"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (refundIn{Order: "o-1", Amount: 250, Reason: "late"}); got != want {
		t.Errorf("body got %+v, want %+v", got, want)
	}
	fv, err := frozen.Snapshot(v)
	if err != nil {
		t.Fatal(err)
	}
	if fv.String() != `{"refunded":250,"status":"done"}` {
		t.Errorf("value = %s", fv)
	}
	if err := tool.ValidateOutputOf(v, fv); err != nil {
		t.Errorf("ValidateOutput: %v", err)
	}
}

func TestTypedRejectsInvalidArgsWithPaths(t *testing.T) {
	called := false
	tool := refundTool(t, func(context.Context, registry.Exec, refundIn) (refundOut, error) {
		called = true
		return refundOut{}, nil
	})
	tests := []struct {
		name, args string
		want       []string
	}{
		{"wrong types, extra key, bad enum", `{"order":"","amount":"lots","reason":"bored","tip":1}`,
			[]string{"/amount: expected integer", "/order:", "/reason:", `unexpected property "tip"`}},
		{"missing required", `{}`, []string{`missing required property "order"`}},
		{"schema-valid but not an int", `{"order":"o","amount":2.0e30}`, []string{"invalid arguments for refund", "amount"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tool.Invoke(context.Background(), stubExec{}, frozen.MustParse(tc.args))
			e := asError(t, err, registry.CodeInvalidArgs)
			for _, w := range tc.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message %q lacks %q", e.Message, w)
				}
			}
		})
	}
	if called {
		t.Error("the body ran with invalid arguments")
	}
}

func TestTypedBadOutputIsInvalidToolOutput(t *testing.T) {
	tool := refundTool(t, func(context.Context, registry.Exec, refundIn) (refundOut, error) {
		return refundOut{Refunded: -5, Status: "oops"}, nil
	})
	v, err := tool.Invoke(context.Background(), stubExec{}, frozen.MustParse(`{"order":"o","amount":1}`))
	if err != nil {
		t.Fatal(err)
	}
	fv, err := frozen.Snapshot(v)
	if err != nil {
		t.Fatal(err)
	}
	e := asError(t, tool.ValidateOutputOf(v, fv), registry.CodeInvalidToolOutput)
	if !strings.Contains(e.Message, "/refunded") {
		t.Errorf("message %q does not name /refunded", e.Message)
	}
}

func TestTypedRejectsBadDefinitions(t *testing.T) {
	body := func(context.Context, registry.Exec, []string) (string, error) { return "", nil }
	if _, err := registry.Typed("list", "", body, nil); err == nil || !strings.Contains(err.Error(), "parameters") {
		t.Errorf("slice input: err = %v", err)
	}
	ok := func(context.Context, registry.Exec, refundIn) (string, error) { return "", nil }
	if _, err := registry.Typed("x", "", ok, &registry.Behavior{Execute: returning("y")}); err == nil {
		t.Error("Typed accepted a Behavior with its own Execute")
	}
}
