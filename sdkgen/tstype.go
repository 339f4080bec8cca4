package sdkgen

import (
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/codemode/codemode/internal/jsonpointer"
)

// maxSchemaDepth bounds how deep rendering descends into nested schemas; anything deeper renders
// as unknown, so no input can exhaust the stack or blow up the output.
const maxSchemaDepth = 64

// precedence says how tightly a rendered type binds, for parenthesizing it inside another.
type precedence uint8

const (
	precUnion        precedence = iota // A | B
	precIntersection                   // A & B
	precPrefix                         // -1 (a negative numeric literal)
	precAtom                           // keywords, literals, references, object and array types
)

// tsType is a rendered TypeScript type.
type tsType struct {
	text string
	prec precedence
}

var (
	tsUnknown = atom("unknown")
	tsNever   = atom("never")
)

func atom(text string) tsType { return tsType{text: text, prec: precAtom} }

// schemaType renders a decoded schema document as the TypeScript type of the values it accepts.
// An empty schema is the implicit open object of a parameter root; an invalid one is unknown.
func schemaType(sc schema, indent string) tsType {
	t, _ := sharedSchemaType(sc, indent, nil, false)
	return t
}

// sharedSchemaType is schemaType with the declared types st standing in for their
// occurrences (the root's too when rootShared); used lists the ones it refers to directly.
func sharedSchemaType(sc schema, indent string, st *sharedTypes, rootShared bool) (t tsType, used []*declType) {
	switch sc.state {
	case schemaEmpty:
		return atom("{ [key: string]: unknown }"), nil
	case schemaValid:
		tree, used := st.rewrite(sc.value(), rootShared)
		return renderType(tree, 0, indent), used
	default:
		return tsUnknown, nil
	}
}

// renderType renders one (sub)schema. indent is the indentation of the line the type starts on;
// multi-line object types indent their members one level deeper and close at indent.
//
// The mapping, in short: true and {} → unknown, false → never; a $ref that resolveRefs could
// not resolve (remote, an anchor, recursive) and $dynamicRef → unknown; const → a
// literal; enum → a union of literals; type (a name or a list) → string, number (also for
// integer), boolean, null, T[] or an object type; without type, properties or
// additionalProperties imply an object and items implies an array; anyOf/oneOf → a union and
// allOf → an intersection, each intersected with the rest of the schema. A keyword of the wrong
// JSON type makes its schema unknown. Keywords without a TypeScript counterpart are ignored,
// which only ever widens the type.
func renderType(v any, depth int, indent string) tsType {
	if depth > maxSchemaDepth {
		return tsUnknown
	}
	switch s := v.(type) {
	case bool:
		if s {
			return tsUnknown
		}
		return tsNever
	case map[string]any:
		return renderSchemaObject(s, depth, indent)
	case namedRef:
		return atom(s.t.name)
	default:
		return tsUnknown
	}
}

func renderSchemaObject(s map[string]any, depth int, indent string) tsType {
	for _, ref := range [...]string{"$ref", "$dynamicRef", "$recursiveRef"} {
		if _, ok := s[ref]; ok {
			return tsUnknown
		}
	}
	base, ok := baseType(s, depth, indent)
	if !ok {
		return tsUnknown
	}
	parts := []tsType{base}
	for _, kw := range [...]string{"anyOf", "oneOf", "allOf"} {
		raw, present := s[kw]
		if !present {
			continue
		}
		list, ok := raw.([]any)
		if !ok || len(list) == 0 {
			return tsUnknown
		}
		members := make([]tsType, len(list))
		for i, m := range list {
			members[i] = renderType(m, depth+1, indent)
		}
		if kw == "allOf" {
			parts = append(parts, intersection(members))
		} else {
			parts = append(parts, union(members))
		}
	}
	return intersection(parts)
}

// baseType renders const, enum or type; ok is false when one of them is malformed.
func baseType(s map[string]any, depth int, indent string) (t tsType, ok bool) {
	if c, present := s["const"]; present {
		return literalType(c), true
	}
	if e, present := s["enum"]; present {
		list, ok := e.([]any)
		if !ok {
			return tsUnknown, false
		}
		if len(list) > maxEnumMembers {
			return enumTypes(list), true
		}
		members := make([]tsType, len(list))
		for i, m := range list {
			members[i] = literalType(m)
		}
		return union(members), true
	}
	raw, present := s["type"]
	if !present {
		return namedType(s, impliedType(s), depth, indent)
	}
	switch typ := raw.(type) {
	case string:
		return namedType(s, typ, depth, indent)
	case []any:
		if len(typ) == 0 {
			return tsUnknown, false
		}
		members := make([]tsType, 0, len(typ))
		for i, m := range typ {
			name, ok := m.(string)
			if !ok {
				return tsUnknown, false
			}
			if slices.Contains(typ[:i], m) {
				continue
			}
			t, ok := namedType(s, name, depth, indent)
			if !ok {
				return tsUnknown, false
			}
			members = append(members, t)
		}
		return union(members), true
	default:
		return tsUnknown, false
	}
}

// impliedType is the type a schema without "type" evidently describes, or "".
func impliedType(s map[string]any) string {
	for _, kw := range [...]string{"properties", "additionalProperties", "patternProperties"} {
		if _, ok := s[kw]; ok {
			return "object"
		}
	}
	for _, kw := range [...]string{"items", "prefixItems"} {
		if _, ok := s[kw]; ok {
			return "array"
		}
	}
	return ""
}

// namedType renders the schema s restricted to the JSON type name.
func namedType(s map[string]any, name string, depth int, indent string) (tsType, bool) {
	switch name {
	case "string", "boolean", "null":
		return atom(name), true
	case "number", "integer":
		return atom("number"), true
	case "array":
		return arrayType(s, depth, indent)
	case "object":
		return objectType(s, depth, indent)
	default:
		return tsUnknown, true
	}
}

func arrayType(s map[string]any, depth int, indent string) (tsType, bool) {
	if _, ok := s["prefixItems"]; ok {
		return atom("unknown[]"), true // tuples are not rendered
	}
	items, present := s["items"]
	if !present {
		return atom("unknown[]"), true
	}
	var elem tsType
	switch items.(type) {
	case bool, map[string]any, namedRef:
		elem = renderType(items, depth+1, indent)
	case []any:
		return atom("unknown[]"), true // draft-04 tuple form
	default:
		return tsUnknown, false
	}
	if elem.prec < precAtom {
		return atom("(" + elem.text + ")[]"), true
	}
	return atom(elem.text + "[]"), true
}

// objectType renders properties (sorted by name, `?` unless required, each with its JSDoc) and
// an index signature for an open object: unknown when additionalProperties is absent or true,
// none when it is false, and the rendered schema when it is one. TypeScript requires every
// property to fit a typed index signature, so properties plus a typed one render as
// `{ props } & { [key: string]: T }`, which keeps each property's own type (and the output
// linear in the schema: widening the signature by the property types would repeat them).
// patternProperties make the index signature unknown.
func objectType(s map[string]any, depth int, indent string) (tsType, bool) {
	var props map[string]any
	if raw, present := s["properties"]; present {
		p, ok := raw.(map[string]any)
		if !ok {
			return tsUnknown, false
		}
		props = p
	}
	var required map[string]bool
	if raw, present := s["required"]; present {
		list, ok := raw.([]any)
		if !ok {
			return tsUnknown, false
		}
		required = make(map[string]bool, len(list))
		for _, r := range list {
			name, ok := r.(string)
			if !ok {
				return tsUnknown, false
			}
			required[name] = true
		}
	}
	open, index := true, tsUnknown
	if raw, present := s["additionalProperties"]; present {
		switch ap := raw.(type) {
		case bool:
			open = ap
		case map[string]any, namedRef:
			index = renderType(ap, depth+1, indent)
			open = index != tsNever
		default:
			return tsUnknown, false
		}
	}
	if raw, present := s["patternProperties"]; present {
		if _, ok := raw.(map[string]any); !ok {
			return tsUnknown, false
		}
		open, index = true, tsUnknown
	}
	if len(props) == 0 {
		if !open {
			return atom("Record<string, never>"), true
		}
		return atom("{ [key: string]: " + index.text + " }"), true
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)

	inner := indent + "  "
	var b strings.Builder
	b.WriteString("{\n")
	for _, name := range names {
		ps := props[name]
		if doc := propertyDoc(ps); doc != "" {
			b.WriteString(inner)
			b.WriteString("/** ")
			b.WriteString(doc)
			b.WriteString(" */\n")
		}
		b.WriteString(inner)
		b.WriteString(propertyKey(name))
		if !required[name] {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		b.WriteString(renderType(ps, depth+1, inner).text)
		b.WriteString(";\n")
	}
	if open && index == tsUnknown {
		b.WriteString(inner)
		b.WriteString("[key: string]: unknown;\n")
	}
	b.WriteString(indent)
	b.WriteByte('}')
	if open && index != tsUnknown {
		b.WriteString(" & { [key: string]: ")
		b.WriteString(index.text)
		b.WriteString(" }")
		return tsType{text: b.String(), prec: precIntersection}, true
	}
	return atom(b.String()), true
}

// literalType renders a JSON scalar as a literal type; objects and arrays are unknown.
func literalType(v any) tsType {
	switch v := v.(type) {
	case string:
		return atom(quoteJS(v))
	case json.Number:
		if strings.HasPrefix(string(v), "-") {
			return tsType{text: string(v), prec: precPrefix}
		}
		return atom(string(v))
	case bool:
		if v {
			return atom("true")
		}
		return atom("false")
	case nil:
		return atom("null")
	default:
		return tsUnknown
	}
}

// union joins alternatives: unknown absorbs everything, never disappears, duplicates collapse,
// and no alternative at all is never.
func union(alts []tsType) tsType {
	return join(alts, tsUnknown, tsNever, " | ", precUnion, func(k tsType) string { return k.text })
}

// intersection joins parts: never absorbs everything, unknown disappears, duplicates collapse,
// and no part at all is unknown.
func intersection(parts []tsType) tsType {
	return join(parts, tsNever, tsUnknown, " & ", precIntersection, func(k tsType) string {
		if k.prec == precUnion {
			return "(" + k.text + ")"
		}
		return k.text
	})
}

// join is union's and intersection's: absorb absorbs everything, identity
// disappears and is the join of nothing, duplicates collapse, and the parts
// kept are written by text between seps.
func join(parts []tsType, absorb, identity tsType, sep string, prec precedence, text func(tsType) string) tsType {
	kept := make([]tsType, 0, len(parts))
	for _, p := range parts {
		if p == absorb {
			return absorb
		}
		if p == identity || slices.Contains(kept, p) {
			continue
		}
		kept = append(kept, p)
	}
	switch len(kept) {
	case 0:
		return identity
	case 1:
		return kept[0]
	}
	texts := make([]string, len(kept))
	for i, k := range kept {
		texts[i] = text(k)
	}
	return tsType{text: strings.Join(texts, sep), prec: prec}
}

// propertyDoc is the one-line JSDoc of a property: its description's summary followed by tags
// for the constraints TypeScript cannot express. Keywords of the wrong JSON type are skipped.
func propertyDoc(v any) string {
	if ref, ok := v.(namedRef); ok {
		v = ref.orig
	}
	s, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	var parts []string
	if d, ok := s["description"].(string); ok {
		if summary := docSummary(d); summary != "" {
			parts = append(parts, summary)
		}
	}
	if t, ok := s["type"].(string); ok && t == "integer" {
		parts = append(parts, "@integer")
	}
	for _, kw := range [...]string{
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
		"minLength", "maxLength", "minItems", "maxItems",
	} {
		if n, ok := s[kw].(json.Number); ok {
			parts = append(parts, "@"+kw+" "+string(n))
		}
	}
	for _, kw := range [...]string{"format", "pattern"} {
		if str, ok := s[kw].(string); ok {
			if frag := docFragment(str, maxTagRunes); frag != "" {
				parts = append(parts, "@"+kw+" "+frag)
			}
		}
	}
	if d, present := s["default"]; present {
		if canon, err := canonicalJSON(d); err == nil && len(canon) <= maxTagRunes {
			parts = append(parts, "@default "+escapeCommentEnd(string(canon)))
		}
	}
	if dep, ok := s["deprecated"].(bool); ok && dep {
		parts = append(parts, "@deprecated")
	}
	return strings.Join(parts, " ")
}

// maxRefExpansions bounds how many $refs one document expands, and maxResolvedNodes how many
// schema objects the expansions may copy in all, so that a schema whose definitions refer to
// each other many times over (or are each very large) cannot blow up the declarations.
const (
	maxRefExpansions = 256
	maxResolvedNodes = 50_000
)

// maxEnumMembers bounds the literals an enum renders as; a longer enum renders as the types of
// its values (a 100,000-value enum is a string, not a megabyte union).
const maxEnumMembers = 64

// enumTypes is the union of the JSON types of an enum's values.
func enumTypes(values []any) tsType {
	var members []tsType
	seen := map[string]bool{}
	for _, v := range values {
		t := tsUnknown
		switch v.(type) {
		case string:
			t = atom("string")
		case json.Number, float64:
			t = atom("number")
		case bool:
			t = atom("boolean")
		case nil:
			t = atom("null")
		}
		if !seen[t.text] {
			seen[t.text] = true
			members = append(members, t)
		}
	}
	return union(members)
}

// resolveRefs returns a copy of a schema document in which every local $ref ("#", or a JSON
// pointer such as "#/$defs/address" or "#/definitions/address") in a position the renderer
// reads (properties, patternProperties, additionalProperties, items, prefixItems, anyOf, oneOf,
// allOf) is replaced by the schema it points to, so that it renders as a real type. A $ref with
// sibling keywords becomes an allOf member beside them. A $ref that points outside the
// document, names an anchor, does not resolve, or refers back into its own expansion (a
// recursive type) is left in place and renders as unknown; so is any past maxRefExpansions.
// The document is not modified.
func resolveRefs(doc any) any {
	v, _ := resolveRefsNamed(doc)
	return v
}

// resolveRefsNamed is resolveRefs that also reports, for each object a reference was replaced
// by (keyed by the identity of the map in the result), the last segment of the reference
// ("address" for "#/$defs/address"): what the referred schema is called.
func resolveRefsNamed(doc any) (any, map[uintptr]string) {
	r := &refResolver{root: doc, budget: maxRefExpansions, nodes: maxResolvedNodes, names: map[uintptr]string{}}
	return r.schema(doc, []string{"#"}, 0), r.names // the root is being expanded: "#" inside it recurses
}

type refResolver struct {
	root   any
	budget int                // $refs that may still be expanded
	nodes  int                // schema objects that may still be copied before expansions stop
	names  map[uintptr]string // see resolveRefsNamed
}

// named records ref as the name of the object v, when it is one.
func (r *refResolver) named(v any, ref string) any {
	if m, ok := v.(map[string]any); ok {
		if i := strings.LastIndexByte(ref, '/'); i >= 0 && i < len(ref)-1 {
			name := ref[i+1:]
			if unescaped, err := url.PathUnescape(name); err == nil {
				name = unescaped
			}
			r.names[reflect.ValueOf(m).Pointer()] = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
		}
	}
	return v
}

// schemaMapKeys, schemaListKeys and schemaSingleKeys are the subschema positions the
// renderer reads.
var (
	schemaMapKeys    = [...]string{"properties", "patternProperties"}
	schemaListKeys   = [...]string{"anyOf", "oneOf", "allOf", "prefixItems"}
	schemaSingleKeys = [...]string{"additionalProperties", "items"}
)

func (r *refResolver) schema(v any, active []string, depth int) any {
	s, ok := v.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return v
	}
	if r.nodes--; r.nodes <= 0 {
		r.budget = 0 // past the copies allowed: no more expansions (their refs render unknown)
	}
	out := make(map[string]any, len(s))
	for k, x := range s {
		out[k] = x
	}
	for _, k := range schemaMapKeys {
		if m, ok := s[k].(map[string]any); ok {
			c := make(map[string]any, len(m))
			for name, sub := range m {
				c[name] = r.schema(sub, active, depth+1)
			}
			out[k] = c
		}
	}
	for _, k := range schemaListKeys {
		if list, ok := s[k].([]any); ok {
			c := make([]any, len(list))
			for i, sub := range list {
				c[i] = r.schema(sub, active, depth+1)
			}
			out[k] = c
		}
	}
	for _, k := range schemaSingleKeys {
		if sub, ok := s[k]; ok {
			if list, isList := sub.([]any); isList { // draft-04 tuple items
				c := make([]any, len(list))
				for i, e := range list {
					c[i] = r.schema(e, active, depth+1)
				}
				out[k] = c
				continue
			}
			out[k] = r.schema(sub, active, depth+1)
		}
	}
	ref, ok := s["$ref"].(string)
	if !ok || slices.Contains(active, ref) || r.budget <= 0 {
		return out
	}
	target, ok := r.lookup(ref)
	if !ok {
		return out
	}
	r.budget--
	resolved := r.schema(target, append(active[:len(active):len(active)], ref), depth+1)
	delete(out, "$ref")
	for _, k := range [...]string{"$schema", "$id", "$defs", "definitions", "$comment", "title"} {
		delete(out, k) // annotations that do not change the type
	}
	if len(out) == 0 || (len(out) == 1 && out["description"] != nil) {
		if d, ok := out["description"]; ok {
			// Keep the referring schema's description for its JSDoc.
			if m, isMap := resolved.(map[string]any); isMap {
				c := make(map[string]any, len(m)+1)
				for k, x := range m {
					c[k] = x
				}
				c["description"] = d
				return r.named(c, ref)
			}
		}
		return r.named(resolved, ref)
	}
	all, _ := out["allOf"].([]any)
	out["allOf"] = append(all[:len(all):len(all)], r.named(resolved, ref))
	return out
}

// lookup resolves a local reference: "#" or "#" followed by a JSON pointer, percent-encoding
// and ~0/~1 escapes decoded.
func (r *refResolver) lookup(ref string) (any, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	if frag == "" {
		return r.root, true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, false // an anchor
	}
	if unescaped, err := url.PathUnescape(frag); err == nil {
		frag = unescaped
	}
	return jsonpointer.Lookup(r.root, frag)
}

// maxTagRunes bounds the value of one JSDoc tag.
const maxTagRunes = 80
