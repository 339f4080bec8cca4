package registry_test

import (
	"context"
	"fmt"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
)

func Example() {
	greet := registry.MustDefine(registry.Definition{
		Name:        "greet",
		Description: "Greets someone by name.",
		Parameters: &schema.Node{
			Type:       "object",
			Properties: map[string]*schema.Node{"name": {Type: "string"}},
			Required:   []string{"name"},
		},
		Output: &schema.Node{Type: "string"},
		Behavior: registry.Behavior{
			Execute: func(_ context.Context, _ registry.Exec, args frozen.Value) (any, error) {
				var in struct{ Name string }
				if err := args.Unmarshal(&in); err != nil {
					return nil, err
				}
				return "hello, " + in.Name, nil
			},
		},
	})
	forget := registry.MustDefine(registry.Definition{
		Name:     "forget",
		Output:   &schema.Node{Type: "boolean"},
		Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return true, nil }},
	})

	r := registry.New()
	if _, err := r.Register(registry.Global, greet); err != nil {
		panic(err)
	}
	if _, err := r.Register(registry.Global, forget); err != nil {
		panic(err)
	}
	if err := r.CreateScope("support", registry.Global, registry.ModeNative); err != nil {
		panic(err)
	}
	if _, err := r.Restrict("support", registry.Filter{Deny: []string{"forget"}}); err != nil {
		panic(err)
	}

	v, err := r.View("support")
	if err != nil {
		panic(err)
	}
	for _, s := range v.Schemas() {
		fmt.Println("offered:", s.Name)
	}
	tool, _ := v.Get("greet")
	value, err := tool.Invoke(context.Background(), nil, frozen.MustParse(`{"name":"Ada"}`))
	fmt.Println(value, err)
	_, err = tool.Invoke(context.Background(), nil, frozen.MustParse(`{}`))
	fmt.Println(err != nil)
	// Output:
	// offered: greet
	// hello, Ada <nil>
	// true
}

func ExampleTyped() {
	type addIn struct {
		A int `json:"a" jsonschema:"first addend"`
		B int `json:"b" jsonschema:"second addend" schema:"minimum=0"`
	}
	type addOut struct {
		Sum int `json:"sum"`
	}
	add := registry.MustTyped("add", "Adds two integers.",
		func(_ context.Context, _ registry.Exec, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		}, &registry.Behavior{Hints: registry.Hints{ReadOnly: true}})
	fmt.Println(string(add.Parameters()))
	fmt.Println(string(add.OutputSchema()))

	v, err := add.Invoke(context.Background(), nil, frozen.MustParse(`{"a":2,"b":3}`))
	fmt.Println(v, err)
	_, err = add.Invoke(context.Background(), nil, frozen.MustParse(`{"a":2,"b":-3,"c":1}`))
	fmt.Println(err)
	// Output:
	// {"type":"object","properties":{"a":{"type":"integer","description":"first addend"},"b":{"type":"integer","description":"second addend","minimum":0}},"required":["a","b"],"additionalProperties":false}
	// {"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"],"additionalProperties":false}
	// {5} <nil>
	// INVALID_ARGS: invalid arguments for add: at /b: must be >= 0, got -3; at /c: unexpected property "c" (allowed: "a", "b")
}
