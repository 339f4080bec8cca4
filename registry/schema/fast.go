package schema

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The fast path. Validating with jsonschema/v5 allocates a great deal, and
// almost every argument and value the pipeline checks is valid. A DSL schema
// therefore also compiles into a small immutable tree that answers "valid"
// only when it is sure; on "invalid" or "unsure" Validate asks jsonschema,
// whose verdict and messages are the ones that count. So the fast path can
// only make valid input cheaper: it never rejects anything itself, and a
// fuzz target checks that it never calls valid what jsonschema rejects.

type verdict uint8

const (
	unsure verdict = iota
	valid
)

// maxFastDepth bounds the fast path's recursion; deeper input is "unsure".
const maxFastDepth = 64

type fastNode struct {
	typ       string
	props     map[string]*fastNode
	required  []string
	open      bool // extra properties allowed
	items     *fastNode
	oneOf     []*fastNode
	enum      []any // only strings, bools and nil; otherwise the node is opaque
	hasConst  bool
	constVal  any
	min, max  *float64
	xmin, xmx *float64
	minLen    int // -1: none
	maxLen    int
	pattern   *regexp.Regexp
	minItems  int
	maxItems  int
	opaque    bool // a constraint the fast path does not judge: always unsure
}

// buildFast copies a checked Node graph into a fast tree. root tells whether
// n is the parameter root (open unless it says otherwise).
func buildFast(n *Node, paramRoot bool, depth int) *fastNode {
	if n == nil || depth > maxFastDepth {
		return &fastNode{opaque: true}
	}
	f := &fastNode{typ: n.effectiveType(), minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	f.min, f.max, f.xmin, f.xmx = n.Minimum, n.Maximum, n.ExclusiveMinimum, n.ExclusiveMaximum
	if n.MinLength != nil {
		f.minLen = *n.MinLength
	}
	if n.MaxLength != nil {
		f.maxLen = *n.MaxLength
	}
	if n.MinItems != nil {
		f.minItems = *n.MinItems
	}
	if n.MaxItems != nil {
		f.maxItems = *n.MaxItems
	}
	if n.Pattern != "" {
		re, err := regexp.Compile(n.Pattern)
		if err != nil {
			f.opaque = true
		}
		f.pattern = re
	}
	for _, e := range n.Enum {
		switch e.(type) {
		case string, bool, nil:
			f.enum = append(f.enum, e)
		default:
			f.opaque = true
		}
	}
	if n.Enum != nil && len(f.enum) == 0 {
		f.opaque = true
	}
	if n.HasConst {
		switch n.Const.(type) {
		case string, bool, nil:
			f.hasConst, f.constVal = true, n.Const
		default:
			f.opaque = true
		}
	}
	switch f.typ {
	case TypeObject:
		f.open = n.AdditionalProperties == nil && paramRoot || n.AdditionalProperties != nil && *n.AdditionalProperties
		f.props = make(map[string]*fastNode, len(n.Properties))
		for k, p := range n.Properties {
			f.props[k] = buildFast(p, false, depth+1)
		}
		f.required = append([]string(nil), n.Required...)
	case TypeArray:
		if n.Items != nil {
			f.items = buildFast(n.Items, false, depth+1)
		}
	case TypeOneOf:
		for _, b := range n.OneOf {
			f.oneOf = append(f.oneOf, buildFast(b, false, depth+1))
		}
	}
	return f
}

// check reports valid only when v certainly satisfies f.
func (f *fastNode) check(v any, depth int) verdict {
	if f.opaque || depth > maxFastDepth {
		return unsure
	}
	if f.enum != nil || f.hasConst {
		if !f.literalOK(v) {
			return unsure
		}
	}
	switch f.typ {
	case TypeJSON:
		return f.anyJSON(v, depth)
	case TypeNull:
		return is(v == nil)
	case TypeBoolean:
		_, ok := v.(bool)
		return is(ok)
	case TypeString:
		s, ok := v.(string)
		if !ok || !utf8.ValidString(s) {
			return unsure
		}
		if f.minLen >= 0 || f.maxLen >= 0 {
			n := utf8.RuneCountInString(s)
			if (f.minLen >= 0 && n < f.minLen) || (f.maxLen >= 0 && n > f.maxLen) {
				return unsure
			}
		}
		return is(f.pattern == nil || f.pattern.MatchString(s))
	case TypeNumber, TypeInteger:
		x, ok := number(v, f.typ == TypeInteger)
		if !ok {
			return unsure
		}
		switch {
		case f.min != nil && !(x >= *f.min), f.max != nil && !(x <= *f.max),
			f.xmin != nil && !(x > *f.xmin), f.xmx != nil && !(x < *f.xmx):
			return unsure
		}
		return valid
	case TypeArray:
		a, ok := v.([]any)
		if !ok || (f.minItems >= 0 && len(a) < f.minItems) || (f.maxItems >= 0 && len(a) > f.maxItems) {
			return unsure
		}
		for _, e := range a {
			if f.items == nil {
				if f.anyJSON(e, depth+1) != valid {
					return unsure
				}
			} else if f.items.check(e, depth+1) != valid {
				return unsure
			}
		}
		return valid
	case TypeObject:
		m, ok := v.(map[string]any)
		if !ok {
			return unsure
		}
		for _, r := range f.required {
			if _, ok := m[r]; !ok {
				return unsure
			}
		}
		for k, e := range m {
			p, declared := f.props[k]
			switch {
			case declared:
				if p.check(e, depth+1) != valid {
					return unsure
				}
			case !f.open || !utf8.ValidString(k):
				return unsure
			default:
				if f.anyJSON(e, depth+1) != valid {
					return unsure
				}
			}
		}
		return valid
	case TypeOneOf:
		matched := 0
		for _, b := range f.oneOf {
			if b.check(v, depth+1) == valid {
				matched++
			}
		}
		// Exactly one sure match is not enough: another branch may match
		// where the fast path was unsure. Only a single branch is decisive.
		return is(matched == 1 && len(f.oneOf) == 1)
	}
	return unsure
}

// literalOK reports whether v is one of the enum values and equals const.
func (f *fastNode) literalOK(v any) bool {
	switch v.(type) {
	case string, bool, nil:
	default:
		return false
	}
	if f.hasConst && v != f.constVal {
		return false
	}
	if f.enum != nil {
		for _, e := range f.enum {
			if e == v {
				return true
			}
		}
		return false
	}
	return true
}

// anyJSON reports valid for plain decoded JSON with sane numbers.
func (f *fastNode) anyJSON(v any, depth int) verdict {
	if depth > maxFastDepth {
		return unsure
	}
	switch x := v.(type) {
	case nil, bool:
		return valid
	case string:
		return is(utf8.ValidString(x))
	case json.Number, float64:
		_, ok := number(x, false)
		return is(ok)
	case []any:
		for _, e := range x {
			if f.anyJSON(e, depth+1) != valid {
				return unsure
			}
		}
		return valid
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || f.anyJSON(e, depth+1) != valid {
				return unsure
			}
		}
		return valid
	}
	return unsure
}

// number reads a JSON number as float64 when that is exact enough to judge:
// short plain literals only; integers must be written without fraction or
// exponent.
func number(v any, integer bool) (float64, bool) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || (integer && x != math.Trunc(x)) || math.Abs(x) > 1<<53 {
			return 0, false
		}
		return x, true
	case json.Number:
		s := string(x)
		if len(s) == 0 || len(s) > 15 || literalProblem(s) != "" {
			return 0, false
		}
		if integer && strings.ContainsAny(s, ".eE") {
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return 0, false
}

func is(b bool) verdict {
	if b {
		return valid
	}
	return unsure
}
