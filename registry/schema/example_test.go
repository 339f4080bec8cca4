package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/codemode/codemode/registry/schema"
)

func Example() {
	params, err := schema.Compile(schema.Params(map[string]*schema.Node{
		"path":    schema.String("file to read").MinLen(1),
		"timeout": schema.Integer("milliseconds").Min(0).Max(60000),
		"options": schema.Object(map[string]*schema.Node{
			"follow": schema.Boolean("follow symlinks"),
		}, nil, true),
	}, "path"), schema.Parameters)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(params.JSON()))

	dec := json.NewDecoder(bytes.NewReader([]byte(`{"timeout":1.5,"options":{"folow":true},"extra":"fine"}`)))
	dec.UseNumber()
	var args any
	if err := dec.Decode(&args); err != nil {
		panic(err)
	}
	fmt.Println(schema.Format(params.Validate(args)))
	// Output:
	// {"type":"object","properties":{"options":{"type":"object","properties":{"follow":{"type":"boolean","description":"follow symlinks"}},"additionalProperties":false},"path":{"type":"string","description":"file to read","minLength":1},"timeout":{"type":"integer","description":"milliseconds","minimum":0,"maximum":60000}},"required":["path"]}
	// at root: missing required property "path"; at /options/folow: unexpected property "folow" (allowed: "follow"); at /timeout: expected integer, got number 1.5
}

func ExampleCompileJSON() {
	_, err := schema.CompileJSON([]byte(`{
		"type": "object",
		"properties": {"a": {"type": "array", "items": {"type": "string", "format": "email"}}}
	}`), schema.Parameters)
	fmt.Println(err)

	_, err = schema.CompileJSON([]byte(`{"properties": {"o": {"type": "object"}}}`), schema.Parameters)
	fmt.Println(err)
	// Output:
	// properties.a.items: unsupported keyword "format"
	// properties.o: object must set additionalProperties to true or false
}
