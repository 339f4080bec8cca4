package registry

import (
	"context"
	"fmt"
	"reflect"

	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

// TypedFunc is the body of a typed tool: it receives the arguments decoded
// into In (already valid against In's schema) and returns the value as Out.
type TypedFunc[In, Out any] func(ctx context.Context, exec Exec, in In) (Out, error)

// Typed defines a tool whose parameter and output schemas are inferred from
// the Go types In and Out (schema.ForType documents the rules: structs are
// closed objects, descriptions come from `jsonschema:"…"` tags and
// constraints from `schema:"…"` tags). The inferred schemas are DSL schemas,
// compiled as Define compiles them, so a typed tool is a Define'd tool:
// arguments are validated (and decoded into In) before policy and before the
// body, violations are an INVALID_ARGS failure listing each path, and the
// body's Out is validated against the output schema (INVALID_TOOL_OUTPUT).
//
// b carries everything that is not the schemas and the body (hints, timeout,
// render, ...); nil means none. b.Execute must be nil: fn is the body.
func Typed[In, Out any](name, description string, fn TypedFunc[In, Out], b *Behavior) (*Tool, error) {
	var beh Behavior
	if b != nil {
		beh = *b
	}
	if beh.Execute != nil {
		return nil, fmt.Errorf("tool %q: Typed takes its body from fn; Behavior.Execute must be nil", name)
	}
	if fn == nil {
		return nil, fmt.Errorf("tool %q: Execute is required", name)
	}
	params, err := schema.ForType(reflect.TypeFor[In](), schema.Parameters)
	if err != nil {
		return nil, fmt.Errorf("tool %q: parameters: %w", name, err)
	}
	output, err := schema.ForType(reflect.TypeFor[Out](), schema.Value)
	if err != nil {
		return nil, fmt.Errorf("tool %q: output: %w", name, err)
	}
	beh.Execute = func(ctx context.Context, exec Exec, args frozen.Value) (any, error) {
		var in In
		if err := decodeArgs(name, args, &in); err != nil {
			return nil, err
		}
		return fn(ctx, exec, in)
	}
	t, err := Define(Definition{Name: name, Description: description, Parameters: params, Output: output, Behavior: beh})
	if err != nil {
		return nil, err
	}
	t.decodes = func(args frozen.Value) error {
		var in In
		return decodeArgs(name, args, &in)
	}
	return t, nil
}

// MustTyped is Typed for package-level tool tables; it panics on error.
func MustTyped[In, Out any](name, description string, fn TypedFunc[In, Out], b *Behavior) *Tool {
	t, err := Typed(name, description, fn, b)
	if err != nil {
		panic(err)
	}
	return t
}

// decodeArgs decodes schema-valid arguments into a typed tool's input. What
// the schema admits but Go cannot hold (3.0 or 2^70 for an int) is
// INVALID_ARGS too.
func decodeArgs(name string, args frozen.Value, in any) error {
	if err := args.Unmarshal(in); err != nil {
		return &Error{Code: CodeInvalidArgs, Message: fmt.Sprintf("invalid arguments for %s: %v", name, err)}
	}
	return nil
}
