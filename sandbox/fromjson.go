package sandbox

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/internal/jsontext"
)

var errInvalidJSON = errors.New("invalid JSON")

// jsonFrame is an array or object fromJSON is filling.
type jsonFrame struct {
	obj   *goja.Object // the object being filled; nil for an array
	start int          // an array's first element in run.jsonItems
	key   string       // an object's key awaiting its value
}

// fromJSON builds the JavaScript value of JSON text, iteratively, with JSON.parse semantics:
// objects get own data properties (a "__proto__" key included; later duplicates win), numbers
// are IEEE doubles (-0 kept; beyond the range, ±Infinity), strings are decoded as
// encoding/json decodes them (invalid UTF-8 and lone surrogates become U+FFFD). It accepts
// exactly what json.Valid accepts and never calls into the program's code.
func (r *run) fromJSON(data []byte) (goja.Value, error) {
	if !json.Valid(data) {
		return nil, errInvalidJSON
	}
	// The text is valid from here on: the scan below only tells its tokens apart.
	stack, items := r.scratch.jsonStack[:0], r.scratch.jsonItems[:0]
	i := jsontext.SkipSpace(data, 0)
	for {
		var v goja.Value
		switch data[i] {
		case '{':
			i = jsontext.SkipSpace(data, i+1)
			if data[i] == '}' {
				v, i = r.rt.NewObject(), i+1
				break
			}
			var key string
			key, i = r.jsonKey(data, i)
			stack = append(stack, jsonFrame{obj: r.rt.NewObject(), key: key})
			continue
		case '[':
			i = jsontext.SkipSpace(data, i+1)
			if data[i] == ']' {
				v, i = r.rt.NewArray(), i+1
				break
			}
			stack = append(stack, jsonFrame{start: len(items)})
			continue
		case '"':
			var s string
			s, i = r.jsonString(data, i, false)
			v = r.rt.ToValue(s)
		case 't':
			v, i = r.rt.ToValue(true), i+len("true")
		case 'f':
			v, i = r.rt.ToValue(false), i+len("false")
		case 'n':
			v, i = goja.Null(), i+len("null")
		default:
			var f float64
			f, i = jsonNumber(data, i)
			v = r.rt.ToValue(f)
		}
		// v is complete: store it in its container, and close each container it completes.
		for {
			if len(stack) == 0 {
				r.scratch.jsonStack, r.scratch.jsonItems = stack, items
				return v, nil
			}
			top := &stack[len(stack)-1]
			if top.obj != nil {
				if err := top.obj.DefineDataProperty(top.key, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
					clear(items)
					r.scratch.jsonStack, r.scratch.jsonItems = stack[:0], items[:0]
					return nil, err
				}
			} else {
				items = append(items, v)
			}
			i = jsontext.SkipSpace(data, i)
			if data[i] == ',' {
				i = jsontext.SkipSpace(data, i+1)
				if top.obj != nil {
					top.key, i = r.jsonKey(data, i)
				}
				break
			}
			i++ // '}' or ']'
			if top.obj != nil {
				v = top.obj
			} else {
				v = r.rt.NewArray(items[top.start:]...)
				clear(items[top.start:]) // the scratch keeps no value alive
				items = items[:top.start]
			}
			*top = jsonFrame{}
			stack = stack[:len(stack)-1]
		}
	}
}

// jsonKey reads the object key at data[i] and the colon after it, and returns the key with
// the index of the value.
func (r *run) jsonKey(data []byte, i int) (string, int) {
	key, i := r.jsonString(data, i, true)
	return key, jsontext.SkipSpace(data, jsontext.SkipSpace(data, i)+1)
}

// maxInternedKey and maxInternedKeys bound the object keys a run keeps to share between the
// values it decodes (records repeat their keys).
const (
	maxInternedKey  = 64
	maxInternedKeys = 1024
)

// jsonString decodes the string literal at data[i] and returns it with the index past it.
// Plain keys are interned in the run.
func (r *run) jsonString(data []byte, i int, key bool) (string, int) {
	start, plain := i+1, true
	j := start
	for ; data[j] != '"'; j++ {
		if c := data[j]; c == '\\' {
			plain = false
			j++ // the escaped byte cannot end the literal
		} else if c >= utf8.RuneSelf {
			plain = false
		}
	}
	raw := data[start:j]
	if !plain {
		return unquoteJSON(raw), j + 1
	}
	if !key || len(raw) > maxInternedKey {
		return string(raw), j + 1
	}
	if s, ok := r.scratch.jsonKeys[string(raw)]; ok {
		return s, j + 1
	}
	s := string(raw)
	if r.scratch.jsonKeys == nil {
		r.scratch.jsonKeys = make(map[string]string)
	}
	if len(r.scratch.jsonKeys) < maxInternedKeys {
		r.scratch.jsonKeys[s] = s
	}
	return s, j + 1
}

// unquoteJSON decodes the body of a valid JSON string literal as encoding/json does: escapes
// are decoded, a surrogate pair escaped as two \u escapes is one character, and a lone
// surrogate or a byte that is not UTF-8 becomes U+FFFD.
func unquoteJSON(raw []byte) string {
	b := make([]byte, 0, len(raw)+utf8.UTFMax)
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			e := raw[i+1]
			i += 2
			switch e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				ch := hex4(raw[i:])
				i += 4
				if utf16.IsSurrogate(ch) {
					if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
						if dec := utf16.DecodeRune(ch, hex4(raw[i+2:])); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 6
							break
						}
					}
					ch = utf8.RuneError
				}
				b = utf8.AppendRune(b, ch)
			default: // '"', '\\', '/'
				b = append(b, e)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			ch, size := utf8.DecodeRune(raw[i:])
			if ch == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, raw[i:i+size]...)
			}
			i += size
		}
	}
	return string(b)
}

// hex4 is the value of the four hex digits that start b (json.Valid checked them).
func hex4(b []byte) rune {
	var n rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		n = n<<4 | rune(c)
	}
	return n
}

// jsonNumber parses the number literal at data[i] and returns it with the index past it.
func jsonNumber(data []byte, i int) (float64, int) {
	start := i
	neg := data[i] == '-'
	if neg {
		i++
	}
	var n uint64
	digits := 0
	for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
		n = n*10 + uint64(data[i]-'0')
		digits++
	}
	if digits <= 15 && (i == len(data) || data[i] != '.' && data[i] != 'e' && data[i] != 'E') {
		// An integer of up to 15 digits is exact as a double.
		f := float64(n)
		if neg {
			f = -f // "-0" is -0
		}
		return f, i
	}
	for i < len(data) && isNumberByte(data[i]) {
		i++
	}
	f, err := strconv.ParseFloat(string(data[start:i]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		panic(err) // unreachable: json.Valid accepted the text
	}
	return f, i // beyond the range, ±Inf, as JSON.parse makes it
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}
