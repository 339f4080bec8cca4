package sandbox

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// Messages recorded from Node 24's JSON.parse.
func TestJSONParseErrorsInNodesWords(t *testing.T) {
	tests := []struct{ text, want string }{
		{"{bad", "Expected property name or '}' in JSON at position 1 (line 1 column 2)"},
		{`{"a":1,}`, "Expected double-quoted property name in JSON at position 7 (line 1 column 8)"},
		{"abc", `Unexpected token 'a', "abc" is not valid JSON`},
		{"", "Unexpected end of JSON input"},
		{"   ", "Unexpected end of JSON input"},
		{"[1,]", `Unexpected token ']', "[1,]" is not valid JSON`},
		{`{"a":1} x`, "Unexpected non-whitespace character after JSON at position 8 (line 1 column 9)"},
		{`"abc`, "Unterminated string in JSON at position 4 (line 1 column 5)"},
		{`{"a" 1}`, "Expected ':' after property name in JSON at position 5 (line 1 column 6)"},
		{"[1 2]", "Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)"},
		{`{"a":1 "b":2}`, "Expected ',' or '}' after property value in JSON at position 7 (line 1 column 8)"},
		{`"\x"`, "Bad escaped character in JSON at position 2 (line 1 column 3)"},
		{"\"a\nb\"", "Bad control character in string literal in JSON at position 2 (line 1 column 3)"},
		{"-", "No number after minus sign in JSON at position 1 (line 1 column 2)"},
		{"1.", "Unterminated fractional number in JSON at position 2 (line 1 column 3)"},
		{"01", "Unexpected number in JSON at position 1 (line 1 column 2)"},
		{"1e+", "Exponent part is missing a number in JSON at position 3 (line 1 column 4)"},
		{`"\u12"`, "Bad Unicode escape in JSON at position 5 (line 1 column 6)"},
		{"undefined", `"undefined" is not valid JSON`},
		{"{", "Expected property name or '}' in JSON at position 1 (line 1 column 2)"},
		{`{"a":1,"b" "c"}`, "Expected ':' after property name in JSON at position 11 (line 1 column 12)"},
		{`[{"a":1,"b" 2}]`, "Expected ':' after property name in JSON at position 12 (line 1 column 13)"},
		{`{"a":1,"b"`, "Expected ':' after property name in JSON at position 10 (line 1 column 11)"},
		{`{"a":1,"b" true}`, "Expected ':' after property name in JSON at position 11 (line 1 column 12)"},
		{"[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,x]", `Unexpected token 'x', ...",18,19,20,x]" is not valid JSON`},
		{"[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,x,17,18,19,20,21,22,23]", `Unexpected token 'x', ...",13,14,15,x,17,18,19"... is not valid JSON`},
		{"[x,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18]", `Unexpected token 'x', "[x,2,3,4,5,"... is not valid JSON`},
		{"x                   ", `Unexpected token 'x', "x                   " is not valid JSON`},
		{"x                    ", `Unexpected token 'x', "x         "... is not valid JSON`},
		{"\"😀\"x", "Unexpected non-whitespace character after JSON at position 4 (line 1 column 5)"},
		{"\"😀\u0001\"", "Bad control character in string literal in JSON at position 3 (line 1 column 4)"},
		{"[1]\r\n x", "Unexpected non-whitespace character after JSON at position 6 (line 2 column 2)"},
		{"[1]\r x", "Unexpected non-whitespace character after JSON at position 5 (line 2 column 2)"},
		{"[1,\n\n\n2 x", "Expected ',' or ']' after array element in JSON at position 8 (line 4 column 3)"},
	}
	for _, tt := range tests {
		src := "try { JSON.parse(" + jsString(tt.text) + "); return 'parsed' } catch (e) { return e.name + ': ' + e.message }"
		wantValue(t, runJS(t, src, nil), jsonQuote(t, "SyntaxError: "+tt.want))
	}
	// A reviver's own SyntaxError is the reviver's, not renamed.
	wantValue(t, runJS(t, `try { JSON.parse('{"a":1}', () => { throw new SyntaxError("mine") }) } catch (e) { return e.message }`, nil), `"mine"`)
}

func jsonQuote(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The diagnosis agrees with a JSON parser on what is valid, and never panics.
func FuzzJSONDiagnosis(f *testing.F) {
	for _, s := range []string{"{bad", `{"a":[1,2,{"b":null}]}`, "01", `"\u12"`, "[1,]", "tru", "-0.5e+3", "\"😀\""} {
		f.Add(s)
	}
	rt := goja.New()
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
			return
		}
		msg, bad := jsonDiagnosis(rt.ToValue(s).(goja.String))
		if valid := json.Valid([]byte(s)); valid == bad {
			t.Fatalf("json.Valid(%q) = %v, but the diagnosis says %q", s, valid, msg)
		}
	})
}

// Recorded from Node 20 and 24, which agree.
func TestJSONCircularPath(t *testing.T) {
	tests := []struct{ src, want string }{
		{`const a = {}; a.self = a; JSON.stringify(a)`, "Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    --- property 'self' closes the circle"},
		{`const a = {b: {c: []}}; a.b.c.push(a); JSON.stringify(a)`, "Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    |     property 'b' -> object with constructor 'Object'\n    |     property 'c' -> object with constructor 'Array'\n    --- index 0 closes the circle"},
		{`const a = {b: {c: {d: {e: {f: {}}}}}}; a.b.c.d.e.f.g = a; JSON.stringify(a)`, "Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    |     property 'b' -> object with constructor 'Object'\n    |     property 'c' -> object with constructor 'Object'\n    |     ...\n    |     property 'f' -> object with constructor 'Object'\n    --- property 'g' closes the circle"},
		{`const a = Object.create(null); a.me = new Proxy({}, {}); a.me.x = a; JSON.stringify([a])`, "Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    |     property 'me' -> object with constructor 'Object'\n    --- property 'x' closes the circle"},
	}
	for _, tt := range tests {
		src := "try { " + tt.src + "; return 'no error' } catch (e) { return e.message }"
		wantValue(t, runJS(t, src, nil), jsonQuote(t, tt.want))
	}
	// A constructor getter that throws: what it throws is what the program catches, as in V8.
	wantValue(t, runJS(t, `const a = {get constructor() { throw 1 }}; a.a = a; try { JSON.stringify(a) } catch (e) { return e }`, nil), `1`)
	res := runJS(t, `const p = {kids: []}; p.kids.push({p}); return JSON.stringify(p)`, nil)
	wantFailure(t, res, KindRuntime, "TypeError: Converting circular structure to JSON\n    --> starting at object with constructor 'Object'\n    |     property 'kids' -> object with constructor 'Array'\n    |     index 0 -> object with constructor 'Object'\n    --- property 'p' closes the circle")
}
