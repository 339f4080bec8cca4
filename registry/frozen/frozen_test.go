package frozen

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestParseKeepsNumbersVerbatim(t *testing.T) {
	v, err := ParseString(` { "big": 123456789012345678901234567890, "z": -0, "f": 1.50e3 } `)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"big":123456789012345678901234567890,"z":-0,"f":1.50e3}`
	if v.String() != want {
		t.Fatalf("got %s want %s", v, want)
	}
	tree, err := v.Decode()
	if err != nil {
		t.Fatal(err)
	}
	m := tree.(map[string]any)
	if m["big"].(json.Number).String() != "123456789012345678901234567890" || m["z"].(json.Number).String() != "-0" {
		t.Fatalf("decode lost precision: %#v", m)
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{"", " ", "{", `{"a":1} {}`, "nope", `{"a":}`, "\x00"} {
		if _, err := ParseString(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

func TestAccessorsCopy(t *testing.T) {
	v := MustParse(`{"a":[1,2]}`)
	b := v.Bytes()
	b[0] = 'X'
	tree, _ := v.Decode()
	tree.(map[string]any)["a"] = "mutated"
	if v.String() != `{"a":[1,2]}` {
		t.Fatalf("value changed through an accessor: %s", v)
	}
}

func TestSnapshot(t *testing.T) {
	v, err := Snapshot(map[string]any{"b": 1, "a": "<x>"})
	if err != nil || v.String() != `{"a":"<x>","b":1}` {
		t.Fatalf("got %s, %v", v, err)
	}
	for name, bad := range map[string]any{
		"nan":  math.NaN(),
		"func": func() {},
		"chan": make(chan int),
	} {
		if _, err := Snapshot(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	type cyc struct{ Next *cyc }
	c := &cyc{}
	c.Next = c
	if _, err := Snapshot(c); err == nil {
		t.Error("cycle accepted")
	}
	if _, err := Snapshot(Value{}); err == nil {
		t.Error("absent value accepted")
	}
	raw, err := Snapshot(json.RawMessage(` [1, -0] `))
	if err != nil || raw.String() != `[1,-0]` {
		t.Fatalf("raw: %s %v", raw, err)
	}
}

func TestKindAndIndentDeep(t *testing.T) {
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	v, err := ParseString(deep)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind() != "array" || !strings.HasPrefix(v.Indent(), "[\n  [") {
		t.Fatalf("kind %q", v.Kind())
	}
	for in, k := range map[string]string{`"s"`: "string", `1`: "number", `-1`: "number", `true`: "boolean", `null`: "null", `{}`: "object"} {
		if got := MustParse(in).Kind(); got != k {
			t.Errorf("Kind(%s)=%s", in, got)
		}
	}
	if (Value{}).Kind() != "" || !(Value{}).IsZero() {
		t.Error("zero value")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `-0`, `[1e400]`, `"\ud800"`, `{"a":{"a":{}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseString(s)
		if err != nil {
			return
		}
		// A frozen value re-parses to itself and decodes.
		w, err := Parse(v.Bytes())
		if err != nil || !w.Equal(v) {
			t.Fatalf("round trip: %q -> %q (%v)", v, w, err)
		}
		if _, err := v.Decode(); err != nil && !strings.Contains(err.Error(), "depth") {
			t.Fatalf("decode of valid JSON failed: %v", err)
		}
	})
}

func TestIndentMatchesEncodingJSONWhenShallow(t *testing.T) {
	for _, in := range []string{`{"a":[1,2,{"b":null}],"c":"x,y:{}","d":{},"e":[],"f":"q\"}"}`, `[]`, `"s"`, `[[[]]]`} {
		var want strings.Builder
		v := MustParse(in)
		b, _ := json.MarshalIndent(json.RawMessage(in), "", "  ")
		want.Write(b)
		if got := v.Indent(); got != want.String() {
			t.Errorf("Indent(%s) =\n%s\nwant\n%s", in, got, want.String())
		}
	}
}

func TestIndentIsLinear(t *testing.T) {
	const depth = 18000 // 9,000 nested objects: under encoding/json's 10,000 limit
	v := MustParse(strings.Repeat(`{"a":`, depth/2) + "1" + strings.Repeat("}", depth/2))
	if n := len(v.Indent()); n > 4*v.Len() {
		t.Fatalf("indented %d bytes of %d: not linear", n, v.Len())
	}
}

func TestParseErrorsSayWhere(t *testing.T) {
	for in, want := range map[string]string{
		"not json":       "invalid JSON at line 1, column 2: invalid character 'o' in literal null",
		"{\n  \"a\": x}": "invalid JSON at line 2, column 8: invalid character 'x' looking for beginning of value",
		`{"a":1,}`:       "invalid JSON at line 1, column 8: invalid character '}'",
	} {
		_, err := ParseString(in)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func TestStringSharesTheText(t *testing.T) {
	v := MustParse(`{"a":[1,2]}`)
	if n := testing.AllocsPerRun(100, func() { _ = v.String() }); n != 0 {
		t.Fatalf("String allocated %v times", n)
	}
	if (Value{}).String() != "" {
		t.Fatal("the absent value's text is not empty")
	}
}

// FuzzParseStringMatchesParse: ParseString compacts valid text in place and
// must give exactly what Parse gives, errors included.
func FuzzParseStringMatchesParse(f *testing.F) {
	for _, s := range []string{` {"a" : [1, 2 ,{"b":" x\" y "}]} `, "\t\"a b\"\n", `{"a":1,}`, ``, `  `, `nul`, `[1 2]`, `"\\" `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := ParseString(s)
		want, werr := Parse([]byte(s))
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) || !got.Equal(want) {
			t.Fatalf("ParseString(%q) = %s, %v; Parse = %s, %v", s, got, gerr, want, werr)
		}
	})
}

// encoderSnapshot is what Snapshot wrote before its plain-tree path.
func encoderSnapshot(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimRight(buf.String(), "\n"), nil
}

func TestSnapshotPlainTrees(t *testing.T) {
	var nilMap map[string]any
	var nilSlice []any
	for _, v := range []any{
		map[string]any{"sum": 3.0, "b": []any{nil, true, "x<&>\u2028\u2029\x01\b\f\n\r\t\"\\", json.Number("-0.5e+7")}, "a": map[string]any{}},
		[]any{1e21, 1e-7, 123456789.0, -0.0, 0.1, 5e-324, math.MaxFloat64},
		map[string]any{"n": -3, "i8": int8(-8), "i16": int16(16), "i32": int32(-32), "i64": int64(math.MinInt64), "u": uint(7), "u8": uint8(8), "u16": uint16(16), "u32": uint32(32), "u64": uint64(math.MaxUint64)},
		"bad \xff utf-8", json.Number(""), nilMap, nilSlice, []any{},
	} {
		want, err := encoderSnapshot(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Snapshot(v)
		if err != nil || got.String() != want {
			t.Errorf("Snapshot(%#v) = %s, %v; want %s", v, got, err, want)
		}
		if b, ok := appendPlain(nil, v, 0); !ok || string(b) != want {
			t.Errorf("%#v did not take the plain path", v)
		}
	}
	for _, v := range []any{json.Number("01"), math.NaN(), []any{math.Inf(1)}, map[string]any{"f": func() {}}} {
		if _, ok := appendPlain(nil, v, 0); ok {
			t.Errorf("%#v took the plain path", v)
		}
		if _, err := Snapshot(v); err == nil {
			t.Errorf("Snapshot(%#v) did not fail", v)
		}
	}
}

// FuzzSnapshotPlainMatchesEncoder: the plain-tree path writes exactly what
// the encoder writes.
func FuzzSnapshotPlainMatchesEncoder(f *testing.F) {
	f.Add(`{"a":[1,2.5,-0,1e300,"x"],"b":{"c":null,"d":true}}`, true, "s\u2028\xff<", 1.5)
	f.Add(`[0.000001,1e21,123e-20]`, false, "", 1e21)
	f.Fuzz(func(t *testing.T, text string, useNumber bool, s string, x float64) {
		dec := json.NewDecoder(strings.NewReader(text))
		if useNumber {
			dec.UseNumber()
		}
		var tree any
		if dec.Decode(&tree) != nil {
			tree = nil
		}
		i := int64(math.Float64bits(x))
		ints := []any{int(i), int8(i), int16(i), int32(i), i, uint(i), uint8(i), uint16(i), uint32(i), uint64(i)}
		for _, v := range []any{tree, map[string]any{s: tree, "s": s, "x": x, "n": json.Number(s), "i": ints}, []any{s, x}} {
			b, ok := appendPlain(nil, v, 0)
			want, err := encoderSnapshot(v)
			if ok && (err != nil || string(b) != want) {
				t.Fatalf("%#v: plain %s, encoder %s (%v)", v, b, want, err)
			}
		}
	})
}
