package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/codemode/codemode/internal/jsontext"
)

// chunkKeyword is the private keyword that stands, inside one compiled chunk,
// for a subschema compiled as a separate chunk. It never reaches JSON().
const chunkKeyword = "x-codemode-chunk"

// chunkDepth is how many nesting levels one chunk holds. jsonschema/v5's
// compile cost grows with the cube of a document's depth; at 8 levels a chunk
// compiles cheaply, and per-level overhead dominates.
const chunkDepth = 8

// renderer writes the standard JSON Schema of a checked Node graph. With
// chunks nil it writes the whole document (JSON()); otherwise every node
// chunkDepth levels below a chunk's root starts a new chunk, and the parent
// holds {"x-codemode-chunk": index} in its place. Chunks are numbered in
// pre-order, so a child chunk always has a larger index than its parent.
type renderer struct {
	chunks *[][]byte
}

func (r renderer) chunk(n *Node) int {
	i := len(*r.chunks)
	*r.chunks = append(*r.chunks, nil)
	doc := r.node(nil, n, 0)
	(*r.chunks)[i] = doc
	return i
}

// child renders a subschema at depth levels below the current chunk root.
func (r renderer) child(b []byte, n *Node, depth int) []byte {
	if r.chunks != nil && depth >= chunkDepth {
		b = append(b, `{"`+chunkKeyword+`":`...)
		b = strconv.AppendInt(b, int64(r.chunk(n)), 10)
		return append(b, '}')
	}
	return r.node(b, n, depth)
}

// node writes n with a fixed key order: type, description, the type's
// keywords, enum, const, default. Properties are sorted by name.
func (r renderer) node(b []byte, n *Node, depth int) []byte {
	t := n.effectiveType()
	o := objectWriter{b: append(b, '{')}
	if t != TypeJSON && t != TypeOneOf {
		o.key("type")
		o.b = jsontext.AppendString(o.b, t)
	}
	if n.Description != "" {
		o.key("description")
		o.b = jsontext.AppendString(o.b, n.Description)
	}
	switch t {
	case TypeObject:
		if len(n.Properties) > 0 {
			o.key("properties")
			o.b = append(o.b, '{')
			for i, name := range sortedKeys(n.Properties) {
				if i > 0 {
					o.b = append(o.b, ',')
				}
				o.b = jsontext.AppendString(o.b, name)
				o.b = append(o.b, ':')
				o.b = r.child(o.b, n.Properties[name], depth+1)
			}
			o.b = append(o.b, '}')
		}
		if len(n.Required) > 0 {
			o.key("required")
			o.b = append(o.b, '[')
			for i, name := range n.Required {
				if i > 0 {
					o.b = append(o.b, ',')
				}
				o.b = jsontext.AppendString(o.b, name)
			}
			o.b = append(o.b, ']')
		}
		if n.AdditionalProperties != nil {
			o.key("additionalProperties")
			o.b = strconv.AppendBool(o.b, *n.AdditionalProperties)
		}
	case TypeArray:
		if n.Items != nil {
			o.key("items")
			o.b = r.child(o.b, n.Items, depth+1)
		}
		o.int("minItems", n.MinItems)
		o.int("maxItems", n.MaxItems)
	case TypeString:
		o.int("minLength", n.MinLength)
		o.int("maxLength", n.MaxLength)
		if n.Pattern != "" {
			o.key("pattern")
			o.b = jsontext.AppendString(o.b, n.Pattern)
		}
	case TypeNumber, TypeInteger:
		o.float("minimum", n.Minimum)
		o.float("exclusiveMinimum", n.ExclusiveMinimum)
		o.float("maximum", n.Maximum)
		o.float("exclusiveMaximum", n.ExclusiveMaximum)
	case TypeOneOf:
		o.key("oneOf")
		o.b = append(o.b, '[')
		for i, branch := range n.OneOf {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = r.child(o.b, branch, depth+1)
		}
		o.b = append(o.b, ']')
	}
	if n.Enum != nil {
		o.key("enum")
		o.b = appendValue(o.b, n.Enum)
	}
	if n.HasConst || n.Const != nil {
		o.key("const")
		o.b = appendValue(o.b, n.Const)
	}
	if n.HasDefault || n.Default != nil {
		o.key("default")
		o.b = appendValue(o.b, n.Default)
	}
	return append(o.b, '}')
}

// objectWriter writes the members of a JSON object after its '{'.
type objectWriter struct {
	b    []byte
	more bool
}

func (o *objectWriter) key(k string) {
	if o.more {
		o.b = append(o.b, ',')
	}
	o.more = true
	o.b = jsontext.AppendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *objectWriter) int(k string, v *int) {
	if v != nil {
		o.key(k)
		o.b = strconv.AppendInt(o.b, int64(*v), 10)
	}
}

func (o *objectWriter) float(k string, v *float64) {
	if v != nil {
		o.key(k)
		o.b = appendFloat(o.b, *v, 64)
	}
}

// appendValue writes an acceptable JSON value (see valueWalker) compactly;
// object keys are sorted and json.Number literals are kept verbatim.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return jsontext.AppendString(b, x)
	case json.Number:
		return append(b, x...)
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	case int, int8, int32, int64, uint, uint8, uint32, uint64:
		return fmt.Append(b, x) // an integer's %v is its decimal form
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, k)
			b = append(b, ':')
			b = appendValue(b, x[k])
		}
		return append(b, '}')
	}
	// Unreachable for checked values; keep the output valid JSON regardless.
	return append(b, "null"...)
}

// appendFloat formats f the way encoding/json does.
func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// quoteJSON returns s as a JSON string literal, for messages.
func quoteJSON(s string) string { return string(jsontext.AppendString(nil, s)) }

// preview renders an acceptable value compactly for a message, truncated.
func preview(v any) string {
	const limit = 60
	b := appendValue(nil, v)
	if len(b) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return string(b[:cut]) + "…"
	}
	return string(b)
}
