package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// outputOf is the output schema of the single operation of a document whose
// components are components and whose 200 response schema is schema.
func outputOf(t *testing.T, version, components, schema string) json.RawMessage {
	t.Helper()
	ops := operations(t, `{"openapi": "`+version+`", "components": `+components+`, "paths": {"/x": {"get": {"operationId": "x",
	  "responses": {"200": {"content": {"application/json": {"schema": `+schema+`}}}}}}}}`)
	return ops["x"].OutputSchema
}

func TestSchemaConversion(t *testing.T) {
	for _, tc := range []struct {
		name, version, components, schema, want string
	}{
		{"ref inlined", "3.0.3", `{"schemas": {"user": {"type": "object", "properties": {"login": {"type": "string"}}}}}`,
			`{"type": "array", "items": {"$ref": "#/components/schemas/user"}}`,
			`{"type": "array", "items": {"type": "object", "properties": {"login": {"type": "string"}}}}`},
		{"cycle becomes its description", "3.0.3", `{"schemas": {"node": {"description": "A tree node.", "type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/node"}}}}}}`,
			`{"$ref": "#/components/schemas/node"}`,
			`{"description": "A tree node.", "type": "object", "properties": {"children": {"type": "array", "items": {"description": "A tree node."}}}}`},
		{"same ref twice, no cycle", "3.0.3", `{"schemas": {"s": {"type": "string"}}}`,
			`{"type": "object", "properties": {"a": {"$ref": "#/components/schemas/s"}, "b": {"$ref": "#/components/schemas/s"}}}`,
			`{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}`},
		{"nullable type", "3.0.3", `{}`, `{"type": "string", "nullable": true, "enum": ["a", "b"]}`,
			`{"type": ["string", "null"], "enum": ["a", "b", null]}`},
		{"nullable without type", "3.0.3", `{}`, `{"allOf": [{"type": "object"}], "nullable": true}`,
			`{"anyOf": [{"allOf": [{"type": "object"}]}, {"type": "null"}]}`},
		{"nullable false", "3.0.3", `{}`, `{"type": "integer", "nullable": false}`, `{"type": "integer"}`},
		{"OpenAPI-only keywords dropped", "3.0.3", `{}`,
			`{"type": "object", "example": {"a": 1}, "examples": [1], "x-github": {}, "discriminator": {"propertyName": "k"}, "xml": {}, "externalDocs": {}, "readOnly": true, "properties": {"example": {"type": "string", "deprecated": true}}}`,
			`{"type": "object", "readOnly": true, "properties": {"example": {"type": "string", "deprecated": true}}}`},
		{"3.0 exclusive bounds", "3.0.3", `{}`, `{"type": "number", "maximum": 10, "exclusiveMaximum": true, "minimum": 0, "exclusiveMinimum": false}`,
			`{"type": "number", "exclusiveMaximum": 10, "minimum": 0}`},
		{"3.1 ref siblings", "3.1.0", `{"schemas": {"s": {"type": "string", "description": "old"}}}`,
			`{"$ref": "#/components/schemas/s", "description": "new"}`, `{"type": "string", "description": "new"}`},
		{"boolean schemas", "3.1.0", `{}`, `{"type": "object", "additionalProperties": false, "properties": {"any": true}}`,
			`{"type": "object", "additionalProperties": false, "properties": {"any": true}}`},
		{"unescaped html", "3.0.3", `{}`, `{"description": "a <b> & c"}`, `{"description": "a <b> & c"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := outputOf(t, tc.version, tc.components, tc.schema)
			equalJSON(t, "output", got, tc.want)
			if tc.name == "unescaped html" && !strings.Contains(string(got), "<b> &") {
				t.Errorf("escaped: %s", got)
			}
		})
	}
}

// A document of n schemas where each refers to the next one twice doubles
// its expansion at every level: 2^n copies without the size bound.
func TestSchemaSizeBound(t *testing.T) {
	const n = 40
	var b strings.Builder
	b.WriteString(`{"schemas": {`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		next := `{"type": "string", "description": "leaf"}`
		if i < n-1 {
			next = `{"$ref": "#/components/schemas/s` + itoa(i+1) + `"}`
		}
		b.WriteString(`"s` + itoa(i) + `": {"description": "level ` + itoa(i) + `", "type": "object", "properties": {"left": ` + next + `, "right": ` + next + `}}`)
	}
	b.WriteString(`}}`)
	got := outputOf(t, "3.0.3", b.String(), `{"$ref": "#/components/schemas/s0"}`)
	if len(got) > 2*MaxSchemaBytes {
		t.Errorf("output schema is %d bytes, want at most about %d", len(got), MaxSchemaBytes)
	}
	if len(got) < MaxSchemaBytes/2 {
		t.Errorf("output schema is %d bytes: the bound cut it far below %d", len(got), MaxSchemaBytes)
	}
	if !strings.Contains(string(got), `"left":{"description":"level `) {
		t.Errorf("refs past the bound are not reduced to their description")
	}
}
