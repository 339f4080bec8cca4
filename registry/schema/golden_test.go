package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/codemode/codemode/internal/golden"
)

// goldenSchemas are representative DSL schemas whose compiled standard JSON
// is pinned in testdata/<name>.golden: what a model is shown.
var goldenSchemas = []struct {
	name string
	kind Kind
	node func() *Node
}{
	{"params_tool", Parameters, toolParams},
	{"params_closed_root", Parameters, func() *Node {
		n := Params(map[string]*Node{"q": String("query").MinLen(1).MaxLen(200)}, "q")
		n.AdditionalProperties = ptr(false)
		return n
	}},
	{"params_empty", Parameters, func() *Node { return Params(nil) }},
	{"params_nested_objects", Parameters, func() *Node {
		return Params(map[string]*Node{
			"user": Object(map[string]*Node{
				"name":    String("display name"),
				"address": Object(map[string]*Node{"city": String(""), "zip": String("").Match(`^\d{5}$`)}, []string{"city"}, true),
				"labels":  Object(nil, nil, false).Describe("free-form labels"),
			}, []string{"name"}, true),
		}, "user")
	}},
	{"params_special_names", Parameters, func() *Node {
		return Params(map[string]*Node{
			"__proto__":   Boolean(""),
			"constructor": String(""),
			"a/b~c":       Null("slash and tilde"),
			"quote\"<&>":  JSON("needs escaping; no HTML escaping \u2028"),
		}, "__proto__")
	}},
	{"value_string", Value, func() *Node { return String("a name").WithEnum("a", "b").WithDefault("a") }},
	{"value_numbers", Value, func() *Node {
		return Array(OneOf(
			Integer("count").Min(0).Max(60000),
			&Node{Type: TypeNumber, ExclusiveMinimum: ptr(-0.5), ExclusiveMaximum: ptr(1e21)},
		), "numbers").MinCount(1).MaxCount(10)
	}},
	{"value_const_and_null", Value, func() *Node {
		return Object(map[string]*Node{
			"kind":    String("").WithConst("point"),
			"nothing": Null("").WithConst(nil),
			"big":     Integer("").WithConst(json.Number("123456789012345678901234567890")),
			"any":     JSON("").WithEnum(1, "x", nil, map[string]any{"k": []any{true, 2.5}}),
		}, []string{"kind"}, true)
	}},
	{"value_oneof_objects", Value, func() *Node {
		return OneOf(
			Object(map[string]*Node{"ok": Boolean("").WithConst(true), "value": JSON("")}, []string{"ok", "value"}, true),
			Object(map[string]*Node{"ok": Boolean("").WithConst(false), "error": String("")}, []string{"ok", "error"}, true),
		).Describe("result")
	}},
	{"value_any", Value, func() *Node { return JSON("anything at all") }},
}

func TestGoldenSchemas(t *testing.T) {
	for _, g := range goldenSchemas {
		t.Run(g.name, func(t *testing.T) {
			s := mustCompile(t, g.node(), g.kind)
			var out bytes.Buffer
			if err := json.Indent(&out, s.JSON(), "", "  "); err != nil {
				t.Fatalf("JSON() is not valid JSON: %v\n%s", err, s.JSON())
			}
			out.WriteByte('\n')
			checkGolden(t, filepath.Join("testdata", g.name+".golden"), out.Bytes())
		})
	}
}

// goldenViolations pins the wording of violations: what a model reads in an
// INVALID_ARGS failure.
var goldenViolations = []struct {
	schema string
	kind   Kind
	values []string
}{
	{`{"properties":{"path":{"type":"string","minLength":1,"maxLength":5,"pattern":"^[a-z]+$"},"limit":{"type":"integer","minimum":1,"exclusiveMaximum":100},"mode":{"type":"string","enum":["read","stat"]}},"required":["path"]}`,
		Parameters, []string{`{}`, `{"path":"Abcdefg","limit":100,"mode":"x"}`, `{"path":"ab","limit":0.5}`, `{"path":"é"}`, `[1]`}},
	{`{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"null"}},"required":["a"],"additionalProperties":false}`,
		Value, []string{`{"a":true,"zz":1,"b":0,"c":null}`, `{"a":null}`}},
	{`{"type":"array","items":{"type":"number","minimum":-1.5,"maximum":1e3},"minItems":2}`,
		Value, []string{`[]`, `[-2, 1001, "x"]`}},
	{`{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"integer"}},{"type":"number"}]}`,
		Value, []string{`1`, `[1, "x", 2.5]`, `{}`}},
	{`{"type":"object","properties":{"k":{"const":{"a":[1,2]}},"e":{"enum":[1,2,3,4,5,6,7,8,9,10,11,12]},"s":{"type":"string","const":"x"}},"additionalProperties":true}`,
		Value, []string{`{"k":{"a":[1]},"e":13,"s":"y"}`}},
}

func TestGoldenViolations(t *testing.T) {
	var out bytes.Buffer
	for _, g := range goldenViolations {
		s := mustCompileJSON(t, g.schema, g.kind)
		fmt.Fprintf(&out, "schema %s\n", g.schema)
		for _, src := range g.values {
			v := decode(t, src)
			vs := s.Validate(v)
			checkViolations(t, v, vs)
			fmt.Fprintf(&out, "  value %s\n", src)
			if vs == nil {
				out.WriteString("    valid\n")
			}
			for _, x := range vs {
				fmt.Fprintf(&out, "    %s\n", x)
			}
		}
	}
	checkGolden(t, filepath.Join("testdata", "violations.golden"), out.Bytes())
}

func checkGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	golden.Check(t, file, got)
}
