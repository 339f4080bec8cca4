package schema

import (
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on values, chosen so that no input can make validation crash or
// stall: jsonschema/v5 parses every number it compares into a big.Rat (it
// panics on literals big.Rat rejects, and is slow on ones like 1e999999) and
// recurses once per nesting level.
const (
	// maxValueDepth bounds the container nesting of a validated value; a
	// cyclic Go value is reported as too deep. encoding/json's own limit is
	// the same.
	maxValueDepth = 10000
	// maxEmbeddedDepth bounds the nesting of enum, const and default values
	// inside a schema.
	maxEmbeddedDepth = 1000
	// maxNumberLen and maxExponent bound a number literal: big.Rat parsing is
	// quadratic in digits and exponential in the exponent.
	maxNumberLen = 1000
	maxExponent  = 10000
)

// isNumber reports whether v has one of the Go types accepted as a JSON number.
func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int8, int32, int64, uint, uint8, uint32, uint64:
		return true
	}
	return false
}

// numberProblem explains why the number v is not acceptable ("" when it is).
func numberProblem(v any) string {
	switch x := v.(type) {
	case json.Number:
		return literalProblem(string(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprintf("%v is not a JSON number", x)
		}
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Sprintf("%v is not a JSON number", x)
		}
	}
	return ""
}

// literalProblem checks s against the JSON number grammar and the size limits.
func literalProblem(s string) string {
	if len(s) > maxNumberLen {
		return fmt.Sprintf("number literal is longer than %d characters", maxNumberLen)
	}
	invalid := func() string { return fmt.Sprintf("invalid JSON number %s", quoteJSON(s)) }
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return invalid()
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return invalid()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start, exp := i, 0
		for i < len(s) && isDigit(s[i]) {
			if exp <= maxExponent {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == start {
			return invalid()
		}
		if exp > maxExponent {
			return fmt.Sprintf("number exponent is beyond ±%d", maxExponent)
		}
	}
	if i != len(s) {
		return invalid()
	}
	return ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIntegral reports whether the number v (with no numberProblem) has no
// fractional part. Literals are decided exactly, beyond float64 precision.
func isIntegral(v any) bool {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		return ok && r.IsInt()
	case float64:
		return x == math.Trunc(x)
	case float32:
		return float64(x) == math.Trunc(float64(x))
	}
	return true
}

// jsonOK reports, without allocating, whether v is a tree of JSON values
// within the limits. It is the fast path of Validate; valueProblems explains
// a false answer.
func jsonOK(v any, depth int) bool {
	switch x := v.(type) {
	case nil, bool, string, int, int8, int32, int64, uint, uint8, uint32, uint64:
		return true
	case json.Number, float64, float32:
		return numberProblem(x) == ""
	case []any:
		return depth < maxValueDepth && elemsOK(slices.Values(x), depth+1)
	case map[string]any:
		return depth < maxValueDepth && elemsOK(maps.Values(x), depth+1)
	}
	return false
}

// elemsOK reports whether every element of a container is jsonOK at depth.
func elemsOK(elems iter.Seq[any], depth int) bool {
	for e := range elems {
		if !jsonOK(e, depth) {
			return false
		}
	}
	return true
}

// valueProblem is one reason a Go value is not acceptable JSON data.
type valueProblem struct {
	tokens []string // path from the value's root, unescaped
	msg    string
}

// valueWalker collects valueProblems. strict also rejects strings and keys
// that are not valid UTF-8 (schema data, which must survive rendering).
type valueWalker struct {
	maxDepth int
	strict   bool
	deepHint string // appended to the too-deep message
	limit    int    // stop after this many problems
	path     []string
	out      []valueProblem
}

func (w *valueWalker) report(msg string) {
	w.out = append(w.out, valueProblem{tokens: append([]string(nil), w.path...), msg: msg})
}

func (w *valueWalker) full() bool { return len(w.out) >= w.limit }

func (w *valueWalker) walk(v any, depth int) {
	if w.full() {
		return
	}
	switch x := v.(type) {
	case nil, bool, int, int8, int32, int64, uint, uint8, uint32, uint64:
	case string:
		if w.strict && !utf8.ValidString(x) {
			w.report("string is not valid UTF-8")
		}
	case json.Number, float64, float32:
		if p := numberProblem(x); p != "" {
			w.report(p)
		}
	case []any:
		if depth >= w.maxDepth {
			w.report(fmt.Sprintf("value is nested deeper than %d levels%s", w.maxDepth, w.deepHint))
			return
		}
		for i, e := range x {
			w.path = append(w.path, strconv.Itoa(i))
			w.walk(e, depth+1)
			w.path = w.path[:len(w.path)-1]
		}
	case map[string]any:
		if depth >= w.maxDepth {
			w.report(fmt.Sprintf("value is nested deeper than %d levels%s", w.maxDepth, w.deepHint))
			return
		}
		for _, k := range sortedKeys(x) {
			w.path = append(w.path, k)
			if w.strict && !utf8.ValidString(k) {
				w.report("key is not valid UTF-8")
			}
			w.walk(x[k], depth+1)
			w.path = w.path[:len(w.path)-1]
		}
	default:
		w.report(fmt.Sprintf("Go type %T is not a JSON value", v))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonTypeOf names the JSON type of an acceptable value.
func jsonTypeOf(v any) string {
	switch v.(type) {
	case nil:
		return TypeNull
	case bool:
		return TypeBoolean
	case string:
		return TypeString
	case []any:
		return TypeArray
	case map[string]any:
		return TypeObject
	}
	if isNumber(v) {
		return TypeNumber
	}
	return fmt.Sprintf("%T", v)
}

// hasType reports whether the acceptable value v has DSL type t.
func hasType(v any, t string) bool {
	switch t {
	case TypeJSON:
		return true
	case TypeInteger:
		return isNumber(v) && isIntegral(v)
	}
	return jsonTypeOf(v) == t
}

// pointer renders unescaped tokens as a JSON Pointer.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

// escapeToken escapes one JSON Pointer reference token.
func escapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}
