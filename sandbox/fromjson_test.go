package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// refFromJSON is the decoder fromJSON replaced, on encoding/json's token stream: the reference
// fromJSON must agree with.
func refFromJSON(rt *goja.Runtime, data []byte) (goja.Value, error) {
	type frame struct {
		obj    *goja.Object
		items  []any
		key    string
		hasKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	var root goja.Value
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if root == nil || len(stack) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return root, nil
		}
		if err != nil {
			return nil, err
		}
		if root != nil {
			return nil, errors.New("data after the JSON value")
		}
		var v goja.Value
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{obj: rt.NewObject()})
				continue
			case '[':
				stack = append(stack, frame{})
				continue
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f.obj != nil {
				v = f.obj
			} else {
				v = rt.NewArray(f.items...)
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].obj != nil && !stack[n-1].hasKey {
				stack[n-1].key, stack[n-1].hasKey = t, true
				continue
			}
			v = rt.ToValue(t)
		case json.Number:
			f, err := strconv.ParseFloat(string(t), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, err
			}
			v = rt.ToValue(f)
		case bool:
			v = rt.ToValue(t)
		case nil:
			v = goja.Null()
		}
		if len(stack) == 0 {
			root = v
			continue
		}
		top := &stack[len(stack)-1]
		if top.obj == nil {
			top.items = append(top.items, v)
			continue
		}
		if err := top.obj.DefineDataProperty(top.key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
		top.hasKey = false
	}
}

// dumpValue describes v exactly: kinds, key order, own prototypes, the bits of numbers and
// the UTF-16 code units of strings.
func dumpValue(b *strings.Builder, rt *goja.Runtime, v goja.Value) {
	switch {
	case goja.IsNull(v):
		b.WriteString("null")
	case goja.IsString(v):
		fmt.Fprintf(b, "s%q", v.String())
		s := v.(goja.String)
		for i := 0; i < s.Length(); i++ {
			fmt.Fprintf(b, ".%x", s.CharAt(i))
		}
	case goja.IsNumber(v):
		fmt.Fprintf(b, "n%x", math.Float64bits(v.ToFloat()))
	default:
		o, ok := v.(*goja.Object)
		if !ok {
			fmt.Fprintf(b, "b%v", v.ToBoolean())
			return
		}
		if o.ClassName() == "Array" {
			b.WriteString("[")
			n := o.Get("length").ToInteger()
			for i := int64(0); i < n; i++ {
				dumpValue(b, rt, o.Get(strconv.FormatInt(i, 10)))
				b.WriteString(",")
			}
			b.WriteString("]")
			return
		}
		fmt.Fprintf(b, "{%s proto=%v ", o.ClassName(), o.Prototype() == rt.NewObject().Prototype())
		for _, k := range o.GetOwnPropertyNames() {
			fmt.Fprintf(b, "%q:", k)
			dumpValue(b, rt, o.Get(k))
			b.WriteString(",")
		}
		b.WriteString("}")
	}
}

func checkFromJSON(t *testing.T, data []byte) {
	t.Helper()
	r := newRun(&Program{}, noTools{}, Options{}.withDefaults())
	want, werr := refFromJSON(r.rt, data)
	for round := 0; round < 2; round++ { // the second round reuses the run's scratch and keys
		got, gerr := r.fromJSON(data)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: error %v, want %v", data, gerr, werr)
		}
		if werr != nil {
			return
		}
		var wb, gb strings.Builder
		dumpValue(&wb, r.rt, want)
		dumpValue(&gb, r.rt, got)
		if wb.String() != gb.String() {
			t.Fatalf("%q:\n got %s\nwant %s", data, gb.String(), wb.String())
		}
	}
}

func TestFromJSON(t *testing.T) {
	for _, s := range []string{
		`{"a":[1,2,{"b":null}]}`, `-0`, `[-0, 0, -0.0, 0e5, -0e-5]`, `1e400`, `-1e400`, `1e-400`,
		`{"__proto__":1}`, `{"__proto__":{"x":1}}`, `{"a":1,"a":2,"b":3,"a":4}`, ` [ 1 , "x" , true , false , null ] `,
		`"\u0000\b\f\n\r\t\"\\\/"`, `"\ud800"`, `"\udc00\ud800"`, `"\ud83d\ude00"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`,
		"\"\xff\xfeok\"", "\"caf\xc3\xa9\"", "\"\xed\xa0\x80\"", `"é\n"`, `123456789012345`, `1234567890123456`,
		`12345678901234567890`, `9007199254740993`, `0.1`, `1.5e3`, `-12E-2`, `[[],{},[[{}]]]`, `{"":""}`,
		`{"0":1,"1":2,"a":3}`, `[`, `{"a"}`, `{"a":}`, `01`, `1.`, `"\x"`, `"\u12"`, `nul`, `1 2`, `{} x`, ` `,
		`[1,]`, `{"a":1,}`, "\"a\tb\"", `tru`, `[1e]`, `-`, `"` + strings.Repeat("k", 100) + `"`,
	} {
		checkFromJSON(t, []byte(s))
	}
}

// FuzzFromJSON checks fromJSON against the encoding/json token decoder it replaced: the same
// texts accepted, the same values built.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud800"`, `-0`, `1e400`, `{"__proto__":1}`, `[`, `{"a":1,"a":2}`, "\"\xff\"", `[{"k":1},{"k":"\u00e9"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if jsonDepth(data) > 64 {
			return // dumpValue recurses; deep values are TestSettlementValueChecks' concern
		}
		checkFromJSON(t, data)
	})
}

// TestSettlementValueChecks pins how a tool's value is refused: nesting past MaxDataDepth says
// so (whether or not the text is otherwise valid), other invalid text is not valid JSON.
func TestSettlementValueChecks(t *testing.T) {
	nested := func(depth int, close bool) string {
		s := strings.Repeat("[", depth) + "0"
		if close {
			s += strings.Repeat("]", depth)
		}
		return s
	}
	tests := []struct{ value, want string }{
		{nested(MaxDataDepth, true), "10000"},
		{nested(MaxDataDepth+1, true), "INVALID_TOOL_OUTPUT: the tool's value nests deeper than 10000 levels"},
		{nested(MaxDataDepth+1, false), "INVALID_TOOL_OUTPUT: the tool's value nests deeper than 10000 levels"},
		{nested(MaxDataDepth, false), "INVALID_TOOL_OUTPUT: the tool's value is not valid JSON"},
		{`{"a":}`, "INVALID_TOOL_OUTPUT: the tool's value is not valid JSON"},
	}
	for _, tt := range tests {
		host := newFakeHost("v")
		host.handle = func(c Call, settle func(Settlement)) { settle(Settlement{Value: []byte(tt.value)}) }
		res := runJS(t, `try { let x = await tools.v(), d = 0; while (Array.isArray(x)) { d++; x = x[0] } return String(d) } catch (e) { return e.code + ": " + e.message }`, host)
		if res.Err != nil || string(res.Value) != quoteJSON(tt.want) {
			t.Errorf("value %.20q…: got %s %v, want %q", tt.value, res.Value, res.Err, tt.want)
		}
	}
}
