package schema

import (
	"encoding/json"
	"testing"
)

// fastSchemas exercise every construct the fast path judges.
var fastSchemas = []string{
	`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
	`{"type":"object","additionalProperties":false,"properties":{"s":{"type":"string","minLength":2,"maxLength":4,"pattern":"^x"},"i":{"type":"integer","minimum":0,"maximum":10}}}`,
	`{"type":"object","properties":{"e":{"type":"string","enum":["a","b"]},"c":{"type":"boolean","const":true},"n":{"type":"null"}}}`,
	`{"type":"object","properties":{"arr":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","additionalProperties":true,"properties":{"k":{"type":"string"}},"required":["k"]}}}}`,
	`{"type":"object","properties":{"o":{"oneOf":[{"type":"string"},{"type":"number"}]},"one":{"oneOf":[{"type":"integer"},{"type":"number","minimum":5}]}}}`,
	`{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":1,"exclusiveMaximum":2},"any":{},"list":{"type":"array"}}}`,
}

// seedSchemas seeds f with every fast schema against a set of values, and
// extra ones, and returns the compiled schemas; schemaAt picks the fuzzed one.
func seedSchemas(f *testing.F, extra ...string) []*Schema {
	values := append([]string{`{"a":1,"b":2}`, `{"s":"xa","i":0}`, `{"e":"b","c":true}`, `{"arr":[{"k":""}]}`, `{"o":1}`, `{"x":1.9}`, `[]`, `null`}, extra...)
	for _, v := range values {
		for i := range fastSchemas {
			f.Add(i, v)
		}
	}
	return compiledSchemas(f)
}

func schemaAt(ss []*Schema, i int) *Schema {
	return ss[uint(i)%uint(len(ss))] // -i of the least int is negative
}

func compiledSchemas(t testing.TB) []*Schema {
	t.Helper()
	var out []*Schema
	for _, src := range fastSchemas {
		s, err := CompileJSON([]byte(src), Parameters)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		out = append(out, s)
	}
	return out
}

func TestFastPathTable(t *testing.T) {
	ss := compiledSchemas(t)
	cases := []struct {
		schema int
		value  string
		fast   bool // the fast path answers "valid"
		ok     bool // jsonschema's verdict
	}{
		{0, `{"a":1,"b":2.5}`, true, true},
		{0, `{"a":1,"b":2,"extra":[1,{"x":null}]}`, true, true}, // the root is open
		{0, `{"a":1}`, false, false},
		{0, `{"a":"1","b":2}`, false, false},
		{0, `{"a":1e400,"b":2}`, false, true},                          // a valid (huge) number: jsonschema decides
		{0, `{"a":123456789012345678901234567890,"b":1}`, false, true}, // too long to judge: jsonschema decides
		{1, `{"s":"xab","i":3}`, true, true},
		{1, `{"s":"ab"}`, false, false},
		{1, `{"i":3.0}`, false, true}, // 3.0 is an integer; the fast path leaves it to jsonschema
		{1, `{"i":11}`, false, false},
		{1, `{"z":1}`, false, false}, // closed
		{2, `{"e":"a","c":true,"n":null}`, true, true},
		{2, `{"e":"c"}`, false, false},
		{2, `{"c":false}`, false, false},
		{3, `{"arr":[{"k":"v","more":1}]}`, true, true},
		{3, `{"arr":[]}`, false, false},
		{3, `{"arr":[{"k":1}]}`, false, false},
		{4, `{"o":"s"}`, false, true},  // several branches: exactly-one is jsonschema's to judge
		{4, `{"one":7}`, false, false}, // matches both branches
		{5, `{"x":1.5,"any":{"a":[true]},"list":[1,"a",null]}`, true, true},
		{5, `{"x":1}`, false, false},
	}
	for _, tc := range cases {
		v := decode(t, tc.value)
		s := ss[tc.schema]
		if got := s.fast.check(v, 0) == valid; got != tc.fast {
			t.Errorf("schema %d %s: fast path valid=%v, want %v", tc.schema, tc.value, got, tc.fast)
		}
		if got := s.ValidText(tc.value); got != tc.fast {
			t.Errorf("schema %d %s: ValidText=%v, want %v", tc.schema, tc.value, got, tc.fast)
		}
		if got := len(s.Validate(v)) == 0; got != tc.ok {
			t.Errorf("schema %d %s: Validate ok=%v, want %v", tc.schema, tc.value, got, tc.ok)
		}
	}
}

// FuzzFastPathNeverAcceptsInvalid checks the fast path's one promise: when
// it says valid, jsonschema agrees.
func FuzzFastPathNeverAcceptsInvalid(f *testing.F) {
	ss := seedSchemas(f)
	f.Fuzz(func(t *testing.T, i int, value string) {
		s := schemaAt(ss, i)
		v, err := decodeJSON([]byte(value))
		if err != nil {
			return
		}
		if s.fast.check(v, 0) == valid && jsonOK(v, 0) {
			if err := s.compiled.root.Validate(v); err != nil {
				t.Fatalf("fast path accepted %s, jsonschema says %v", value, err)
			}
		}
	})
}

func TestValidTextUnsure(t *testing.T) {
	ss := compiledSchemas(t)
	for _, tc := range []struct {
		schema int
		text   string
		want   bool
	}{
		{0, ` {"a": 1 , "b" :2} `, true},
		{0, `{"a":1,"b":2}x`, false},         // not one value
		{0, `{"a":1,"b":2,}`, false},         // not JSON
		{0, `{"a":"x","a":1,"b":2}`, false},  // a duplicate must pass every time
		{0, `{"a":1,"b":2,"c":"\x"}`, false}, // a bad escape
		{1, `{"s":"x\u00e9"}`, true},         // escapes are decoded
		{1, `{"s":"\u0078\u00e9\u00e9"}`, true},
		{1, `{"s":"x\u00e9\u00e9\u00e9\u00e9"}`, false}, // five runes
		{2, `{"e":"\u0061"}`, true},
		{2, `{"e":"\u0063"}`, false},
		{3, `{"arr":[{"k":"v"},{"k":"w"},{"k":"x"},{"k":"y"}]}`, false}, // maxItems
		{5, `{"any":[[[{"a":-0.5e-3}]]]}`, true},
		{5, `{"any":[1e999]}`, false},
		{0, ``, false},
	} {
		if got := ss[tc.schema].ValidText(tc.text); got != tc.want {
			t.Errorf("schema %d %s: ValidText=%v, want %v", tc.schema, tc.text, got, tc.want)
		}
	}
}

// FuzzValidTextMatchesFastPath checks that judging the text is judging its
// decoded tree: for the canonical text of a value (no duplicate keys) the
// two agree, and whatever text ValidText accepts is JSON the tree check
// accepts.
func FuzzValidTextMatchesFastPath(f *testing.F) {
	ss := seedSchemas(f, `{"s":"x\u00e9"}`, `{"a":1,"a":"x","b":2}`)
	f.Fuzz(func(t *testing.T, i int, value string) {
		s := schemaAt(ss, i)
		v, err := decodeJSON([]byte(value))
		if s.ValidText(value) && (err != nil || !json.Valid([]byte(value)) || s.fast.check(v, 0) != valid) {
			t.Fatalf("ValidText accepted %s, which the fast path does not (decode error %v)", value, err)
		}
		if err != nil {
			return
		}
		canon, err := json.Marshal(v)
		if err != nil {
			return
		}
		if got, want := s.ValidText(string(canon)), s.fast.check(v, 0) == valid; got != want {
			t.Fatalf("%s: ValidText=%v, fast path on the tree=%v", canon, got, want)
		}
	})
}
