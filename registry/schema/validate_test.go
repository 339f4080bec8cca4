package schema

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/codemode/codemode/internal/jsonpointer"
)

// checkViolations asserts the invariants every Validate result keeps: sorted,
// no duplicates, a message each, and every path naming a value inside v.
func checkViolations(t testing.TB, v any, vs []Violation) {
	t.Helper()
	for i, x := range vs {
		if x.Message == "" {
			t.Errorf("violation %d has no message: %+v", i, x)
		}
		if _, ok := jsonpointer.Lookup(v, x.Path); !ok {
			t.Errorf("violation path %q does not exist in the value", x.Path)
		}
		if i > 0 {
			prev := vs[i-1]
			if c := comparePointers(prev.Path, x.Path); c > 0 || c == 0 && prev.Message >= x.Message {
				t.Errorf("violations out of order or duplicated: %v then %v", prev, x)
			}
		}
	}
}

// toolParams is a representative parameter schema used across tests.
func toolParams() *Node {
	return Params(map[string]*Node{
		"path":    String("file path").MinLen(1),
		"limit":   Integer("max lines").Min(1).Max(1000),
		"mode":    Enum("read", "stat"),
		"filters": Array(Object(map[string]*Node{"glob": String(""), "neg": Boolean("")}, []string{"glob"}, true), "").MaxCount(3),
		"target":  OneOf(String("a name"), Object(map[string]*Node{"id": Integer("")}, []string{"id"}, true)),
		"meta":    JSON("free-form"),
	}, "path")
}

func TestValidateReportsEveryViolation(t *testing.T) {
	s := mustCompile(t, toolParams(), Parameters)
	tests := []struct {
		name  string
		value string
		want  []string
	}{
		{"valid", `{"path":"a","limit":10,"mode":"read","filters":[{"glob":"*.go"}],"target":{"id":3},"meta":{"x":[1]}}`, nil},
		{"extra keys pass on the open root", `{"path":"a","whatever":{"nested":true}}`, nil},
		{"everything wrong", `{"limit":0,"mode":"write","filters":[{"neg":1},{"glob":"x","extra":true},{},{"glob":"y"}],"target":7}`, []string{
			`at root: missing required property "path"`,
			`at /filters: must have at most 3 items, got 4`,
			`at /filters/0: missing required property "glob"`,
			`at /filters/0/neg: expected boolean, got number 1`,
			`at /filters/1/extra: unexpected property "extra" (allowed: "glob", "neg")`,
			`at /filters/2: missing required property "glob"`,
			`at /limit: must be >= 1, got 0`,
			`at /mode: must be one of "read", "stat"`,
			`at /target: matches none of the 2 oneOf alternatives (0: expected string, got number 7; 1: expected object, got number 7)`,
		}},
		{"required key present as null is not missing", `{"path":null}`, []string{`at /path: expected string, got null`}},
		{"type mismatch at the root", `[]`, []string{`at root: expected object, got array`}},
		{"string length counts code points", `{"path":""}`, []string{`at /path: must be at least 1 characters long, got 0`}},
		{"oneOf branch detail names sub-paths", `{"path":"a","target":{"id":"x"}}`, []string{
			`at /target: matches none of the 2 oneOf alternatives (0: expected string, got object; 1: at /target/id: expected integer, got string)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := decode(t, tt.value)
			vs := s.Validate(v)
			if got := messages(vs); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			checkViolations(t, v, vs)
		})
	}
}

func TestIndexesSortNumerically(t *testing.T) {
	s := mustCompile(t, Array(Integer(""), ""), Value)
	items := make([]any, 12)
	for i := range items {
		items[i] = "x"
	}
	vs := s.Validate(items)
	if len(vs) != 12 || vs[1].Path != "/1" || vs[2].Path != "/2" || vs[11].Path != "/11" {
		t.Errorf("paths out of numeric order: %v", vs)
	}
}

func TestOneOfIsExactlyOne(t *testing.T) {
	s := mustCompile(t, OneOf(Number(""), Integer("")), Value)
	tests := []struct {
		value any
		want  string
	}{
		{json.Number("1.5"), ""},
		{json.Number("3"), "at root: matches more than one alternative (0 and 1); exactly one must match"},
		{"x", "at root: matches none of the 2 oneOf alternatives (0: expected number, got string; 1: expected integer, got string)"},
	}
	for _, tt := range tests {
		if got := Format(s.Validate(tt.value)); got != tt.want {
			t.Errorf("Validate(%v) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

func TestIntegers(t *testing.T) {
	s := mustCompile(t, Integer(""), Value)
	for _, v := range []any{
		json.Number("3"), json.Number("3.0"), json.Number("-0"), json.Number("1e2"), json.Number("2.50e1"),
		json.Number("123456789012345678901234567890"), json.Number("-123456789012345678901234567890.000"),
		3.0, float32(4), 5, int8(-1), int32(7), int64(math.MaxInt64), uint(1), uint8(2), uint32(3), uint64(math.MaxUint64), 1e300,
	} {
		if vs := s.Validate(v); vs != nil {
			t.Errorf("Validate(%T %v) = %v, want valid", v, v, vs)
		}
	}
	for _, v := range []any{json.Number("1.5"), json.Number("123456789012345678901234567890.5"), 0.1, float32(0.5), json.Number("1e-1")} {
		if vs := s.Validate(v); len(vs) != 1 || !strings.HasPrefix(vs[0].Message, "expected integer, got number") {
			t.Errorf("Validate(%T %v) = %v, want one integer violation", v, v, vs)
		}
	}
	bounded := mustCompile(t, Integer("").Min(0).Max(10), Value)
	want := "at root: must be >= 0, got -123456789012345678901234567890"
	if got := Format(bounded.Validate(json.Number("-123456789012345678901234567890"))); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	want = "at root: must be <= 10, got 123456789012345678901234567890"
	if got := Format(bounded.Validate(json.Number("123456789012345678901234567890"))); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestUncheckedContainersAreOnlyTypeChecked(t *testing.T) {
	s := mustCompile(t, Params(map[string]*Node{
		"obj": Object(nil, nil, false),
		"arr": Array(nil, ""),
	}), Parameters)
	if vs := s.Validate(decode(t, `{"obj":{"a":[1,{"b":null}],"c":"d"},"arr":[1,"x",{},[],null]}`)); vs != nil {
		t.Errorf("untyped contents rejected: %v", vs)
	}
	want := []string{`at /arr: expected array, got object`, `at /obj: expected object, got array`}
	if got := messages(s.Validate(decode(t, `{"obj":[],"arr":{}}`))); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDefaultsAreNeverAppliedAndValuesNeverMutated(t *testing.T) {
	s := mustCompile(t, Params(map[string]*Node{
		"limit": Integer("").WithDefault(10),
		"opts":  Object(map[string]*Node{"deep": Boolean("").WithDefault(true)}, nil, true).WithDefault(map[string]any{"deep": true}),
		"tags":  Array(String("").WithDefault("x"), "").WithDefault([]any{"a"}),
	}), Parameters)
	if !strings.Contains(string(s.JSON()), `"default":10`) {
		t.Errorf("default not rendered: %s", s.JSON())
	}
	for _, src := range []string{`{}`, `{"opts":{}}`, `{"tags":[]}`, `{"opts":{"deep":"no","x":1},"tags":[1,null],"limit":"ten"}`} {
		v := decode(t, src)
		before := decode(t, src)
		s.Validate(v)
		if !reflect.DeepEqual(v, before) {
			t.Errorf("Validate(%s) changed the value to %#v", src, v)
		}
	}
	if vs := s.Validate(decode(t, `{}`)); vs != nil {
		t.Errorf("optional properties with defaults: %v", vs)
	}
}

func TestNonJSONValuesAreViolations(t *testing.T) {
	s := mustCompile(t, JSON(""), Value)
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"struct", map[string]any{"a": struct{}{}}, "at /a: Go type struct {} is not a JSON value"},
		{"func", []any{1, func() {}}, "at /1: Go type func() is not a JSON value"},
		{"typed map", map[string]string{}, "at root: Go type map[string]string is not a JSON value"},
		{"int16", int16(1), "at root: Go type int16 is not a JSON value"},
		{"NaN", math.NaN(), "at root: NaN is not a JSON number"},
		{"Inf", []any{math.Inf(-1)}, "at /0: -Inf is not a JSON number"},
		{"float32 Inf", float32(math.Inf(1)), "at root: +Inf is not a JSON number"},
		{"hex literal", json.Number("0x10"), `at root: invalid JSON number "0x10"`},
		{"fraction literal", json.Number("1/2"), `at root: invalid JSON number "1/2"`},
		{"empty literal", json.Number(""), `at root: invalid JSON number ""`},
		{"leading zero", json.Number("01"), `at root: invalid JSON number "01"`},
		{"huge exponent", json.Number("1e999999"), "at root: number exponent is beyond ±10000"},
		{"overflowing exponent", json.Number("1e99999999999999999999999"), "at root: number exponent is beyond ±10000"},
		{"long literal", json.Number(strings.Repeat("9", 1001)), "at root: number literal is longer than 1000 characters"},
		{"cyclic", cyclic, "at " + strings.Repeat("/self", maxValueDepth) + ": value is nested deeper than 10000 levels (or is cyclic)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(s.Validate(tt.v)); got != tt.want {
				t.Errorf("got %q\nwant %q", truncate(got), truncate(tt.want))
			}
		})
	}
	// Limits are generous: these are ordinary numbers.
	for _, v := range []any{json.Number("1e10000"), json.Number("-0.000e-10000"), json.Number(strings.Repeat("9", 1000))} {
		if vs := mustCompile(t, Number("").Min(0), Value).Validate(v); vs != nil {
			t.Errorf("Validate(%.20s…) = %v", v, vs)
		}
	}
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:100] + "…" + s[len(s)-100:]
	}
	return s
}

func TestValidateOnNilSchema(t *testing.T) {
	var s *Schema
	if vs := s.Validate(1); len(vs) != 1 {
		t.Errorf("nil schema: %v", vs)
	}
}

func TestViolationRendering(t *testing.T) {
	vs := []Violation{{Path: "", Message: "m1"}, {Path: "/a/0", Message: "m2"}}
	if got, want := Format(vs), "at root: m1; at /a/0: m2"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	if got := Format(nil); got != "" {
		t.Errorf("Format(nil) = %q", got)
	}
}

func TestConcurrentValidation(t *testing.T) {
	s := mustCompile(t, toolParams(), Parameters)
	bad := decode(t, `{"limit":0,"filters":[{"x":1}]}`)
	want := Format(s.Validate(bad))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if got := Format(s.Validate(bad)); got != want {
					t.Errorf("concurrent result %q, want %q", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

var validateSchemas = []string{
	`{"properties":{"a":{"type":"string","minLength":2,"pattern":"^[a-z]+$"},"n":{"type":"integer","minimum":0,"exclusiveMaximum":100},"o":{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"],"additionalProperties":false}},"required":["a"]}`,
	`{"oneOf":[{"type":"array","items":{"type":"number"},"maxItems":3},{"type":"object","additionalProperties":true},{"type":"null"}]}`,
	`{"type":"array","items":{"oneOf":[{"type":"string","enum":["a","b"]},{"type":"array","items":{"type":"integer"},"minItems":1}]}}`,
	`{"description":"any","enum":[1,"x",null,{"k":[true]}]}`,
	`{"type":"object","properties":{"__proto__":{"type":"object","properties":{},"additionalProperties":false},"~/":{"const":"a/b"}},"additionalProperties":false}`,
}

func FuzzValidate(f *testing.F) {
	var compiled []*Schema
	for i, src := range validateSchemas {
		kind := Value
		if i == 0 {
			kind = Parameters
		}
		compiled = append(compiled, mustCompileJSON(f, src, kind))
	}
	std, err := CompileStandard([]byte(`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer","multipleOf":3}]},"b":{"$ref":"#/$defs/b"}},"patternProperties":{"^x":{"type":"null"}},"additionalProperties":false,"$defs":{"b":{"type":"array","uniqueItems":true,"contains":{"const":1}}}}`))
	if err != nil {
		f.Fatal(err)
	}
	compiled = append(compiled, std)
	for _, seed := range []string{
		`{"a":"ab","n":5,"o":{"x":true}}`, `{"a":1,"n":-1,"o":{"y":1},"extra":null}`, `[1,2.5,3,4]`, `null`, `{"k":1}`,
		`["a",["1"],[],"c",[1.0,2]]`, `{"k":[true]}`, `{"__proto__":{"x":1},"~/":"a/b","z":0}`, `{"a":"x","b":[1,1],"x1":null,"q":0}`,
		`123456789012345678901234567890`, `-0`, `1e400`, `"\ud800"`, `{"a":{"a":{"a":[[[[]]]]}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeJSON(data)
		if err != nil {
			return
		}
		before, _ := json.Marshal(v)
		for _, s := range compiled {
			vs := s.Validate(v)
			checkViolations(t, v, vs)
			if again := s.Validate(v); !reflect.DeepEqual(vs, again) {
				t.Fatalf("Validate is not deterministic: %v then %v", vs, again)
			}
		}
		if after, _ := json.Marshal(v); string(after) != string(before) {
			t.Fatalf("Validate mutated the value: %s -> %s", before, after)
		}
	})
}

func TestPropertiesNamedLikeKeywords(t *testing.T) {
	pair := func() *Node {
		return Object(map[string]*Node{"a": Integer(""), "b": Integer("")}, []string{"a", "b"}, true)
	}
	s := mustCompile(t, Params(map[string]*Node{
		"oneOf": pair(), "anyOf": pair(), "not": pair(), "required": pair(), chunkKeyword: pair(), "type": pair(),
	}), Parameters)
	v := decode(t, `{"oneOf":{"a":"x","b":"y"},"anyOf":{},"not":{"a":1,"b":2,"c":3},"required":null,"`+chunkKeyword+`":{"a":1.5,"b":true},"type":{"a":1,"b":2}}`)
	want := []string{
		`at /anyOf: missing required property "a"`,
		`at /anyOf: missing required property "b"`,
		`at /not/c: unexpected property "c" (allowed: "a", "b")`,
		`at /oneOf/a: expected integer, got string`,
		`at /oneOf/b: expected integer, got string`,
		`at /required: expected object, got null`,
		`at /x-codemode-chunk/a: expected integer, got number 1.5`,
		`at /x-codemode-chunk/b: expected integer, got boolean`,
	}
	vs := s.Validate(v)
	if got := messages(vs); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	checkViolations(t, v, vs)
}

func TestPathsEscapeKeys(t *testing.T) {
	keys := []string{"a b", "100%", "%41", "é", "~", "a/b", "?#&"}
	props := map[string]*Node{}
	for _, k := range keys {
		props[k] = Integer("")
	}
	s := mustCompile(t, Object(props, nil, true), Value)
	v := map[string]any{"": 1, "extra %/~": 1}
	for _, k := range keys {
		v[k] = "x"
	}
	vs := s.Validate(v)
	hint := ` (allowed: "%41", "100%", "?#&", "a b", "a/b", "~", "é")`
	want := []string{
		`at /: unexpected property ""` + hint,
		`at /%41: expected integer, got string`,
		`at /100%: expected integer, got string`,
		`at /?#&: expected integer, got string`,
		`at /a b: expected integer, got string`,
		`at /a~1b: expected integer, got string`,
		`at /extra %~1~0: unexpected property "extra %/~"` + hint,
		`at /~0: expected integer, got string`,
		`at /é: expected integer, got string`,
	}
	if got := messages(vs); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	checkViolations(t, v, vs)
}
