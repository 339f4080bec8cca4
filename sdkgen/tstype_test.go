package sdkgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// typeText renders a schema document the way ToolArgsMap does, at the top level.
func typeText(src string) string {
	return schemaType(decodeSchema(raw(src)), "").text
}

// TestRefExpansionIsBounded: definitions that refer to each other many
// times over render in bounded size (past maxRefExpansions, unknown).
func TestRefExpansionIsBounded(t *testing.T) {
	var defs []string
	for i := range 20 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"a":{"$ref":"#/$defs/d%d"},"b":{"$ref":"#/$defs/d%d"}},"additionalProperties":false}`, i, i+1, i+1))
	}
	defs = append(defs, `"d20":{"type":"string"}`)
	src := `{"$defs":{` + strings.Join(defs, ",") + `},"$ref":"#/$defs/d0"}`
	got := typeText(src)
	if len(got) > 1<<20 || !strings.Contains(got, "string") || !strings.Contains(got, "unknown") {
		t.Fatalf("rendered %d bytes", len(got))
	}
}

func TestSchemaType(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string
	}{
		{"empty document is the open root", ``, `{ [key: string]: unknown }`},
		{"true", `true`, `unknown`},
		{"false", `false`, `never`},
		{"empty object", `{}`, `unknown`},
		{"string", `{"type":"string"}`, `string`},
		{"number", `{"type":"number"}`, `number`},
		{"integer", `{"type":"integer"}`, `number`},
		{"boolean", `{"type":"boolean"}`, `boolean`},
		{"null", `{"type":"null"}`, `null`},
		{"type list", `{"type":["string","null","string"]}`, `string | null`},
		{"unknown type name", `{"type":"json"}`, `unknown`},
		{"unknown in type list", `{"type":["string","date"]}`, `unknown`},
		{"enum", `{"type":"string","enum":["a","b","a"]}`, `"a" | "b"`},
		{"enum of scalars", `{"enum":[1,-1.5,true,false,null,"x\ny"]}`, `1 | -1.5 | true | false | null | "x\ny"`},
		{"enum with an object", `{"enum":["a",{"b":1}]}`, `unknown`},
		{"empty enum", `{"enum":[]}`, `never`},
		{"const", `{"const":"image/png"}`, `"image/png"`},
		{"const wins over type", `{"type":"integer","const":8}`, `8`},
		{"const object", `{"const":{"a":1}}`, `unknown`},
		{"array", `{"type":"array","items":{"type":"string"}}`, `string[]`},
		{"array of union", `{"type":"array","items":{"type":["string","number"]}}`, `(string | number)[]`},
		{"array of negative literal", `{"type":"array","items":{"const":-1}}`, `(-1)[]`},
		{"array without items", `{"type":"array"}`, `unknown[]`},
		{"array with items false", `{"type":"array","items":false}`, `never[]`},
		{"tuple", `{"type":"array","prefixItems":[{"type":"string"}]}`, `unknown[]`},
		{"draft-04 tuple", `{"type":"array","items":[{"type":"string"}]}`, `unknown[]`},
		{"implied array", `{"items":{"type":"null"}}`, `null[]`},
		{"open empty object", `{"type":"object"}`, `{ [key: string]: unknown }`},
		{"closed empty object", `{"type":"object","additionalProperties":false}`, `Record<string, never>`},
		{"map", `{"type":"object","additionalProperties":{"type":"boolean"}}`, `{ [key: string]: boolean }`},
		{"pattern properties", `{"type":"object","patternProperties":{"^a":{"type":"string"}},"additionalProperties":false}`, `{ [key: string]: unknown }`},
		{"closed object", `{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}},"required":["b","ghost"],"additionalProperties":false}`,
			"{\n  a?: number;\n  b: string;\n}"},
		{"open object", `{"type":"object","properties":{"a":{}}}`, "{\n  a?: unknown;\n  [key: string]: unknown;\n}"},
		{"object with typed extras", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":{"type":"number"}}`,
			"{\n  a: string;\n} & { [key: string]: number }"},
		{"implied object", `{"properties":{"a":{"type":"null"}},"additionalProperties":false}`, "{\n  a?: null;\n}"},
		{"quoted property names", `{"properties":{"a-b":{},"__proto__":{},"1x":{}},"additionalProperties":false}`,
			"{\n  \"1x\"?: unknown;\n  \"__proto__\"?: unknown;\n  \"a-b\"?: unknown;\n}"},
		{"property JSDoc", `{"properties":{"ms":{"type":"integer","minimum":0,"maximum":60000,"description":"Wait.\nLong."}},"additionalProperties":false}`,
			"{\n  /** Wait. @integer @minimum 0 @maximum 60000 */\n  ms?: number;\n}"},
		{"nested indentation", `{"properties":{"o":{"properties":{"i":{"type":"string"}},"additionalProperties":false}},"additionalProperties":false}`,
			"{\n  o?: {\n    i?: string;\n  };\n}"},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"number"}]}`, `string | number`},
		{"oneOf with never", `{"oneOf":[{"type":"string"},false]}`, `string`},
		{"anyOf with unknown", `{"anyOf":[{"type":"string"},{"$ref":"#/x"}]}`, `unknown`},
		{"allOf", `{"allOf":[{"type":"string"},{"type":"number"}]}`, `string & number`},
		{"allOf with unknown", `{"allOf":[{"type":"string"},{"minLength":1}]}`, `string`},
		{"allOf of unions", `{"allOf":[{"type":["string","null"]},{"type":["number","null"]}]}`, `(string | null) & (number | null)`},
		{"type and oneOf", `{"type":"string","oneOf":[{"format":"date"},{"format":"email"}]}`, `string`},
		{"type and conflicting oneOf", `{"type":"string","oneOf":[false,false]}`, `never`},
		{"$ref that does not resolve", `{"$ref":"#/$defs/a","type":"string"}`, `unknown`},
		{"$ref to $defs", `{"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}},"required":["x"],"additionalProperties":false}`, "{\n  x: string;\n}"},
		{"$ref to definitions", `{"definitions":{"a":{"enum":[1,2]}},"type":"array","items":{"$ref":"#/definitions/a"}}`, `(1 | 2)[]`},
		{"$ref keeps the referrer's description", `{"$defs":{"a":{"type":"string","description":"theirs"}},"properties":{"x":{"$ref":"#/$defs/a","description":"mine"}},"additionalProperties":false}`,
			"{\n  /** mine */\n  x?: string;\n}"},
		{"$ref beside other keywords", `{"$defs":{"a":{"type":["string","null"]}},"allOf":[{"$ref":"#/$defs/a"}],"type":"string"}`, `string & (string | null)`},
		{"$ref through a chain", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"boolean"}},"$ref":"#/$defs/a"}`, `boolean`},
		{"$ref with pointer escapes", `{"$defs":{"a/b":{"type":"null"},"c~d":{"type":"number"}},"anyOf":[{"$ref":"#/$defs/a~1b"},{"$ref":"#/$defs/c~0d"}]}`, `null | number`},
		{"$ref to the root is recursion", `{"type":"object","properties":{"self":{"$ref":"#"}},"additionalProperties":false}`, "{\n  self?: unknown;\n}"},
		{"recursive $ref", `{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}`, `unknown[]`},
		{"remote $ref", `{"$ref":"https://example.com/s.json"}`, `unknown`},
		{"anchor $ref", `{"$ref":"#a"}`, `unknown`},
		{"$ref into an array", `{"prefixItems":[{"type":"string"}],"$ref":"#/prefixItems/0"}`, `unknown[] & string`},
		{"$dynamicRef", `{"$dynamicRef":"#a"}`, `unknown`},
		{"unsupported keywords widen", `{"type":"string","not":{"const":""},"if":{},"then":{}}`, `string`},
		{"invalid JSON", `{"type":`, `unknown`},
		{"two documents", `{} {}`, `unknown`},
		{"scalar document", `"string"`, `unknown`},
		{"array document", `[{"type":"string"}]`, `unknown`},
		{"null document", `null`, `unknown`},
		{"wrong type of type", `{"type":1}`, `unknown`},
		{"empty type list", `{"type":[]}`, `unknown`},
		{"wrong type of properties", `{"type":"object","properties":[]}`, `unknown`},
		{"wrong type of required", `{"type":"object","required":"a"}`, `unknown`},
		{"wrong type in required", `{"type":"object","required":[1]}`, `unknown`},
		{"wrong type of additionalProperties", `{"type":"object","additionalProperties":"no"}`, `unknown`},
		{"wrong type of items", `{"type":"array","items":"string"}`, `unknown`},
		{"wrong type of enum", `{"enum":"a"}`, `unknown`},
		{"wrong type of anyOf", `{"type":"string","anyOf":{}}`, `unknown`},
		{"empty allOf", `{"allOf":[]}`, `unknown`},
		{"wrong type of a property schema", `{"properties":{"a":"string"},"additionalProperties":false}`, "{\n  a?: unknown;\n}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := typeText(tc.schema); got != tc.want {
				t.Errorf("schema %s\n got: %s\nwant: %s", tc.schema, got, tc.want)
			}
		})
	}
}

func TestSchemaTypeDepthIsBounded(t *testing.T) {
	for _, depth := range []int{maxSchemaDepth + 1, 1000, 20000} {
		src := strings.Repeat(`{"type":"array","items":`, depth) + `{"type":"string"}` + strings.Repeat(`}`, depth)
		got := typeText(src)
		if strings.Contains(got, "string") {
			t.Errorf("depth %d: the leaf beyond the depth limit was rendered", depth)
		}
		if n := strings.Count(got, "[]"); n > maxSchemaDepth+1 {
			t.Errorf("depth %d: rendered %d levels, limit is %d", depth, n, maxSchemaDepth)
		}
	}
	shallow := strings.Repeat(`{"type":"array","items":`, maxSchemaDepth) + `{"type":"string"}` +
		strings.Repeat(`}`, maxSchemaDepth)
	if want := "string" + strings.Repeat("[]", maxSchemaDepth); typeText(shallow) != want {
		t.Errorf("a schema at the depth limit is not rendered in full: %s", typeText(shallow))
	}
}

// TestSchemaTypeOutputIsLinear pins that no construct renders a subschema more than once: every
// level below carries a typed index signature and a union, which a naive renderer would repeat.
func TestSchemaTypeOutputIsLinear(t *testing.T) {
	level := `{"type":["object","null"],"properties":{"p":%s,"q":{"type":"string"}},` +
		`"additionalProperties":{"anyOf":[{"type":"number"},{"type":"boolean"}]}}`
	src := `{"type":"string"}`
	// 16 levels: enough for a doubling renderer to exceed the limit by far, few enough that
	// it would still finish.
	for range 16 {
		src = strings.Replace(level, "%s", src, 1)
	}
	got := typeText(src)
	// Each level adds its own lines plus indentation proportional to its depth.
	if limit := 4 * len(src); len(got) > limit {
		t.Fatalf("rendered %d bytes from a %d-byte schema", len(got), len(src))
	}
	assertDeclarations(t, []byte("type T = "+got+";\n"))
}

func TestArgsOptional(t *testing.T) {
	tests := []struct {
		schema string
		want   bool
	}{
		{``, true},
		{`{}`, true},
		{`true`, true},
		{`false`, false},
		{`{"type":"object"}`, true},
		{`{"type":"object","properties":{"a":{}}}`, true},
		{`{"type":"object","required":[]}`, true},
		{`{"type":"object","required":["a"]}`, false},
		{`{"type":"object","required":"a"}`, false},
		{`{"type":"string"}`, false},
		{`{"type":["object","null"]}`, false},
		{`{"anyOf":[{"type":"object"}]}`, false},
		{`{"$ref":"#/a"}`, false},
		{`{"enum":[{}]}`, false},
		{`{`, false},
		{`null`, false},
	}
	for _, tc := range tests {
		if got := argsOptional(decodeSchema(raw(tc.schema))); got != tc.want {
			t.Errorf("argsOptional(%s) = %v, want %v", tc.schema, got, tc.want)
		}
	}
}

// One tool's schema cannot blow up the texts: references that multiply stop expanding past a
// node budget, an enum of 100,000 values renders as its types, and a type past maxTypeBytes is
// shown as too large; every text stays parseable and small, and renders fast.
func TestSchemaAmplificationIsBounded(t *testing.T) {
	// Ten levels of definitions each referring to the next four times: 4^10 expansions.
	defs := map[string]any{"l10": map[string]any{"type": "string"}}
	for i := 9; i >= 0; i-- {
		next := fmt.Sprintf("#/$defs/l%d", i+1)
		props := map[string]any{}
		for j := range 4 {
			props[fmt.Sprintf("p%d", j)] = map[string]any{"$ref": next}
		}
		defs[fmt.Sprintf("l%d", i)] = map[string]any{"type": "object", "properties": props}
	}
	amplifying, _ := json.Marshal(map[string]any{"type": "object", "$defs": defs, "properties": map[string]any{"root": map[string]any{"$ref": "#/$defs/l0"}}})
	values := make([]string, 100_000)
	for i := range values {
		values[i] = fmt.Sprintf("value-%d", i)
	}
	huge, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"enum": values}}})
	wide := map[string]any{}
	for i := range 5000 {
		wide[fmt.Sprintf("property_with_a_long_name_%05d", i)] = map[string]any{"type": "string", "description": "A property among very many."}
	}
	tooWide, _ := json.Marshal(map[string]any{"type": "object", "properties": wide})

	set := NewSet([]Tool{
		{Name: "amplifying", Parameters: amplifying},
		{Name: "huge_enum", Parameters: huge},
		{Name: "too_wide", Parameters: tooWide, Output: tooWide},
	})
	ts := TypeScript(set)
	if len(ts) > 4<<20 {
		t.Fatalf("TypeScript is %d bytes", len(ts))
	}
	assertDeclarations(t, ts)
	if !strings.Contains(string(ts), "huge_enum(args?: {\n    v?: string;") {
		t.Errorf("the huge enum does not render as string")
	}
	if !strings.Contains(string(ts), "/* its parameters schema is too large to show (") || !strings.Contains(string(ts), "/* its value schema is too large to show (") {
		t.Errorf("the too wide schema is not marked")
	}
	sig, _ := set.Signature("huge_enum")
	if sig != "huge_enum(args?: { v?: string; [key: string]: unknown }): Promise<unknown>" {
		t.Errorf("signature %q", sig)
	}
}
