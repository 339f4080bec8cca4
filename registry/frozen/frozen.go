// Package frozen holds JSON values that cannot change once made.
//
// Arguments arrive as the model's raw string and tool bodies return Go values;
// both cross into the pipeline as a frozen Value: compact JSON text whose
// numbers keep their exact spelling (big integers and -0 survive), shared by
// every stage, the body, the log and the result, and never mutated because
// every accessor hands out a fresh copy.
package frozen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/codemode/codemode/internal/jsontext"
)

// Value is an immutable JSON value. The zero Value is "absent" (no value),
// distinct from JSON null.
type Value struct {
	raw []byte // compact JSON; never written after construction; nil when absent
}

// Null is the JSON null value.
var Null = Value{raw: []byte("null")}

// Parse freezes JSON text. It accepts exactly one JSON value (surrounding
// white space allowed) and keeps number spellings verbatim. The input is
// copied.
func Parse(data []byte) (Value, error) {
	var buf bytes.Buffer
	buf.Grow(len(data))
	if err := json.Compact(&buf, data); err != nil {
		// Compact does not say where; the checking decoder does.
		var se *json.SyntaxError
		if errors.As(json.Unmarshal(data, new(json.RawMessage)), &se) && se.Offset > 0 {
			line, col := position(data, se.Offset)
			return Value{}, fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, se)
		}
		return Value{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if buf.Len() == 0 {
		return Value{}, errors.New("invalid JSON: empty input")
	}
	return Value{raw: buf.Bytes()}, nil
}

// position turns a byte offset of data into a 1-based line and column (in
// bytes), the way an editor shows where JSON went wrong.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 1), int64(len(data))+1)
	before := data[:offset-1]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, len(before) - bytes.LastIndexByte(before, '\n')
}

// ParseString is Parse for a string.
func ParseString(s string) (Value, error) {
	raw := []byte(s) // the one copy: valid text is compacted in place
	if !json.Valid(raw) {
		return Parse(raw)
	}
	return Value{raw: compactValid(raw)}, nil
}

// closesString reports whether c, a byte inside a JSON string, is its closing quote;
// escaped carries a backslash over to the next byte.
func closesString(c byte, escaped *bool) bool {
	switch {
	case *escaped:
		*escaped = false
	case c == '\\':
		*escaped = true
	case c == '"':
		return true
	}
	return false
}

// compactValid elides the insignificant white space of valid JSON in place,
// as json.Compact does.
func compactValid(b []byte) []byte {
	n := 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			inString = !closesString(c, &escaped)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c == '"':
			inString = true
		}
		b[n] = c
		n++
	}
	return b[:n]
}

// MustParse is Parse for trusted literals (tests, tables); it panics on error.
func MustParse(s string) Value {
	v, err := ParseString(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Snapshot freezes a Go value by marshalling it to JSON. Values that are not
// JSON (channels, functions, NaN, cycles) are an error, never a panic.
// A json.RawMessage or Value is taken as is (after validation).
func Snapshot(v any) (val Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			val, err = Value{}, fmt.Errorf("value is not JSON: marshal panicked: %v", r)
		}
	}()
	switch x := v.(type) {
	case Value:
		if x.raw == nil {
			return Value{}, errors.New("value is absent")
		}
		return x, nil
	case json.RawMessage:
		return Parse(x)
	}
	if b, ok := appendPlain(make([]byte, 0, 64), v, 0); ok {
		return Value{raw: b}, nil
	}
	b, err := jsontext.Marshal(v)
	if err != nil {
		return Value{}, fmt.Errorf("value is not JSON: %w", err)
	}
	return Value{raw: b}, nil
}

// IsZero reports whether v is absent.
func (v Value) IsZero() bool { return v.raw == nil }

// Bytes returns a copy of the compact JSON text (nil when absent).
func (v Value) Bytes() []byte {
	if v.raw == nil {
		return nil
	}
	return bytes.Clone(v.raw)
}

// String returns the compact JSON text ("" when absent). It shares the
// value's memory, which is never written after construction, so it costs
// no copy.
func (v Value) String() string { return unsafe.String(unsafe.SliceData(v.raw), len(v.raw)) }

// Len is the size of the JSON text in bytes.
func (v Value) Len() int { return len(v.raw) }

// Equal reports whether two values have the same JSON text.
func (v Value) Equal(o Value) bool {
	return (v.raw == nil) == (o.raw == nil) && bytes.Equal(v.raw, o.raw)
}

// Decode returns a fresh decoded tree: map[string]any, []any, json.Number,
// string, bool or nil. Callers own the tree.
func (v Value) Decode() (any, error) {
	if v.raw == nil {
		return nil, errors.New("value is absent")
	}
	dec := json.NewDecoder(bytes.NewReader(v.raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// Unmarshal decodes the value into dst as encoding/json does.
func (v Value) Unmarshal(dst any) error {
	if v.raw == nil {
		return errors.New("value is absent")
	}
	return json.Unmarshal(v.raw, dst)
}

// MarshalJSON implements json.Marshaler (null when absent).
func (v Value) MarshalJSON() ([]byte, error) {
	if v.raw == nil {
		return []byte("null"), nil
	}
	return bytes.Clone(v.raw), nil
}

// Kind returns the JSON kind of the value's root: "object", "array",
// "string", "number", "boolean", "null", or "" when absent.
func (v Value) Kind() string {
	if len(v.raw) == 0 {
		return ""
	}
	switch v.raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// MaxIndentDepth is how deep Indent indents; deeper values are written
// compactly on one line, so output size stays linear in the input.
const MaxIndentDepth = 16

// Indent returns the value pretty-printed with two-space indentation, in
// linear time and size whatever the depth: containers nested deeper than
// MaxIndentDepth are written compactly.
func (v Value) Indent() string {
	if v.raw == nil {
		return ""
	}
	var b strings.Builder
	b.Grow(len(v.raw) * 2)
	depth := 0
	inString, escaped := false, false
	newline := func(d int) {
		b.WriteByte('\n')
		for i := 0; i < d; i++ {
			b.WriteString("  ")
		}
	}
	raw := v.raw
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inString {
			b.WriteByte(c)
			inString = !closesString(c, &escaped)
			continue
		}
		switch c {
		case '"':
			inString = true
			b.WriteByte(c)
		case '{', '[':
			depth++
			b.WriteByte(c)
			if i+1 < len(raw) && (raw[i+1] == '}' || raw[i+1] == ']') {
				continue // empty container stays {} or []
			}
			if depth <= MaxIndentDepth {
				newline(depth)
			}
		case '}', ']':
			if raw[i-1] != '{' && raw[i-1] != '[' && depth <= MaxIndentDepth {
				newline(depth - 1)
			}
			depth--
			b.WriteByte(c)
		case ',':
			b.WriteByte(c)
			if depth <= MaxIndentDepth {
				newline(depth)
			}
		case ':':
			b.WriteByte(c)
			if depth <= MaxIndentDepth {
				b.WriteByte(' ')
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
