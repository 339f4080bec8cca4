package openapi

import (
	"encoding/json"
	"slices"
)

// MaxSchemaBytes bounds the expansion of one schema (an operation's input or
// its output): once the JSON emitted for it passes this size, every further
// $ref becomes an empty schema that keeps only the target's description.
const MaxSchemaBytes = 256 << 10

// Keywords that hold one subschema, a map of subschemas, or a list of them.
// Every other key is kept verbatim when it is a JSON Schema keyword and
// dropped otherwise (OpenAPI's example, discriminator, xml, externalDocs,
// x-* extensions and anything unknown).
var (
	schemaKeywords = set("items", "additionalProperties", "not", "if", "then", "else",
		"contains", "propertyNames", "additionalItems", "unevaluatedItems",
		"unevaluatedProperties", "contentSchema")
	schemaMapKeywords  = set("properties", "patternProperties", "dependentSchemas")
	schemaListKeywords = set("allOf", "anyOf", "oneOf", "prefixItems")
	valueKeywords      = set("type", "enum", "const", "default", "format", "title",
		"description", "multipleOf", "maximum", "minimum", "exclusiveMaximum",
		"exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
		"uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties",
		"required", "dependentRequired", "readOnly", "writeOnly", "deprecated",
		"contentEncoding", "contentMediaType", "$comment")
)

func set(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// expander inlines one schema's references. Its state is per schema, so that
// the size bound holds for each input and output schema separately.
type expander struct {
	doc    *Document
	onPath map[string]bool // refs being expanded on the current path
	size   int             // approximate bytes of JSON emitted so far
}

func newExpander(d *Document) *expander {
	return &expander{doc: d, onPath: map[string]bool{}}
}

// schema converts the OpenAPI schema v found at pointer at into a
// self-contained JSON Schema value: a fresh map[string]any or a bool.
func (e *expander) schema(v any, at string) (any, error) {
	switch s := v.(type) {
	case bool: // a 3.1 boolean schema
		e.size += 5
		return s, nil
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			return e.ref(ref, s, at)
		}
		return e.keywords(s, at)
	default:
		return nil, errorAt(at, "schema is not an object")
	}
}

// ref inlines the target of ref; the other keys of the Reference Object (3.1
// allows a description beside $ref) are laid over it.
func (e *expander) ref(ref string, s map[string]any, at string) (any, error) {
	target, pointer, err := e.doc.resolve(ref, pointerJoin(at, "$ref"))
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if e.onPath[pointer] || e.size > MaxSchemaBytes {
		out = map[string]any{}
		e.size += 2
		if t, ok := target.(map[string]any); ok {
			if desc, ok := t["description"].(string); ok {
				out["description"] = desc
				e.size += len(desc) + 16
			}
		}
	} else {
		e.onPath[pointer] = true
		inlined, err := e.schema(target, pointer)
		delete(e.onPath, pointer)
		if err != nil {
			return nil, err
		}
		m, ok := inlined.(map[string]any)
		if !ok || len(s) == 1 {
			return inlined, nil
		}
		out = m
	}
	siblings := make(map[string]any, len(s))
	for k, v := range s {
		if k != "$ref" {
			siblings[k] = v
		}
	}
	over, err := e.keywords(siblings, at)
	if err != nil {
		return nil, err
	}
	for k, v := range over.(map[string]any) {
		out[k] = v
	}
	return out, nil
}

// keywords converts a schema object that is not a reference.
func (e *expander) keywords(s map[string]any, at string) (any, error) {
	out := make(map[string]any, len(s))
	e.size += 2 // every node counts, so that a list of empty schemas does too
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first error found does not depend on map order
	for _, k := range keys {
		v, kat := s[k], pointerJoin(at, k)
		switch {
		case schemaKeywords[k]:
			if k == "items" {
				if list, ok := v.([]any); ok { // draft-4 tuple form
					conv, err := e.list(list, kat)
					if err != nil {
						return nil, err
					}
					out["prefixItems"] = conv
					continue
				}
			}
			conv, err := e.schema(v, kat)
			if err != nil {
				return nil, err
			}
			out[k] = conv
		case schemaMapKeywords[k]:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, errorAt(kat, "not an object")
			}
			conv := make(map[string]any, len(m))
			for _, name := range sortedKeys(m) {
				sub, err := e.schema(m[name], pointerJoin(kat, name))
				if err != nil {
					return nil, err
				}
				conv[name] = sub
				e.size += len(name) + 4
			}
			out[k] = conv
		case schemaListKeywords[k]:
			list, ok := v.([]any)
			if !ok {
				return nil, errorAt(kat, "not an array")
			}
			conv, err := e.list(list, kat)
			if err != nil {
				return nil, err
			}
			out[k] = conv
		case valueKeywords[k]:
			out[k] = v
			e.size += approxSize(v)
		default:
			continue // OpenAPI-only or unknown: dropped
		}
		e.size += len(k) + 4
	}
	fixExclusive(out, "exclusiveMaximum", "maximum")
	fixExclusive(out, "exclusiveMinimum", "minimum")
	if nullable, _ := s["nullable"].(bool); nullable {
		return allowNull(out), nil
	}
	return out, nil
}

func (e *expander) list(list []any, at string) ([]any, error) {
	conv := make([]any, len(list))
	for i, sub := range list {
		e.size++
		var err error
		if conv[i], err = e.schema(sub, pointerJoin(at, itoa(i))); err != nil {
			return nil, err
		}
	}
	return conv, nil
}

// fixExclusive turns OpenAPI 3.0's boolean exclusiveMaximum/Minimum (a flag
// on maximum/minimum) into JSON Schema's numeric form.
func fixExclusive(s map[string]any, exclusive, bound string) {
	flag, ok := s[exclusive].(bool)
	if !ok {
		return
	}
	delete(s, exclusive)
	if n, ok := s[bound]; ok && flag {
		s[exclusive] = n
		delete(s, bound)
	}
}

// allowNull applies OpenAPI 3.0's nullable: true, which JSON Schema spells as
// "null" in the type (and in the enum, when there is one).
func allowNull(s map[string]any) map[string]any {
	switch t := s["type"].(type) {
	case string:
		if t != "null" {
			s["type"] = []any{t, "null"}
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			s["type"] = append(slices.Clip(t), "null")
		}
	default:
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, nil) {
		s["enum"] = append(slices.Clip(enum), nil)
	}
	return s
}

// approxSize estimates the JSON size of a decoded value, for the bound.
func approxSize(v any) int {
	switch v := v.(type) {
	case string:
		return len(v) + 2
	case json.Number:
		return len(v)
	case []any:
		n := 2
		for _, x := range v {
			n += approxSize(x) + 1
		}
		return n
	case map[string]any:
		n := 2
		for k, x := range v {
			n += len(k) + 4 + approxSize(x)
		}
		return n
	default:
		return 5
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// valueConstraints are the keywords that constrain a value's content
// rather than its shape: patterns, lengths, ranges and counts.
var valueConstraints = set("pattern", "format", "minLength", "maxLength", "minimum", "maximum",
	"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems",
	"minProperties", "maxProperties", "minContains", "maxContains", "contentEncoding", "contentMediaType")

// ShapeOnly returns schema without its value constraints (patterns,
// lengths, ranges and counts), keeping types, properties, required, enums
// and combinators. An API's answers stray from the value constraints its
// document declares far more often than from its shapes, and a program can
// do nothing about either: validating a response against its shape keeps
// the types a program relies on without failing calls over a pattern.
func ShapeOnly(schema json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return nil, err
	}
	return marshal(shapeOnly(v))
}

func shapeOnly(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, sub := range s {
		switch {
		case valueConstraints[k]:
			delete(s, k)
		case schemaKeywords[k] && !isList(sub):
			s[k] = shapeOnly(sub)
		case schemaMapKeywords[k] || k == "$defs" || k == "definitions":
			if m, ok := sub.(map[string]any); ok {
				for name, x := range m {
					m[name] = shapeOnly(x)
				}
			}
		case schemaListKeywords[k] || k == "items": // items: a 2019 list of schemas
			if list, ok := sub.([]any); ok {
				for i, x := range list {
					list[i] = shapeOnly(x)
				}
			}
		}
	}
	return s
}

func isList(v any) bool { _, ok := v.([]any); return ok }
