package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// For infers a DSL schema from the Go type T, as For's reflect form ForType
// documents.
func For[T any](kind Kind) (*Node, error) {
	return ForType(reflect.TypeFor[T](), kind)
}

// ForType infers a DSL schema from a Go type with
// github.com/google/jsonschema-go (the inference the MCP Go SDK uses) and
// converts it to a Node, so that the result obeys every DSL rule: it renders,
// validates and feeds the SDK generator like a hand-written schema.
//
// Structs are closed objects (additionalProperties false), the parameter
// root included. A field's JSON name and optionality come from its json tag
// (omitempty or omitzero: optional; otherwise required); its description
// from a `jsonschema:"…"` tag; its constraints from a `schema:"…"` tag of
// comma-separated keywords, pattern last because it takes the rest:
//
//	Currency string   `json:"currency" jsonschema:"ISO 4217 code" schema:"enum=EUR|USD"`
//	Amount   int      `json:"amount" schema:"minimum=1,maximum=10000"`
//	Tags     []string `json:"tags,omitempty" schema:"maxItems=5,maxLength=20,pattern=^[a-z]+$"`
//
// The keywords are enum (values separated by |, parsed as the field's type),
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength,
// maxLength, pattern, minItems and maxItems. On a slice or array field,
// minItems and maxItems constrain the array and the others its items.
//
// Nulls follow what encoding/json does on each side. Kind Value (a body's
// output) accepts null wherever Go may marshal one (nil pointers, slices and
// maps): a oneOf of null and the type. Kind Parameters never accepts null
// except for interface-typed fields: a caller omits an optional argument
// rather than sending null. A map[string]V is an open object whose values
// the schema leaves unchecked (the DSL has no schema-valued
// additionalProperties); decoding into V still checks them. Parameters must
// infer to an object (a struct or a map with string keys).
func ForType(t reflect.Type, kind Kind) (*Node, error) {
	if kind != Parameters && kind != Value {
		return nil, fmt.Errorf("unknown kind %v", kind)
	}
	js, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	c := converter{kind: kind}
	n, err := c.node(js, t, nil)
	if err != nil {
		return nil, err
	}
	if kind == Parameters && n.effectiveType() != TypeObject {
		return nil, fmt.Errorf("parameters of Go type %s: must be a struct or a map with string keys, not %s", t, n.effectiveType())
	}
	return n, nil
}

type converter struct{ kind Kind }

// node converts s, inferred from t (nil when unknown), at path p.
func (c converter) node(s *jsonschema.Schema, t reflect.Type, p *path) (*Node, error) {
	if s == nil {
		return nil, p.errorf("no schema inferred")
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	typ, nullable := s.Type, false
	switch len(s.Types) {
	case 0:
	case 2:
		if s.Types[0] == TypeNull {
			typ, nullable = s.Types[1], true
			break
		}
		fallthrough
	default:
		return nil, p.errorf("unsupported inferred types %v", s.Types)
	}
	if c.kind == Value && typ == TypeObject && t != nil && t.Kind() == reflect.Map {
		nullable = true // encoding/json marshals a nil map as null
	}
	if err := unsupported(s); err != nil {
		return nil, p.errorf("%v", err)
	}
	n := &Node{
		Description:      s.Description,
		Minimum:          s.Minimum,
		Maximum:          s.Maximum,
		ExclusiveMinimum: s.ExclusiveMinimum,
		ExclusiveMaximum: s.ExclusiveMaximum,
		MinLength:        s.MinLength,
		MaxLength:        s.MaxLength,
		Pattern:          s.Pattern,
		MinItems:         s.MinItems,
		MaxItems:         s.MaxItems,
	}
	if len(s.Enum) > 0 {
		n.Enum = slices.Clone(s.Enum)
	}
	switch typ {
	case "":
		n.Type = TypeJSON
	case TypeString, TypeNumber, TypeInteger, TypeBoolean, TypeNull:
		n.Type = typ
	case TypeArray:
		n.Type = TypeArray
		if s.Items != nil {
			var elem reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				elem = t.Elem()
			}
			items, err := c.node(s.Items, elem, p.key("items"))
			if err != nil {
				return nil, err
			}
			n.Items = items
		}
	case TypeObject:
		n.Type = TypeObject
		closed := s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil
		open := !closed
		n.AdditionalProperties = &open
		fields := jsonFields(t)
		if len(s.Properties) > 0 {
			n.Properties = make(map[string]*Node, len(s.Properties))
		}
		for name, ps := range s.Properties {
			f, known := fields[name]
			var ft reflect.Type
			if known {
				ft = f.Type
			}
			pn, err := c.node(ps, ft, p.key("properties").prop(name))
			if err != nil {
				return nil, err
			}
			if known {
				if err := constrain(pn, f); err != nil {
					return nil, p.key("properties").prop(name).errorf("%v", err)
				}
			}
			n.Properties[name] = pn
		}
		n.Required = slices.Clone(s.Required)
	default:
		return nil, p.errorf("unsupported inferred type %q", typ)
	}
	if nullable && c.kind == Value {
		desc := n.Description
		n.Description = ""
		return &Node{Type: TypeOneOf, OneOf: []*Node{{Type: TypeNull}, n}, Description: desc}, nil
	}
	return n, nil
}

// unsupported names a keyword of s the conversion does not carry over. The
// inference sets none of them; the check keeps a future jsonschema-go from
// widening a schema silently.
func unsupported(s *jsonschema.Schema) error {
	switch {
	case s.Ref != "" || len(s.Defs) > 0 || len(s.Definitions) > 0:
		return fmt.Errorf("unsupported keyword $ref/$defs")
	case len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 || s.Not != nil:
		return fmt.Errorf("unsupported keyword allOf/anyOf/oneOf/not")
	case s.Const != nil || s.MultipleOf != nil || s.Format != "":
		return fmt.Errorf("unsupported keyword const/multipleOf/format")
	case len(s.PrefixItems) > 0 || len(s.PatternProperties) > 0:
		return fmt.Errorf("unsupported keyword prefixItems/patternProperties")
	}
	return nil
}

// jsonFields maps the JSON names of a struct type's exported fields to the
// fields, as encoding/json names them.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f
	}
	return out
}

// constrain applies a field's `schema:"…"` tag to its node (for a nullable
// output, to the non-null alternative; for an array, the item keywords to
// its items).
func constrain(n *Node, f reflect.StructField) error {
	tag, ok := f.Tag.Lookup("schema")
	if !ok {
		return nil
	}
	if n.Type == TypeOneOf && len(n.OneOf) == 2 && n.OneOf[0].Type == TypeNull {
		n = n.OneOf[1]
	}
	for tag != "" {
		var kv string
		if strings.HasPrefix(tag, "pattern=") {
			kv, tag = tag, ""
		} else {
			kv, tag, _ = strings.Cut(tag, ",")
		}
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("schema tag: %q is not keyword=value", kv)
		}
		target := n
		if n.Type == TypeArray && key != "minItems" && key != "maxItems" {
			if n.Items == nil {
				return fmt.Errorf("schema tag: %s on an array without items", key)
			}
			target = n.Items
		}
		if err := setKeyword(target, key, val); err != nil {
			return fmt.Errorf("schema tag: %w", err)
		}
	}
	return nil
}

func setKeyword(n *Node, key, val string) error {
	num := func() (*float64, error) {
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: not a number", key, val)
		}
		return &v, nil
	}
	count := func() (*int, error) {
		v, err := strconv.Atoi(val)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: not an integer", key, val)
		}
		return &v, nil
	}
	var err error
	switch key {
	case "minimum":
		n.Minimum, err = num()
	case "maximum":
		n.Maximum, err = num()
	case "exclusiveMinimum":
		n.ExclusiveMinimum, err = num()
	case "exclusiveMaximum":
		n.ExclusiveMaximum, err = num()
	case "minLength":
		n.MinLength, err = count()
	case "maxLength":
		n.MaxLength, err = count()
	case "minItems":
		n.MinItems, err = count()
	case "maxItems":
		n.MaxItems, err = count()
	case "pattern":
		n.Pattern = val
	case "enum":
		n.Enum = nil
		for _, s := range strings.Split(val, "|") {
			v, err := enumValue(n.Type, s)
			if err != nil {
				return fmt.Errorf("enum value %q: %w", s, err)
			}
			n.Enum = append(n.Enum, v)
		}
	default:
		return fmt.Errorf("unknown keyword %q (known: enum, minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, minItems, maxItems)", key)
	}
	return err
}

// enumValue parses one enum value as the node's type.
func enumValue(typ, s string) (any, error) {
	switch typ {
	case TypeString:
		return s, nil
	case TypeBoolean:
		return strconv.ParseBool(s)
	case TypeInteger, TypeNumber:
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return nil, fmt.Errorf("not a number")
		}
		return json.Number(s), nil
	}
	return nil, fmt.Errorf("enum is not supported on type %q", typ)
}
