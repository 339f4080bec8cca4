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

	"github.com/codemode/codemode/internal/jsonpointer"
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
	if s == nil {
		return []Violation{{Message: "no schema to validate against"}}
	}
	prog, err := s.program()
	if err != nil {
		return []Violation{{Message: "the schema itself is invalid: " + err.Error()}}
	}
	if prog == nil || prog.root == nil {
		return []Violation{{Message: "no schema to validate against"}}
	}
	if s.fast != nil && s.fast.check(v, 0) == valid {
		return nil
	}
	if !jsonOK(v, 0) {
		w := valueWalker{maxDepth: maxValueDepth, deepHint: " (or is cyclic)", limit: 1000}
		w.walk(v, 0)
		vs = make([]Violation, len(w.out))
		for i, p := range w.out {
			vs[i] = Violation{Path: pointer(p.tokens), Message: p.msg}
		}
		return sortViolations(vs)
	}
	err = prog.root.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	f := flattener{s: s, index: prog.index, value: v}
	f.walk(ve, "")
	return sortViolations(f.out)
}

// flattener turns jsonschema's cause tree into violations at absolute paths.
type flattener struct {
	s     *Schema
	index map[string]*jsonschema.Schema
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
	if e.Message == "" { // jsonschema's wrapper around several errors
		for _, c := range e.Causes {
			f.walk(c, prefix)
		}
		return
	}
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
// to (nil if unknown) and the keyword; the keyword is "" for a false schema,
// whose errors carry the schema's own location.
func (f *flattener) locate(abs string) (*jsonschema.Schema, string) {
	if sch, ok := f.index[abs]; ok && sch.Always != nil && !*sch.Always {
		return sch, ""
	}
	hash := strings.IndexByte(abs, '#')
	slash := strings.LastIndexByte(abs, '/')
	if slash <= hash {
		return nil, ""
	}
	return f.index[abs[:slash]], abs[slash+1:]
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
	val, found := jsonpointer.Lookup(f.value, loc)
	if sch == nil || !found {
		f.add(loc, e.Message)
		return
	}
	if !f.s.dsl && underPropertyNames(sch.Location) {
		// The instance is the property's name, not the value at loc.
		f.add(loc, "property name: "+e.Message)
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

// underPropertyNames reports whether a subschema location lies under a
// propertyNames keyword (not under a property that happens to be so named).
func underPropertyNames(location string) bool {
	_, frag, _ := strings.Cut(location, "#")
	toks := strings.Split(frag, "/")
	for i := 1; i < len(toks); i++ {
		if toks[i] == "propertyNames" && toks[i-1] != "properties" {
			return true
		}
	}
	return false
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
		sub := flattener{s: f.s, index: f.index, value: f.value}
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
				b.WriteString("at " + clip(v.Path) + ": ")
			}
			b.WriteString(clip(v.Message))
		}
	}
	b.WriteString(")")
	return b.String()
}

// clip shortens s to about maxClip bytes, so that summaries of nested
// alternatives stay small however deep the nesting.
func clip(s string) string {
	const maxClip = 300
	if len(s) <= maxClip {
		return s
	}
	cut := maxClip
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
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

// indexSchemas maps the Location of every subschema reachable from roots
// through exported fields to the subschema, so that violation messages can
// consult the schema that failed.
func indexSchemas(roots ...*jsonschema.Schema) map[string]*jsonschema.Schema {
	index := map[string]*jsonschema.Schema{}
	stack := append([]*jsonschema.Schema(nil), roots...)
	push := func(s *jsonschema.Schema) {
		if s != nil {
			stack = append(stack, s)
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, seen := index[s.Location]; seen {
			continue
		}
		index[s.Location] = s
		for _, sub := range []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.DynamicRef, s.Not, s.If, s.Then, s.Else,
			s.PropertyNames, s.UnevaluatedProperties, s.Items2020, s.Contains, s.UnevaluatedItems, s.ContentSchema} {
			push(sub)
		}
		for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
			for _, sub := range list {
				push(sub)
			}
		}
		for _, sub := range s.Properties {
			push(sub)
		}
		for _, sub := range s.PatternProperties {
			push(sub)
		}
		for _, sub := range s.DependentSchemas {
			push(sub)
		}
		for _, dep := range s.Dependencies {
			if sub, ok := dep.(*jsonschema.Schema); ok {
				push(sub)
			}
		}
		if sub, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			push(sub)
		}
		if sub, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			push(sub)
		}
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			push(items)
		case []*jsonschema.Schema:
			for _, sub := range items {
				push(sub)
			}
		}
	}
	return index
}
