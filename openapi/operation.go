package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"slices"
	"strconv"
	"strings"

	"github.com/codemode/codemode/internal/jsontext"
)

// Operation is one method of one path, ready to be offered as a tool.
type Operation struct {
	// Name is the tool name: the operationId made valid by the MCP rule
	// ^[A-Za-z0-9_.-]{1,128}$ (each run of other characters becomes "_", so
	// GitHub's "pulls/list" is "pulls_list"), or method_path when there is no
	// operationId. Names are unique within a document: a later operation (in
	// path order, then method order) whose name is taken gets "_2", "_3"...
	Name        string
	OperationID string // as written; may be empty
	Method      string // upper case: GET, PUT, POST, ...
	Pointer     string // the JSON pointer of the operation in the document
	Path        string // the path template, e.g. /repos/{owner}/{repo}/pulls
	Tags        []string
	Summary     string
	// Description is the summary and the description as one text, to be shown
	// as the tool's description. It is not truncated: rendering to a budget is
	// the renderer's job.
	Description string
	// InputSchema is a JSON Schema object whose properties are the path,
	// query and header parameters (cookie parameters are not offered) and the
	// properties of a JSON object request body; a body that is not a plain
	// object, or one whose property names clash with a parameter, is the
	// property "body" instead. additionalProperties is false. Inputs maps
	// each property back to its place in a request.
	InputSchema json.RawMessage
	// Inputs says where each property of InputSchema goes in a request, in
	// the order of InputSchema's properties.
	Inputs []Input
	// ContentType is the media type of the request body ("" without one).
	ContentType string
	// OutputSchema is the JSON Schema of the first 2xx response with a JSON
	// body, or nil when there is none.
	OutputSchema json.RawMessage
	ReadOnly     bool // GET or HEAD
	Idempotent   bool // GET, HEAD, PUT or DELETE
	Deprecated   bool // the document marks the operation deprecated
}

// Input is one property of an operation's input schema and where its value
// goes in the HTTP request.
type Input struct {
	Name string
	In   Location
	// Style and Explode say how a path, query or header parameter's value
	// is serialized (OpenAPI's style and explode, defaults applied: form
	// and exploded for queries, simple and not exploded for path and
	// header); empty for body inputs.
	Style   string
	Explode bool
}

// Location is where an input goes in a request.
type Location string

const (
	InPath  Location = "path"   // substituted into the path template
	InQuery Location = "query"  // a query parameter
	InHead  Location = "header" // a request header
	InField Location = "field"  // a property of the object request body (JSON or form)
	InBody  Location = "body"   // the whole request body
)

// methods are the operation keys of a Path Item, in the order of the
// specification; operations of one path are listed in this order.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Operations returns the document's operations in path order, then method
// order. It fails on the first malformed operation, naming its pointer.
func (d *Document) Operations() ([]Operation, error) {
	var first error
	ops := d.walk(func(err *Error) bool { first = err; return false })
	if first != nil {
		return nil, first
	}
	return ops, nil
}

// Usable returns the operations that convert, in the order of Operations,
// and an error naming the pointer of each path or operation left out. A
// left-out operation does not claim its name.
func (d *Document) Usable() (ops []Operation, leftOut []*Error) {
	ops = d.walk(func(err *Error) bool { leftOut = append(leftOut, err); return true })
	return ops, leftOut
}

// walk converts each operation, reporting each failure to fail; it stops
// when fail returns false.
func (d *Document) walk(fail func(*Error) bool) []Operation {
	paths, _ := d.root["paths"].(map[string]any)
	var ops []Operation
	used := map[string]bool{}
	report := func(err error) bool {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Reason: err.Error()}
		}
		return fail(e)
	}
	for _, path := range d.paths {
		at := pointerJoin("/paths", path)
		item, itemAt, err := d.follow(paths[path], at)
		if err != nil {
			if !report(err) {
				return nil
			}
			continue
		}
		for _, method := range methods {
			raw, ok := item[method]
			if !ok {
				continue
			}
			opAt := pointerJoin(itemAt, method)
			spec, ok := raw.(map[string]any)
			if !ok {
				if !report(errorAt(opAt, "operation is not an object")) {
					return nil
				}
				continue
			}
			op, err := d.operation(path, method, item, itemAt, spec, opAt)
			if err != nil {
				if !report(err) {
					return nil
				}
				continue
			}
			op.Name = unique(op.Name, used)
			op.Pointer = opAt
			ops = append(ops, op)
		}
	}
	return ops
}

func (d *Document) operation(path, method string, item map[string]any, itemAt string, spec map[string]any, at string) (Operation, error) {
	op := Operation{
		Method:     strings.ToUpper(method),
		Path:       path,
		ReadOnly:   method == "get" || method == "head",
		Idempotent: method == "get" || method == "head" || method == "put" || method == "delete",
	}
	op.OperationID, _ = spec["operationId"].(string)
	op.Deprecated, _ = spec["deprecated"].(bool)
	op.Summary, _ = spec["summary"].(string)
	desc, _ := spec["description"].(string)
	op.Description = joinText(op.Summary, desc)
	if tags, ok := spec["tags"].([]any); ok {
		for _, t := range tags {
			if s, ok := t.(string); ok {
				op.Tags = append(op.Tags, s)
			}
		}
	}
	op.Name = toolName(op.OperationID)
	if op.Name == "" {
		op.Name = toolName(method + "/" + path)
	}
	var err error
	if op.InputSchema, op.Inputs, op.ContentType, err = d.input(item, itemAt, spec, at); err != nil {
		return Operation{}, err
	}
	if op.OutputSchema, err = d.output(spec, at); err != nil {
		return Operation{}, err
	}
	return op, nil
}

// joinText joins a summary and a description, leaving out the summary when
// the description already starts with it.
func joinText(summary, desc string) string {
	summary, desc = strings.TrimSpace(summary), strings.TrimSpace(desc)
	switch {
	case summary == "" || strings.HasPrefix(desc, summary):
		return desc
	case desc == "":
		return summary
	}
	if !strings.HasSuffix(summary, ".") {
		summary += "."
	}
	return summary + "\n\n" + desc
}

// maxNameLen is the MCP limit on a tool name's length.
const maxNameLen = 128

// toolName maps s onto ^[A-Za-z0-9_.-]{0,128}$: each run of other characters
// becomes one "_", and leading or trailing ones added that way are trimmed.
func toolName(s string) string {
	var b strings.Builder
	pending := false
	for _, r := range s {
		if r < 0x80 && (r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			if pending && b.Len() > 0 {
				b.WriteByte('_')
			}
			pending = false
			b.WriteRune(r)
			continue
		}
		pending = true
	}
	name := b.String()
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return name
}

// unique claims name in used, or the first free name+"_2", name+"_3"...,
// shortening name to keep the suffixed form within the length limit.
func unique(name string, used map[string]bool) string {
	if name == "" {
		name = "operation"
	}
	candidate := name
	for i := 2; used[candidate]; i++ {
		suffix := "_" + strconv.Itoa(i)
		candidate = name[:min(len(name), maxNameLen-len(suffix))] + suffix
	}
	used[candidate] = true
	return candidate
}

// input builds the input schema: parameters first, in declared order (path
// item parameters, overridden by operation ones of the same name and
// location), then the request body.
func (d *Document) input(item map[string]any, itemAt string, spec map[string]any, at string) (schema json.RawMessage, inputs []Input, contentType string, err error) {
	type param struct {
		name, in string
		spec     map[string]any
		at       string
	}
	var params []param
	for _, src := range []struct {
		list any
		at   string
	}{{item["parameters"], pointerJoin(itemAt, "parameters")}, {spec["parameters"], pointerJoin(at, "parameters")}} {
		if src.list == nil {
			continue
		}
		list, ok := src.list.([]any)
		if !ok {
			return nil, nil, "", errorAt(src.at, "not an array")
		}
		for i, raw := range list {
			p, pat, err := d.follow(raw, pointerJoin(src.at, itoa(i)))
			if err != nil {
				return nil, nil, "", err
			}
			name, _ := p["name"].(string)
			in, _ := p["in"].(string)
			if name == "" {
				return nil, nil, "", errorAt(pat, "parameter has no name")
			}
			switch in {
			case "path", "query", "header", "cookie":
			default:
				return nil, nil, "", errorAt(pat, "parameter %q has location %q, want path, query, header or cookie", name, in)
			}
			next := param{name, in, p, pat}
			if j := slices.IndexFunc(params, func(q param) bool { return q.name == name && q.in == in }); j >= 0 {
				params[j] = next
			} else {
				params = append(params, next)
			}
		}
	}

	e := newExpander(d)
	props := &object{}
	var required []string
	for _, p := range params {
		if p.in == "cookie" {
			continue
		}
		if props.has(p.name) {
			return nil, nil, "", errorAt(p.at, "parameter %q is declared in two locations", p.name)
		}
		pschema, err := d.parameterSchema(e, p.spec, p.at)
		if err != nil {
			return nil, nil, "", err
		}
		props.set(p.name, pschema)
		inputs = append(inputs, paramInput(p.name, p.in, p.spec))
		if req, _ := p.spec["required"].(bool); req || p.in == "path" {
			required = append(required, p.name)
		}
	}

	if raw, ok := spec["requestBody"]; ok {
		body, bat, err := d.follow(raw, pointerJoin(at, "requestBody"))
		if err != nil {
			return nil, nil, "", err
		}
		bodyRequired, _ := body["required"].(bool)
		media, mat, isJSON, mediaType, err := d.pickMedia(body["content"], pointerJoin(bat, "content"))
		isForm := strings.HasPrefix(mediaType, "application/x-www-form-urlencoded")
		if err != nil {
			return nil, nil, "", err
		}
		if media != nil {
			contentType = mediaType
			var bschema any = map[string]any{}
			if s, ok := media["schema"]; ok {
				if bschema, err = e.schema(s, pointerJoin(mat, "schema")); err != nil {
					return nil, nil, "", err
				}
			}
			if obj, ok := mergeable(bschema, props, isJSON || isForm); ok {
				for _, name := range sortedKeys(obj.properties) {
					props.set(name, obj.properties[name])
					inputs = append(inputs, Input{Name: name, In: InField})
				}
				if bodyRequired {
					required = append(required, obj.required...)
				}
			} else {
				if props.has("body") {
					return nil, nil, "", errorAt(bat, `a parameter is named "body", the name of a non-object request body`)
				}
				props.set("body", bschema)
				inputs = append(inputs, Input{Name: "body", In: InBody})
				if bodyRequired {
					required = append(required, "body")
				}
			}
		}
	}

	out := &object{}
	out.set("type", "object")
	out.set("properties", props)
	if len(required) > 0 {
		out.set("required", required)
	}
	out.set("additionalProperties", false)
	if schema, err = marshal(out); err != nil {
		return nil, nil, "", err
	}
	return schema, inputs, contentType, nil
}

// paramInput is where a parameter goes, with its serialization.
func paramInput(name, in string, spec map[string]any) Input {
	style, _ := spec["style"].(string)
	explode, set := spec["explode"].(bool)
	if style == "" {
		style = "simple"
		if in == "query" {
			style = "form"
		}
	}
	if !set {
		explode = style == "form"
	}
	return Input{Name: name, In: Location(in), Style: style, Explode: explode}
}

// parameterSchema is the parameter's schema (or that of its first content
// media type) with the parameter's description and deprecation on it.
func (d *Document) parameterSchema(e *expander, p map[string]any, at string) (any, error) {
	var schema any = map[string]any{}
	if s, ok := p["schema"]; ok {
		var err error
		if schema, err = e.schema(s, pointerJoin(at, "schema")); err != nil {
			return nil, err
		}
	} else if content, ok := p["content"]; ok {
		media, mat, _, _, err := d.pickMedia(content, pointerJoin(at, "content"))
		if err != nil {
			return nil, err
		}
		if s, ok := media["schema"]; ok && media != nil {
			if schema, err = e.schema(s, pointerJoin(mat, "schema")); err != nil {
				return nil, err
			}
		}
	}
	m, ok := schema.(map[string]any)
	if !ok { // a boolean schema
		m = map[string]any{}
		if schema == false {
			m["not"] = map[string]any{}
		}
	}
	if desc, _ := p["description"].(string); desc != "" {
		m["description"] = desc
	}
	if dep, _ := p["deprecated"].(bool); dep {
		m["deprecated"] = true
	}
	return m, nil
}

// bodyObject is a request body schema whose properties can be merged into
// the input schema.
type bodyObject struct {
	properties map[string]any
	required   []string
}

// mergeable reports whether a body schema is a plain object (an object
// type, possibly nullable, its properties and nothing else that constrains
// it) of a media type made of fields (JSON or a form) whose property names
// do not clash with the parameters.
func mergeable(schema any, params *object, fields bool) (bodyObject, bool) {
	s, ok := schema.(map[string]any)
	if !fields || !ok {
		return bodyObject{}, false
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return bodyObject{}, false
	}
	for k, v := range s {
		switch k {
		case "properties", "required", "description", "title":
		case "type": // an object, or an object or null (null is no body)
			if t, ok := v.([]any); v != "object" && !(ok && len(t) == 2 && slices.Contains(t, any("object")) && slices.Contains(t, any("null"))) {
				return bodyObject{}, false
			}
		case "additionalProperties":
			if v != false {
				return bodyObject{}, false
			}
		default:
			return bodyObject{}, false
		}
	}
	for name := range props {
		if params.has(name) {
			return bodyObject{}, false
		}
	}
	obj := bodyObject{properties: props}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok && props[name] != nil {
				obj.required = append(obj.required, name)
			}
		}
	}
	return obj, true
}

// output is the schema of the first 2xx response (in status order, 2XX
// last) with a JSON body; nil when there is none.
func (d *Document) output(spec map[string]any, at string) (json.RawMessage, error) {
	responses, ok := spec["responses"].(map[string]any)
	if !ok {
		if spec["responses"] != nil {
			return nil, errorAt(pointerJoin(at, "responses"), "not an object")
		}
		return nil, nil
	}
	var codes []string
	for code := range responses {
		if len(code) == 3 && code[0] == '2' {
			codes = append(codes, code)
		}
	}
	slices.SortFunc(codes, func(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) })
	for _, code := range codes {
		resp, rat, err := d.follow(responses[code], pointerJoin(at, "responses", code))
		if err != nil {
			return nil, err
		}
		media, mat, isJSON, _, err := d.pickMedia(resp["content"], pointerJoin(rat, "content"))
		if err != nil {
			return nil, err
		}
		s, ok := media["schema"]
		if !isJSON || !ok {
			continue
		}
		schema, err := newExpander(d).schema(s, pointerJoin(mat, "schema"))
		if err != nil {
			return nil, err
		}
		return marshal(schema)
	}
	return nil, nil
}

// pickMedia chooses the JSON media type of a content map (application/json,
// then any +json type, in key order), or else its first media type in key
// order. It returns nil when content is absent or empty.
func (d *Document) pickMedia(content any, at string) (media map[string]any, mediaAt string, isJSON bool, mediaType string, err error) {
	if content == nil {
		return nil, "", false, "", nil
	}
	m, ok := content.(map[string]any)
	if !ok {
		return nil, "", false, "", errorAt(at, "not an object")
	}
	keys := sortedKeys(m)
	if len(keys) == 0 {
		return nil, "", false, "", nil
	}
	chosen := keys[0]
	rank := func(k string) int {
		t, _, err := mime.ParseMediaType(k)
		switch {
		case err != nil:
			return 3
		case t == "application/json":
			return 0
		case strings.HasSuffix(t, "+json"):
			return 1
		}
		return 2
	}
	for _, k := range keys {
		if rank(k) < rank(chosen) {
			chosen = k
		}
	}
	mediaAt = pointerJoin(at, chosen)
	if m[chosen] == nil { // an empty Media Type Object written as null
		return map[string]any{}, mediaAt, rank(chosen) < 2, chosen, nil
	}
	media, ok = m[chosen].(map[string]any)
	if !ok {
		return nil, "", false, "", errorAt(mediaAt, "not an object")
	}
	return media, mediaAt, rank(chosen) < 2, chosen, nil
}

// object is a JSON object that keeps its keys in insertion order, so that
// an input schema lists parameters in the order the document declares them.
type object struct {
	keys []string
	vals map[string]any
}

func (o *object) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) has(k string) bool { _, ok := o.vals[k]; return ok }

func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kv, err := marshal(k)
		if err != nil {
			return nil, err
		}
		vv, err := marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kv)
		b.WriteByte(':')
		b.Write(vv)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal encodes v without escaping <, > and & (descriptions are read by
// models, and escapes cost tokens).
func marshal(v any) (json.RawMessage, error) { return jsontext.Marshal(v) }

func itoa(i int) string { return strconv.Itoa(i) }
