package schema

import (
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Violation is one independent way a value fails a schema.
type Violation struct {
	Path    string // JSON Pointer of the offending value: "" is the root, "/a/0/b" below it
	Message string
}

// String renders "at /a/0/b: message", or "at root: message".
func (v Violation) String() string {
	if v.Path == "" {
		return "at root: " + v.Message
	}
	return "at " + v.Path + ": " + v.Message
}

// Format joins violations with "; ", for INVALID_ARGS messages. It lists
// every violation it is given.
func Format(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// maxSummary bounds the text describing why each oneOf/anyOf alternative failed.
const maxSummary = 1000

// Validate checks v and returns every independent violation, sorted by path
// (array indexes numerically) then message; nil when v is valid. v is decoded
// JSON as encoding/json produces it with UseNumber (map[string]any, []any,
// json.Number, string, bool, nil); float64, float32 and the int and uint
// types of 8, 32 and 64 bits are accepted as numbers too. Anything else
// (other Go types, NaN, malformed json.Number literals, numbers over 1000
// characters or with exponents beyond ±10000, nesting deeper than 10000
// levels, cyclic values) is reported as a violation at its path rather than
// validated. Validate never panics and never modifies v; defaults are not
// applied.
//
// Paths: a missing required property is reported at its object; an extra
// property of a closed object at the property itself; everything else at the
// offending value. A value failing every alternative of a oneOf is one
// violation summarising each alternative's first problems.
func (s *Schema) Validate(v any) (vs []Violation) {
	defer func() {
		if r := recover(); r != nil {
			vs = []Violation{{Message: fmt.Sprintf("internal validation failure: %v", r)}}
		}
	}()
	if s == nil || s.root == nil {
		return []Violation{{Message: "no schema to validate against"}}
	}
	if !jsonOK(v, 0) {
		w := valueWalker{maxDepth: maxValueDepth, limit: 1000}
		w.walk(v, 0)
		vs = make([]Violation, len(w.out))
		for i, p := range w.out {
			vs[i] = Violation{Path: pointer(p.tokens), Message: p.msg}
		}
		return sortViolations(vs)
	}
	err := s.root.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	f := flattener{s: s, value: v}
	f.walk(ve, "")
	return sortViolations(f.out)
}

// flattener turns jsonschema's cause tree into violations at absolute paths.
type flattener struct {
	s     *Schema
	value any
	out   []Violation
}

func (f *flattener) add(path, msg string) {
	f.out = append(f.out, Violation{Path: path, Message: msg})
}

// walk visits e, whose instance location is relative to prefix (the path of
// the chunk boundary it belongs to).
func (f *flattener) walk(e *jsonschema.ValidationError, prefix string) {
	loc := prefix + instancePointer(e.InstanceLocation)
	sch, kw := f.locate(e.AbsoluteKeywordLocation)
	switch {
	case f.s.dsl && kw == chunkKeyword && len(e.Causes) > 0:
		for _, c := range e.Causes {
			f.walk(c, loc)
		}
	case (kw == "oneOf" || kw == "anyOf") && len(e.Causes) > 0:
		f.add(loc, f.noneMatched(e, prefix, loc, kw))
	case len(e.Causes) > 0 && kw != "minContains" && kw != "contains":
		for _, c := range e.Causes {
			f.walk(c, prefix)
		}
	default:
		f.leaf(e, loc, sch, kw)
	}
}

// locate splits an absolute keyword location into the subschema it belongs
// to (nil if unknown) and the keyword ("" for an error of the subschema
// itself, such as a false schema).
func (f *flattener) locate(abs string) (*jsonschema.Schema, string) {
	if sch, ok := f.s.index[abs]; ok {
		return sch, ""
	}
	hash := strings.IndexByte(abs, '#')
	slash := strings.LastIndexByte(abs, '/')
	if slash <= hash {
		return nil, ""
	}
	return f.s.index[abs[:slash]], abs[slash+1:]
}

// instancePointer converts jsonschema's instance location (JSON Pointer
// tokens additionally URL-path-escaped) to a plain JSON Pointer.
func instancePointer(loc string) string {
	if !strings.Contains(loc, "%") {
		return loc
	}
	toks := strings.Split(loc, "/")
	for i, t := range toks {
		if u, err := url.PathUnescape(t); err == nil {
			toks[i] = u
		}
	}
	return strings.Join(toks, "/")
}

// leaf adds the violations of one failed keyword, worded from the schema
// that failed and the value at loc; unknown cases keep jsonschema's message.
func (f *flattener) leaf(e *jsonschema.ValidationError, loc string, sch *jsonschema.Schema, kw string) {
	val, found := lookup(f.value, loc)
	if sch == nil || !found {
		f.add(loc, e.Message)
		return
	}
	switch kw {
	case "":
		if sch.Always != nil && !*sch.Always {
			f.add(loc, "no value is allowed here")
			return
		}
	case "type":
		got := jsonTypeOf(val)
		if got == TypeNumber {
			got += " " + preview(val)
		}
		f.add(loc, fmt.Sprintf("expected %s, got %s", strings.Join(sch.Types, " or "), got))
		return
	case "required":
		if obj, ok := val.(map[string]any); ok {
			n := len(f.out)
			for _, name := range sch.Required {
				if _, ok := obj[name]; !ok {
					f.add(loc, "missing required property "+quoteJSON(name))
				}
			}
			if len(f.out) > n {
				return
			}
		}
	case "additionalProperties":
		if obj, ok := val.(map[string]any); ok {
			n := len(f.out)
			hint := allowedHint(sch)
			for _, k := range sortedKeys(obj) {
				if !declared(sch, k) {
					f.add(loc+"/"+escapeToken(k), "unexpected property "+quoteJSON(k)+hint)
				}
			}
			if len(f.out) > n {
				return
			}
		}
	case "enum":
		f.add(loc, "must be "+oneOfValues(sch.Enum))
		return
	case "const":
		if len(sch.Constant) > 0 {
			f.add(loc, "must be "+preview(sch.Constant[0]))
			return
		}
	case "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum":
		bound, op := map[string]*big.Rat{"minimum": sch.Minimum, "exclusiveMinimum": sch.ExclusiveMinimum,
			"maximum": sch.Maximum, "exclusiveMaximum": sch.ExclusiveMaximum}[kw],
			map[string]string{"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[kw]
		if bound != nil {
			f.add(loc, fmt.Sprintf("must be %s %s, got %s", op, ratString(bound), preview(val)))
			return
		}
	case "minLength", "maxLength":
		if str, ok := val.(string); ok {
			limit, word := sch.MinLength, "least"
			if kw == "maxLength" {
				limit, word = sch.MaxLength, "most"
			}
			f.add(loc, fmt.Sprintf("must be at %s %d characters long, got %d", word, limit, utf8.RuneCountInString(str)))
			return
		}
	case "pattern":
		if sch.Pattern != nil {
			f.add(loc, "must match the pattern "+quoteJSON(sch.Pattern.String()))
			return
		}
	case "minItems", "maxItems":
		if list, ok := val.([]any); ok {
			limit, word := sch.MinItems, "least"
			if kw == "maxItems" {
				limit, word = sch.MaxItems, "most"
			}
			f.add(loc, fmt.Sprintf("must have at %s %d items, got %d", word, limit, len(list)))
			return
		}
	case "oneOf":
		var i, j int
		if _, err := fmt.Sscanf(e.Message, "valid against schemas at indexes %d and %d", &i, &j); err == nil {
			f.add(loc, fmt.Sprintf("matches more than one alternative (%d and %d); exactly one must match", i, j))
			return
		}
	case "not":
		f.add(loc, `must not match the schema under "not"`)
		return
	}
	f.add(loc, e.Message)
}

// declared reports whether additionalProperties leaves key k alone.
func declared(sch *jsonschema.Schema, k string) bool {
	if _, ok := sch.Properties[k]; ok {
		return true
	}
	for re := range sch.PatternProperties {
		if re.MatchString(k) {
			return true
		}
	}
	return false
}

// allowedHint names the declared properties, to help fix a misspelt key.
func allowedHint(sch *jsonschema.Schema) string {
	if len(sch.PatternProperties) > 0 {
		return ""
	}
	names := sortedKeys(sch.Properties)
	switch {
	case len(names) == 0:
		return " (the object allows no properties)"
	case len(names) > 20:
		return ""
	}
	for i, n := range names {
		names[i] = quoteJSON(n)
	}
	return " (allowed: " + strings.Join(names, ", ") + ")"
}

// oneOfValues renders an enum for a message: `"a"`, or `one of "a", "b"`.
func oneOfValues(values []any) string {
	if len(values) == 1 {
		return preview(values[0])
	}
	const shown = 10
	parts := make([]string, 0, shown+1)
	for i, v := range values {
		if i == shown {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, preview(v))
	}
	return "one of " + strings.Join(parts, ", ")
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return string(appendFloat(nil, f, 64))
}

// noneMatched describes a value at loc that failed every alternative of a
// oneOf or anyOf: each alternative with its first few violations (paths shown
// only when they lie below loc).
func (f *flattener) noneMatched(e *jsonschema.ValidationError, prefix, loc, kw string) string {
	const perBranch = 3
	var b strings.Builder
	fmt.Fprintf(&b, "matches none of the %d %s alternatives (", len(e.Causes), kw)
	for i, c := range e.Causes {
		if b.Len() > maxSummary {
			b.WriteString("; …")
			break
		}
		sub := flattener{s: f.s, value: f.value}
		sub.walk(c, prefix)
		vs := sortViolations(sub.out)
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d: ", i)
		for j, v := range vs {
			if j == perBranch {
				fmt.Fprintf(&b, ", and %d more", len(vs)-perBranch)
				break
			}
			if j > 0 {
				b.WriteString(", ")
			}
			if v.Path != loc {
				b.WriteString("at " + v.Path + ": ")
			}
			b.WriteString(v.Message)
		}
	}
	b.WriteString(")")
	return b.String()
}

// sortViolations sorts by path (numeric tokens numerically), then message,
// and drops duplicates.
func sortViolations(vs []Violation) []Violation {
	sort.SliceStable(vs, func(i, j int) bool {
		if c := comparePointers(vs[i].Path, vs[j].Path); c != 0 {
			return c < 0
		}
		return vs[i].Message < vs[j].Message
	})
	out := vs[:0]
	for _, v := range vs {
		if len(out) > 0 && v == out[len(out)-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}

func comparePointers(a, b string) int {
	if a == b {
		return 0
	}
	ta, tb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(ta) && i < len(tb); i++ {
		if c := compareTokens(ta[i], tb[i]); c != 0 {
			return c
		}
	}
	return len(ta) - len(tb)
}

func compareTokens(a, b string) int {
	if a == b {
		return 0
	}
	if isIndex(a) && isIndex(b) {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
	}
	return strings.Compare(a, b)
}

// isIndex reports whether t is an array index token: digits, no leading zero.
func isIndex(t string) bool {
	if t == "" || len(t) > 1 && t[0] == '0' {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !isDigit(t[i]) {
			return false
		}
	}
	return true
}
