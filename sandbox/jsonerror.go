package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/dop251/goja"
)

// JSON.parse errors in Node 24's words. goja's JSON.parse reports Go's decoder messages
// ("invalid character 'b' looking for beginning of object key string"); a model knows V8's
// ("Expected property name or '}' in JSON at position 1"). When the parse fails, jsonDiagnosis
// reads the text the way V8's JSON parser does and names the first error as V8 would, with
// positions in UTF-16 code units. It reports ok=false for text it finds valid (so a reviver's
// own SyntaxError is never renamed).

// jsonText is the text being diagnosed: a goja string read by UTF-16 code unit.
type jsonText struct {
	s   goja.String
	n   int
	pos int
}

// jsonDiag is a diagnosis; it unwinds the scan as a panic value.
type jsonDiag struct{ msg string }

const (
	jsonContextChars    = 10 // characters of context on each side of an unexpected token
	jsonMinContextInput = 21 // shorter texts are quoted whole
)

func jsonDiagnosis(s goja.String) (msg string, ok bool) {
	t := &jsonText{s: s, n: s.Length()}
	defer func() {
		if x := recover(); x != nil {
			d, isDiag := x.(jsonDiag)
			if !isDiag {
				panic(x)
			}
			msg, ok = d.msg, true
		}
	}()
	t.space()
	t.value()
	t.space()
	if t.pos < t.n {
		panic(jsonDiag{"Unexpected non-whitespace character after JSON at " + t.position()})
	}
	return "", false
}

func (t *jsonText) at() int {
	if t.pos >= t.n {
		return -1
	}
	return int(t.s.CharAt(t.pos))
}

func (t *jsonText) space() {
	for t.pos < t.n {
		switch t.s.CharAt(t.pos) {
		case ' ', '\t', '\n', '\r':
			t.pos++
		default:
			return
		}
	}
}

func (t *jsonText) failAt(what string) {
	panic(jsonDiag{what + " in JSON at " + t.position()})
}

// position names pos as Node 24 does: "position 7 (line 2 column 3)", lines ending at \n, \r
// or \r\n, columns counted in UTF-16 code units from 1.
func (t *jsonText) position() string {
	line, start := 1, 0
	for i := 0; i < t.pos; i++ {
		switch t.s.CharAt(i) {
		case '\r':
			if i+1 < t.pos && t.s.CharAt(i+1) == '\n' {
				i++
			}
			line, start = line+1, i+1
		case '\n':
			line, start = line+1, i+1
		}
	}
	return fmt.Sprintf("position %d (line %d column %d)", t.pos, line, t.pos-start+1)
}

// unexpected is V8's message for the token at pos when no particular one was expected.
func (t *jsonText) unexpected() {
	c := t.at()
	switch {
	case c < 0:
		panic(jsonDiag{"Unexpected end of JSON input"})
	case c == '-' || c >= '0' && c <= '9':
		t.failAt("Unexpected number")
	case c == '"':
		t.failAt("Unexpected string")
	}
	whole := t.s.String()
	switch whole {
	case "NaN", "Infinity", "undefined", "[object Object]":
		panic(jsonDiag{fmt.Sprintf("%q is not valid JSON", whole)})
	}
	token := string(utf16.Decode([]uint16{uint16(c)}))
	var quoted string
	switch {
	case t.n < jsonMinContextInput:
		quoted = `"` + whole + `"`
	case t.pos < jsonContextChars:
		quoted = `"` + t.s.Substring(0, t.pos+jsonContextChars).String() + `"...`
	case t.pos < t.n-jsonContextChars:
		quoted = `..."` + t.s.Substring(t.pos-jsonContextChars, t.pos+jsonContextChars).String() + `"...`
	default:
		quoted = `..."` + t.s.Substring(t.pos-jsonContextChars, t.n).String() + `"`
	}
	panic(jsonDiag{fmt.Sprintf("Unexpected token '%s', %s is not valid JSON", token, quoted)})
}

func (t *jsonText) value() {
	switch c := t.at(); {
	case c == '"':
		t.str()
	case c == '-' || c >= '0' && c <= '9':
		t.number()
	case c == '{':
		t.object()
	case c == '[':
		t.array()
	case c == 't':
		t.literal("true")
	case c == 'f':
		t.literal("false")
	case c == 'n':
		t.literal("null")
	default:
		t.unexpected()
	}
}

func (t *jsonText) literal(word string) {
	for i := 0; i < len(word); i++ {
		if t.at() != int(word[i]) {
			t.unexpected()
		}
		t.pos++
	}
}

func (t *jsonText) digits() int {
	start := t.pos
	for c := t.at(); c >= '0' && c <= '9'; c = t.at() {
		t.pos++
	}
	return t.pos - start
}

func (t *jsonText) number() {
	if t.at() == '-' {
		t.pos++
		if c := t.at(); c < '0' || c > '9' {
			t.failAt("No number after minus sign")
		}
	}
	if t.at() == '0' {
		t.pos++
		if c := t.at(); c >= '0' && c <= '9' {
			t.failAt("Unexpected number")
		}
	} else {
		t.digits()
	}
	if t.at() == '.' {
		t.pos++
		if t.digits() == 0 {
			t.failAt("Unterminated fractional number")
		}
	}
	if c := t.at(); c == 'e' || c == 'E' {
		t.pos++
		if c := t.at(); c == '+' || c == '-' {
			t.pos++
		}
		if t.digits() == 0 {
			t.failAt("Exponent part is missing a number")
		}
	}
}

func (t *jsonText) str() {
	t.pos++ // the opening quote
	for {
		c := t.at()
		switch {
		case c < 0:
			t.failAt("Unterminated string")
		case c == '"':
			t.pos++
			return
		case c < 0x20:
			t.failAt("Bad control character in string literal")
		case c == '\\':
			t.pos++
			switch t.at() {
			case -1:
				panic(jsonDiag{"Unexpected end of JSON input"})
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for i := 0; i < 4; i++ {
					t.pos++
					if !isHex(t.at()) {
						t.failAt("Bad Unicode escape")
					}
				}
			default:
				t.failAt("Bad escaped character")
			}
		}
		t.pos++
	}
}

func isHex(c int) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func (t *jsonText) object() {
	if t.open('}') {
		return
	}
	for first := true; ; first = false {
		if t.at() != '"' {
			if first {
				t.failAt("Expected property name or '}'")
			}
			t.failAt("Expected double-quoted property name")
		}
		t.str()
		t.space()
		if t.at() != ':' {
			t.failAt("Expected ':' after property name") // Node 20 named only the token after a later key
		}
		t.pos++
		t.space()
		t.value()
		if !t.more('}', "Expected ',' or '}' after property value") {
			return
		}
	}
}

func (t *jsonText) array() {
	if t.open(']') {
		return
	}
	for {
		t.value()
		if !t.more(']', "Expected ',' or ']' after array element") {
			return
		}
	}
}

// open steps over an object's or array's opening bracket and the space after it, and
// reports whether its end follows at once (stepped over too).
func (t *jsonText) open(end int) (empty bool) {
	t.pos++
	t.space()
	if t.at() == end {
		t.pos++
		return true
	}
	return false
}

// more steps over the space after a member or element, then over a ',' and the space
// after it (true: another follows) or over end (false); anything else fails with
// missing.
func (t *jsonText) more(end int, missing string) bool {
	t.space()
	switch t.at() {
	case ',':
		t.pos++
		t.space()
		return true
	case end:
		t.pos++
		return false
	}
	t.failAt(missing)
	return false
}

// JSON.stringify's circular-structure error with the path V8 gives it:
//
//	Converting circular structure to JSON
//	    --> starting at object with constructor 'Object'
//	    |     property 'b' -> object with constructor 'Object'
//	    --- property 'self' closes the circle
//
// goja says only the first line. The guard's replacer sees every value goja serializes, with
// its holder, in goja's depth-first order, so it keeps the chain of objects being serialized
// (jsonPath.visit); when goja refuses a cycle, the last object entered is one already on the
// chain.

// jsonCircular is goja's message, and V8's first line.
const jsonCircular = "Converting circular structure to JSON"

// V8 shows this many links of a long cycle after its start, then "...", then this many more.
const (
	jsonCycleHead = 2
	jsonCycleTail = 1
)

type jsonLink struct {
	obj   *goja.Object
	key   string
	index bool // key is an array index
}

// jsonPath is the chain of objects a JSON.stringify is inside, from the root.
type jsonPath []jsonLink

// visit records that holder[key] serializes as v: the chain is cut back to holder (the
// serialization of anything after it has ended), and v, an object, is entered.
func (p *jsonPath) visit(holder goja.Value, key, v goja.Value) {
	h, _ := holder.(*goja.Object)
	for len(*p) > 0 && (h == nil || !(*p)[len(*p)-1].obj.SameAs(h)) {
		*p = (*p)[:len(*p)-1]
	}
	if o, ok := v.(*goja.Object); ok {
		*p = append(*p, jsonLink{obj: o, key: key.String(), index: h != nil && isArray(h)})
	}
}

// circular returns V8's message when err is goja's circular-structure TypeError and the
// chain closes a cycle.
func (p jsonPath) circular(rt *goja.Runtime, err error) (string, bool) {
	var ex *goja.Exception
	if !errors.As(err, &ex) || len(p) < 2 {
		return "", false
	}
	e, ok := ex.Value().(*goja.Object)
	if !ok || e.ClassName() != "Error" || e.Get("message") == nil || e.Get("message").String() != jsonCircular {
		return "", false
	}
	last := p[len(p)-1]
	start := -1
	for i, l := range p[:len(p)-1] {
		if l.obj.SameAs(last.obj) {
			start = i
			break
		}
	}
	if start < 0 {
		return "", false
	}
	var b strings.Builder
	b.WriteString(jsonCircular)
	b.WriteString("\n    --> starting at object with constructor '" + v8ConstructorName(rt, p[start].obj) + "'")
	middle := p[start+1 : len(p)-1]
	for i, l := range middle {
		if len(middle) > jsonCycleHead+jsonCycleTail && i >= jsonCycleHead && i < len(middle)-jsonCycleTail {
			if i == jsonCycleHead {
				b.WriteString("\n    |     ...")
			}
			continue
		}
		b.WriteString("\n    |     " + l.describe() + " -> object with constructor '" + v8ConstructorName(rt, l.obj) + "'")
	}
	b.WriteString("\n    --- " + last.describe() + " closes the circle")
	return b.String(), true
}

func (l jsonLink) describe() string {
	if l.index {
		return "index " + l.key
	}
	return "property '" + l.key + "'"
}

// v8ConstructorName names o's constructor as V8's message does: the name of the constructor
// it inherits, "Object" when there is none to read (a null prototype, a proxy, a getter that
// throws).
func v8ConstructorName(rt *goja.Runtime, o *goja.Object) string {
	name := "Object"
	if o.ExportType() == proxyType {
		return name
	}
	rt.Try(func() {
		if c, ok := o.Get("constructor").(*goja.Object); ok {
			if n := c.Get("name"); n != nil && goja.IsString(n) && n.String() != "" {
				name = n.String()
			}
		}
	})
	return name
}
