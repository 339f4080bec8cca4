package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseBuildsNodes(t *testing.T) {
	n, err := Parse([]byte(`{
		"type": "object",
		"description": "root",
		"properties": {
			"s": {"type": "string", "minLength": 1, "maxLength": 3.0, "pattern": "^a", "default": "a"},
			"n": {"type": "number", "minimum": -1.5, "exclusiveMaximum": 1e2},
			"arr": {"type": "array", "items": {"type": "integer", "enum": [1, 2]}, "minItems": 0, "maxItems": 4},
			"any": {"description": "anything", "const": null},
			"alt": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {}, "additionalProperties": false}]}
		},
		"required": ["s"]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Node{
		Type:        TypeObject,
		Description: "root",
		Properties: map[string]*Node{
			"s":   {Type: TypeString, MinLength: ptr(1), MaxLength: ptr(3), Pattern: "^a", Default: "a", HasDefault: true},
			"n":   {Type: TypeNumber, Minimum: ptr(-1.5), ExclusiveMaximum: ptr(100.0)},
			"arr": {Type: TypeArray, Items: &Node{Type: TypeInteger, Enum: []any{json.Number("1"), json.Number("2")}}, MinItems: ptr(0), MaxItems: ptr(4)},
			"any": {Type: TypeJSON, Description: "anything", HasConst: true},
			"alt": {Type: TypeOneOf, OneOf: []*Node{{Type: TypeNull}, {Type: TypeObject, Properties: map[string]*Node{}, AdditionalProperties: ptr(false)}}},
		},
		Required: []string{"s"},
	}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("Parse mismatch:\n got %#v\nwant %#v", n, want)
	}
}

func TestParseRejects(t *testing.T) {
	deep := strings.Repeat(`{"type":"array","items":`, MaxDepth+1) + `{}` + strings.Repeat(`}`, MaxDepth+1)
	deepConst := `{"const":` + strings.Repeat(`[`, 1001) + strings.Repeat(`]`, 1001) + `}`
	tests := []struct {
		name, src, want string
	}{
		{"unsupported keyword in items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","format":"email"}}}}`,
			`properties.a.items: unsupported keyword "format"`},
		{"title", `{"title":"x"}`, `(root): unsupported keyword "title"`},
		{"$ref", `{"type":"object","properties":{"a":{"$ref":"#"}}}`, `properties.a: unsupported keyword "$ref"`},
		{"anyOf", `{"anyOf":[{},{}]}`, `(root): unsupported keyword "anyOf"`},
		{"type array", `{"type":["string","null"]}`, `type: type arrays are not supported (use oneOf)`},
		{"type number", `{"type":1}`, `type: "type" must be a string`},
		{"type json", `{"type":"json"}`, `type: unknown type "json" (omit "type" to accept any JSON value)`},
		{"type oneOf", `{"type":"oneOf","oneOf":[{},{}]}`, `type: unknown type "oneOf" (write "oneOf" without "type")`},
		{"unknown type", `{"type":"map"}`, `type: unknown type "map"`},
		{"items on a string", `{"type":"string","items":{}}`, `(root): keyword "items" does not apply to type "string"`},
		{"properties on an array", `{"type":"array","properties":{}}`, `(root): keyword "properties" does not apply to type "array"`},
		{"items without type", `{"items":{}}`, `(root): keyword "items" requires "type": "array"`},
		{"required without type", `{"required":[]}`, `(root): keyword "required" requires "type": "object"`},
		{"minimum on oneOf", `{"oneOf":[{},{}],"minimum":1}`, `(root): keyword "minimum" cannot be combined with oneOf`},
		{"schema additionalProperties", `{"type":"object","additionalProperties":{"type":"string"}}`,
			`additionalProperties: additionalProperties must be true or false (schemas are not supported)`},
		{"tuple items", `{"type":"array","items":[{}]}`, `items: items must be a single schema (tuple form is not supported)`},
		{"boolean items", `{"type":"array","items":true}`, `items: items must be a schema object`},
		{"duplicate keyword", `{"type":"string","type":"number"}`, `(root): duplicate keyword "type"`},
		{"duplicate property", `{"properties":{"a":{},"a":{}}}`, `properties: duplicate property "a"`},
		{"duplicate key in a value", `{"const":{"k":1,"k":2}}`, `const: duplicate key "k"`},
		{"property not an object", `{"properties":{"a":true}}`, `properties.a: schema must be a JSON object`},
		{"properties not an object", `{"properties":[]}`, `properties: properties must be an object of schemas`},
		{"required not strings", `{"type":"object","required":["a",1]}`, `required.1: required must be an array of property names`},
		{"oneOf not an array", `{"oneOf":{}}`, `oneOf: oneOf must be an array of schemas`},
		{"oneOf element not an object", `{"oneOf":[{},1]}`, `oneOf.1: schema must be a JSON object`},
		{"enum not an array", `{"enum":"a"}`, `enum: enum must be an array`},
		{"negative minLength", `{"type":"string","minLength":-1}`, `minLength: minLength must be an integer between 0 and 2147483647`},
		{"fractional maxItems", `{"type":"array","maxItems":1.5}`, `maxItems: maxItems must be an integer between 0 and 2147483647`},
		{"string minLength", `{"type":"string","minLength":"3"}`, `minLength: minLength must be an integer between 0 and 2147483647`},
		{"huge minimum", `{"type":"number","minimum":1e400}`, `minimum: minimum 1e400 is out of range`},
		{"string minimum", `{"type":"number","minimum":"0"}`, `minimum: minimum must be a number`},
		{"description not a string", `{"description":1}`, `description: description must be a string`},
		{"pattern not a string", `{"type":"string","pattern":1}`, `pattern: pattern must be a string`},
		{"not an object", `[]`, `(root): schema must be a JSON object`},
		{"boolean schema", `true`, `(root): schema must be a JSON object`},
		{"empty input", ``, `(root): invalid JSON: unexpected EOF`},
		{"truncated", `{"type":"string"`, `(root): invalid JSON: unexpected EOF`},
		{"garbage", `{"type" "string"}`, `type: invalid JSON: invalid character '"' after object key`},
		{"trailing data", `{} {}`, `(root): unexpected data after the schema`},
		{"trailing garbage", `{} x`, `(root): invalid JSON: invalid character 'x' looking for beginning of value`},
		{"too deep", deep, "schema is nested deeper than 10000 levels"},
		{"value too deep", deepConst, "value is nested deeper than 1000 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Parse([]byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded: %#v", n)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant    %q", err.Error(), tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is not *Error", err)
			}
		})
	}
}

func TestCompileJSONAppliesTheRules(t *testing.T) {
	tests := []struct {
		name, src string
		kind      Kind
		want      string
	}{
		{"nested object needs additionalProperties", `{"properties":{"a":{"type":"object"}}}`, Parameters,
			"properties.a: object must set additionalProperties to true or false"},
		{"integer enum with 1.5", `{"type":"integer","enum":[1,1.5]}`, Value, "enum.1: 1.5 is not of type integer"},
		{"oneOf with one branch", `{"oneOf":[{"type":"string"}]}`, Value, "oneOf: oneOf needs at least two alternatives, got 1"},
		{"parameters root is a string", `{"type":"string"}`, Parameters, `(root): parameters must be an object schema, got type "string"`},
		{"value root object", `{"type":"object"}`, Value, "(root): object must set additionalProperties to true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileJSON([]byte(tt.src), tt.kind)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
	// 3.0 is an integer, also in enums.
	s := mustCompileJSON(t, `{"type":"integer","enum":[3.0, 1e1]}`, Value)
	if vs := s.Validate(decode(t, `10`)); vs != nil {
		t.Errorf("10 against enum [3.0, 1e1]: %v", vs)
	}
}

func TestParseRoundTrip(t *testing.T) {
	// Parse(JSON()) compiles to the same JSON, for every kind of node.
	srcs := []struct {
		src  string
		kind Kind
	}{
		{`{"properties":{"a":{"type":"string","description":"d","minLength":1,"pattern":"x+"}},"required":["a"]}`, Parameters},
		{`{"type":"object","properties":{"o":{"type":"object","additionalProperties":true}},"additionalProperties":false}`, Parameters},
		{`{"oneOf":[{"type":"array","items":{"type":"number","minimum":0.5}},{"type":"null"}],"default":null}`, Value},
		{`{"description":"any","enum":[1,"a",{"b":[true]}],"const":1.50}`, Value},
		{`{"type":"integer","exclusiveMinimum":-3,"maximum":1e3,"default":7}`, Value},
	}
	for _, tt := range srcs {
		s := mustCompileJSON(t, tt.src, tt.kind)
		again := mustCompileJSON(t, string(s.JSON()), tt.kind)
		if !bytes.Equal(s.JSON(), again.JSON()) {
			t.Errorf("round trip of %s:\n first %s\nsecond %s", tt.src, s.JSON(), again.JSON())
		}
	}
}

var parseSeeds = []string{
	`{}`,
	`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
	`{"properties":{"a":{"type":"object","properties":{},"additionalProperties":false}}}`,
	`{"oneOf":[{"type":"string","enum":["x"]},{"type":"integer","minimum":0}]}`,
	`{"type":"array","items":{"type":"number","exclusiveMaximum":1},"minItems":1}`,
	`{"type":"string","pattern":"^[a-z]+$","maxLength":3,"default":"ab"}`,
	`{"type":"integer","const":123456789012345678901234567890}`,
	`{"type":["string"]}`,
	`{"type":"string","items":{}}`,
	`{"const":{"__proto__":{"a":[1,{"b":null}]}}}`,
	`{"properties":{"__proto__":{"type":"null"},"constructor":{}}}`,
	`{"enum":[1e999999]}`,
	`{"type":"number","minimum":-0}`,
	`{"properties":{"a":{"type":"array","items":{"type":"array","items":{"oneOf":[{},{"type":"null"}]}}}}}`,
	`[`, `{"a`, `{"type":"string",}`, "\xff", `{"description":"\ud800"}`,
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Parse(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error %T is not *Error: %v", err, err)
			}
			return
		}
		if n == nil {
			t.Fatal("Parse returned nil Node and nil error")
		}
		for _, kind := range []Kind{Parameters, Value} {
			_, _ = Compile(n, kind) // must not panic
		}
	})
}

func FuzzCompileJSON(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	values := []any{nil, true, "s", mustDecode(`{"a":[1,2.5,"x",null,{"b":{}}]}`), mustDecode(`[[],{}]`), mustDecode(`-0`)}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, kind := range []Kind{Parameters, Value} {
			s, err := CompileJSON(data, kind)
			if err != nil {
				continue
			}
			out := s.JSON()
			if !json.Valid(out) {
				t.Fatalf("JSON() is not valid JSON: %s", out)
			}
			again, err := CompileJSON(out, kind)
			if err != nil {
				t.Fatalf("recompiling JSON() %s: %v", out, err)
			}
			if !bytes.Equal(again.JSON(), out) {
				t.Fatalf("round trip changed the schema:\n first %s\nsecond %s", out, again.JSON())
			}
			for _, v := range values {
				checkViolations(t, v, s.Validate(v))
			}
		}
	})
}

func mustDecode(s string) any {
	v, err := decodeJSON([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}
