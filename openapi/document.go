package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/codemode/codemode/internal/jsonpointer"
)

// Error reports what is wrong with a document and where.
type Error struct {
	Pointer string // JSON pointer (RFC 6901) into the document; "" is the root
	Reason  string
}

func (e *Error) Error() string {
	return "openapi: " + strconv.Quote(e.Pointer) + ": " + e.Reason
}

func errorAt(pointer, format string, args ...any) error {
	return &Error{Pointer: pointer, Reason: fmt.Sprintf(format, args...)}
}

// Document is a parsed OpenAPI 3.0 or 3.1 description. It is immutable.
type Document struct {
	version string         // the "openapi" field, e.g. "3.0.3"
	root    map[string]any // the decoded document; numbers are json.Number
	paths   []string       // the keys of /paths, in document order
}

// Parse decodes an OpenAPI 3.0 or 3.1 document written in JSON or YAML. It
// checks the shape Operations relies on (an "openapi" version 3.0.x or
// 3.1.x and a "paths" object); operations themselves are checked by
// Operations.
func Parse(doc []byte) (*Document, error) {
	if !isJSON(doc) {
		var err error
		if doc, err = yamlToJSON(doc); err != nil {
			return nil, err
		}
	}
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("openapi: decode document: %w", err)
	}
	if root == nil {
		return nil, errorAt("", "document is not a JSON object")
	}
	version, _ := root["openapi"].(string)
	if !strings.HasPrefix(version, "3.0") && !strings.HasPrefix(version, "3.1") {
		return nil, errorAt("/openapi", "want an OpenAPI version 3.0.x or 3.1.x, have %q", version)
	}
	d := &Document{version: version, root: root}
	switch paths := root["paths"].(type) {
	case nil: // 3.1 allows a document of webhooks or components only
	case map[string]any:
		var ordered struct {
			Paths orderedKeys `json:"paths"`
		}
		if err := json.Unmarshal(doc, &ordered); err != nil {
			return nil, fmt.Errorf("openapi: decode /paths: %w", err)
		}
		d.paths = ordered.Paths
		if len(d.paths) != len(paths) {
			return nil, errorAt("/paths", "duplicate path keys")
		}
	default:
		return nil, errorAt("/paths", "not an object")
	}
	return d, nil
}

// Version is the document's "openapi" field.
func (d *Document) Version() string { return d.version }

// orderedKeys decodes the keys of a JSON object in document order; a map
// would lose the order that operation names are made unique in.
type orderedKeys []string

func (k *orderedKeys) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("not an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		*k = append(*k, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// resolve follows a local reference ("#/components/schemas/x") and returns
// the target and its JSON pointer.
func (d *Document) resolve(ref, at string) (any, string, error) {
	pointer, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", errorAt(at, "only local references (#/...) are supported, have %q", ref)
	}
	if pointer != "" && !strings.HasPrefix(pointer, "/") {
		return nil, "", errorAt(at, "reference %q is not a JSON pointer", ref)
	}
	v, ok := jsonpointer.Lookup(d.root, pointer)
	if !ok {
		return nil, "", errorAt(at, "reference %q resolves to nothing", ref)
	}
	return v, pointer, nil
}

// follow resolves v when it is a Reference Object ({"$ref": ...}), following
// chains of references up to a bound, and returns the object and its pointer.
func (d *Document) follow(v any, at string) (map[string]any, string, error) {
	for range maxRefChain {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "", errorAt(at, "not an object")
		}
		ref, isRef := m["$ref"].(string)
		if !isRef {
			return m, at, nil
		}
		var err error
		if v, at, err = d.resolve(ref, pointerJoin(at, "$ref")); err != nil {
			return nil, "", err
		}
	}
	return nil, "", errorAt(at, "reference chain longer than %d", maxRefChain)
}

const maxRefChain = 32

var escapeToken = strings.NewReplacer("~", "~0", "/", "~1")

// pointerJoin appends reference tokens to a JSON pointer, escaping them.
func pointerJoin(base string, tokens ...string) string {
	var b strings.Builder
	b.WriteString(base)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken.Replace(t))
	}
	return b.String()
}

// Servers lists the URLs of the document's top-level servers, in order,
// with each server variable replaced by its default. They may be relative
// (to the document's own URL).
func (d *Document) Servers() []string {
	list, _ := d.root["servers"].([]any)
	var out []string
	for _, s := range list {
		m, _ := s.(map[string]any)
		u, _ := m["url"].(string)
		if u == "" {
			continue
		}
		vars, _ := m["variables"].(map[string]any)
		for name, v := range vars {
			def, _ := v.(map[string]any)["default"].(string)
			u = strings.ReplaceAll(u, "{"+name+"}", def)
		}
		out = append(out, u)
	}
	return out
}

// Security is what a document's security schemes say of credentials a
// host may configure without repeating the document.
type Security struct {
	// APIKeyName and APIKeyIn name the first apiKey scheme's parameter
	// ("header" or "query"; "" when there is none).
	APIKeyName, APIKeyIn string
	// TokenURL is the first OAuth 2 scheme's client credentials token URL.
	TokenURL string
}

// Security reads the document's components.securitySchemes, in name order.
func (d *Document) Security() Security {
	var out Security
	comps, _ := d.root["components"].(map[string]any)
	schemes, _ := comps["securitySchemes"].(map[string]any)
	for _, name := range sortedKeys(schemes) {
		s, _ := schemes[name].(map[string]any)
		switch s["type"] {
		case "apiKey":
			in, _ := s["in"].(string)
			key, _ := s["name"].(string)
			if out.APIKeyIn == "" && key != "" && (in == "header" || in == "query") {
				out.APIKeyName, out.APIKeyIn = key, in
			}
		case "oauth2":
			flows, _ := s["flows"].(map[string]any)
			cc, _ := flows["clientCredentials"].(map[string]any)
			if u, _ := cc["tokenUrl"].(string); out.TokenURL == "" && u != "" {
				out.TokenURL = u
			}
		}
	}
	return out
}
