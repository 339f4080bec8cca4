package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
)

// Parse reads a DSL schema written as JSON: the standard JSON Schema spelling
// of the DSL. A schema is a JSON object; "type" is one string (string,
// number, integer, boolean, null, array, object); a schema without "type" is
// a oneOf when it has "oneOf", an object when it has "properties", and any
// JSON value otherwise. The keywords are exactly those of Node. Unknown and
// misplaced keywords, type arrays, duplicate keys, schema-valued
// additionalProperties, tuple items and values of the wrong shape are
// rejected with an *Error naming the path. Parse checks the shape only;
// Compile checks the rest. Any input yields a Node or an error.
func Parse(data []byte) (*Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := parser{dec: dec}
	tok, err := p.token(nil)
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, (*path)(nil).errorf("schema must be a JSON object")
	}
	n, err := p.schema(nil, 0)
	if err != nil {
		return nil, err
	}
	switch _, err := dec.Token(); {
	case err == io.EOF:
		return n, nil
	case err == nil:
		return nil, (*path)(nil).errorf("unexpected data after the schema")
	default:
		return nil, (*path)(nil).errorf("invalid JSON: %v", err)
	}
}

type parser struct{ dec *json.Decoder }

func (ps parser) token(p *path) (json.Token, error) {
	tok, err := ps.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, p.errorf("invalid JSON: %v", err)
	}
	return tok, nil
}

// key reads an object's next key: within an object the decoder yields a
// member's key as a string.
func (ps parser) key(p *path) (string, error) {
	tok, err := ps.token(p)
	if err != nil {
		return "", err
	}
	k, _ := tok.(string)
	return k, nil
}

// schema parses the members of a schema object whose '{' was just read.
func (ps parser) schema(p *path, depth int) (*Node, error) {
	if depth > MaxDepth {
		return nil, p.errorf("schema is nested deeper than %d levels", MaxDepth)
	}
	n := &Node{}
	seen := map[string]bool{}
	for ps.dec.More() {
		kw, err := ps.key(p)
		if err != nil {
			return nil, err
		}
		if seen[kw] {
			return nil, p.errorf("duplicate keyword %q", kw)
		}
		seen[kw] = true
		if err := ps.keyword(n, kw, p, depth); err != nil {
			return nil, err
		}
	}
	if _, err := ps.token(p); err != nil { // '}'
		return nil, err
	}
	inferred := n.Type == ""
	n.Type = n.effectiveType()
	if err := checkKeywords(n, n.Type, inferred, p); err != nil {
		return nil, err
	}
	return n, nil
}

// keyword parses one keyword's value into n: the keyword's own step from
// keywords, or an error for a keyword the DSL does not have.
func (ps parser) keyword(n *Node, kw string, p *path, depth int) error {
	step, ok := keywordSteps[kw]
	if !ok {
		return p.errorf("unsupported keyword %q", kw)
	}
	q := p.key(kw)
	tok, err := ps.token(q)
	if err != nil {
		return err
	}
	return step(ps, n, kw, tok, q, depth)
}

// keywordStep reads the value of keyword kw, whose first token is tok, at q.
type keywordStep func(ps parser, n *Node, kw string, tok json.Token, q *path, depth int) error

// keywordSteps are the DSL's keywords, each with its step.
var keywordSteps map[string]keywordStep

func init() { // a variable initializer would loop through parser.items
	keywordSteps = map[string]keywordStep{
		"type":                 parseType,
		"description":          parseText,
		"pattern":              parseText,
		"properties":           parser.properties,
		"required":             parser.required,
		"additionalProperties": parseAdditional,
		"items":                parser.items,
		"oneOf":                parser.oneOf,
		"enum":                 parser.literal,
		"const":                parser.literal,
		"default":              parser.literal,
		"minimum":              parseBound(func(n *Node) **float64 { return &n.Minimum }),
		"maximum":              parseBound(func(n *Node) **float64 { return &n.Maximum }),
		"exclusiveMinimum":     parseBound(func(n *Node) **float64 { return &n.ExclusiveMinimum }),
		"exclusiveMaximum":     parseBound(func(n *Node) **float64 { return &n.ExclusiveMaximum }),
		"minLength":            parseCount(func(n *Node) **int { return &n.MinLength }),
		"maxLength":            parseCount(func(n *Node) **int { return &n.MaxLength }),
		"minItems":             parseCount(func(n *Node) **int { return &n.MinItems }),
		"maxItems":             parseCount(func(n *Node) **int { return &n.MaxItems }),
	}
}

func parseType(_ parser, n *Node, _ string, tok json.Token, q *path, _ int) error {
	t, ok := tok.(string)
	switch {
	case tok == json.Delim('['):
		return q.errorf("type arrays are not supported (use oneOf)")
	case !ok:
		return q.errorf(`"type" must be a string`)
	case t == TypeJSON:
		return q.errorf(`unknown type "json" (omit "type" to accept any JSON value)`)
	case t == TypeOneOf:
		return q.errorf(`unknown type "oneOf" (write "oneOf" without "type")`)
	case !knownType(t):
		return q.errorf("unknown type %q", t)
	}
	n.Type = t
	return nil
}

// parseText reads description and pattern.
func parseText(_ parser, n *Node, kw string, tok json.Token, q *path, _ int) error {
	s, ok := tok.(string)
	if !ok {
		return q.errorf("%s must be a string", kw)
	}
	if kw == "description" {
		n.Description = s
	} else {
		n.Pattern = s
	}
	return nil
}

func (ps parser) properties(n *Node, _ string, tok json.Token, q *path, depth int) error {
	if tok != json.Delim('{') {
		return q.errorf("properties must be an object of schemas")
	}
	n.Properties = map[string]*Node{}
	for ps.dec.More() {
		nameTok, err := ps.token(q)
		if err != nil {
			return err
		}
		name, _ := nameTok.(string)
		if _, dup := n.Properties[name]; dup {
			return q.errorf("duplicate property %s", quoteJSON(name))
		}
		child, err := ps.subschema(q.prop(name), depth)
		if err != nil {
			return err
		}
		n.Properties[name] = child
	}
	_, err := ps.token(q)
	return err
}

func (ps parser) required(n *Node, _ string, tok json.Token, q *path, _ int) error {
	if tok != json.Delim('[') {
		return q.errorf("required must be an array of property names")
	}
	n.Required = []string{}
	for i := 0; ps.dec.More(); i++ {
		tok, err := ps.token(q)
		if err != nil {
			return err
		}
		name, ok := tok.(string)
		if !ok {
			return q.index(i).errorf("required must be an array of property names")
		}
		n.Required = append(n.Required, name)
	}
	_, err := ps.token(q)
	return err
}

func parseAdditional(_ parser, n *Node, _ string, tok json.Token, q *path, _ int) error {
	b, ok := tok.(bool)
	if !ok {
		return q.errorf("additionalProperties must be true or false (schemas are not supported)")
	}
	n.AdditionalProperties = &b
	return nil
}

func (ps parser) items(n *Node, _ string, tok json.Token, q *path, depth int) error {
	if tok == json.Delim('[') {
		return q.errorf("items must be a single schema (tuple form is not supported)")
	}
	if tok != json.Delim('{') {
		return q.errorf("items must be a schema object")
	}
	child, err := ps.schema(q, depth+1)
	if err != nil {
		return err
	}
	n.Items = child
	return nil
}

func (ps parser) oneOf(n *Node, _ string, tok json.Token, q *path, depth int) error {
	if tok != json.Delim('[') {
		return q.errorf("oneOf must be an array of schemas")
	}
	n.OneOf = []*Node{}
	for i := 0; ps.dec.More(); i++ {
		child, err := ps.subschema(q.index(i), depth)
		if err != nil {
			return err
		}
		n.OneOf = append(n.OneOf, child)
	}
	_, err := ps.token(q)
	return err
}

// literal reads enum, const and default: JSON values kept as data.
func (ps parser) literal(n *Node, kw string, tok json.Token, q *path, _ int) error {
	if kw == "enum" && tok != json.Delim('[') {
		return q.errorf("enum must be an array")
	}
	v, err := ps.value(tok, q, 0)
	if err != nil {
		return err
	}
	switch kw {
	case "enum":
		n.Enum = v.([]any)
	case "const":
		n.Const, n.HasConst = v, true
	default:
		n.Default, n.HasDefault = v, true
	}
	return nil
}

// parseBound is the step of minimum, maximum, exclusiveMinimum or exclusiveMaximum, which
// it stores in field.
func parseBound(field func(*Node) **float64) keywordStep {
	return func(_ parser, n *Node, kw string, tok json.Token, q *path, _ int) error {
		num, ok := tok.(json.Number)
		if !ok {
			return q.errorf("%s must be a number", kw)
		}
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil || math.IsInf(f, 0) {
			return q.errorf("%s %s is out of range", kw, num)
		}
		*field(n) = &f
		return nil
	}
}

// parseCount is the step of minLength, maxLength, minItems or maxItems, which it stores in
// field.
func parseCount(field func(*Node) **int) keywordStep {
	return func(_ parser, n *Node, kw string, tok json.Token, q *path, _ int) error {
		v, ok := count(tok)
		if !ok {
			return q.errorf("%s must be an integer between 0 and %d", kw, math.MaxInt32)
		}
		*field(n) = &v
		return nil
	}
}

// subschema reads one schema object nested one level below depth.
func (ps parser) subschema(q *path, depth int) (*Node, error) {
	tok, err := ps.token(q)
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, q.errorf("schema must be a JSON object")
	}
	return ps.schema(q, depth+1)
}

// count converts a JSON number to a non-negative int32-range count (3.0 counts).
func count(tok json.Token) (int, bool) {
	num, ok := tok.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		return int(i), i >= 0 && i <= math.MaxInt32
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// value reads an arbitrary JSON value starting with tok.
func (ps parser) value(tok json.Token, p *path, depth int) (any, error) {
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxEmbeddedDepth {
		return nil, p.errorf("value is nested deeper than %d levels", maxEmbeddedDepth)
	}
	switch d {
	case '[':
		list := []any{}
		for i := 0; ps.dec.More(); i++ {
			tok, err := ps.token(p)
			if err != nil {
				return nil, err
			}
			v, err := ps.value(tok, p.index(i), depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := ps.token(p); err != nil {
			return nil, err
		}
		return list, nil
	case '{':
		obj := map[string]any{}
		for ps.dec.More() {
			k, err := ps.key(p)
			if err != nil {
				return nil, err
			}
			if _, dup := obj[k]; dup {
				return nil, p.errorf("duplicate key %s", quoteJSON(k))
			}
			tok, err := ps.token(p.prop(k))
			if err != nil {
				return nil, err
			}
			v, err := ps.value(tok, p.prop(k), depth+1)
			if err != nil {
				return nil, err
			}
			obj[k] = v
		}
		if _, err := ps.token(p); err != nil {
			return nil, err
		}
		return obj, nil
	}
	return nil, p.errorf("invalid JSON: unexpected %v", d)
}
