package openapi

import (
	"strings"
	"testing"
)

// TestYAMLDocuments: a YAML document reads as its JSON form would, keys in
// order and numbers, booleans and null typed; aliases are bounded.
func TestYAMLDocuments(t *testing.T) {
	got, err := yamlToJSON([]byte("openapi: 3.0.3\nb: [1, 2.5, true, null, '3']\na: {200: ok, 'x': ~}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"openapi":"3.0.3","b":[1,2.5,true,null,"3"],"a":{"200":"ok","x":null}}`; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	var bomb strings.Builder
	bomb.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		prev := "*a" + string(rune('0'+i-1))
		bomb.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	if _, err := yamlToJSON([]byte(bomb.String())); err != errYAMLTooLarge {
		t.Errorf("a billion laughs: err = %v", err)
	}
	for _, bad := range []string{"a: 1\na: 2\n", "base: &b {x: 1}\nc: {<<: *b}\n", "? [a]\n: 1\n", "x: .inf\n"} {
		if _, err := yamlToJSON([]byte(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// TestShapeOnly: value constraints go, shapes stay, and a property that is
// named like a keyword is a property.
func TestShapeOnly(t *testing.T) {
	got, err := ShapeOnly([]byte(`{"type": "object", "required": ["pattern"], "properties": {"pattern": {"type": "string", "pattern": "^a", "maxLength": 3}, "n": {"type": "integer", "minimum": 1, "enum": [1, 2]}}, "items": [{"format": "uuid", "type": "string"}], "anyOf": [{"minItems": 1, "type": "array"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"anyOf":[{"type":"array"}],"items":[{"type":"string"}],"properties":{"n":{"enum":[1,2],"type":"integer"},"pattern":{"type":"string"}},"required":["pattern"],"type":"object"}`; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
