package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// CompileStandard compiles a full standard JSON Schema (draft 2020-12 unless
// its "$schema" names another draft; any keywords) with no DSL rules, for raw
// registrations and upstream MCP tools. JSON returns data compacted.
//
// External references are refused (the error wraps ErrExternalRef); so are
// documents nested deeper than 128 JSON levels and numbers beyond the limits
// Validate applies. Patterns must be Go RE2 syntax (jsonschema/v5 runs Go
// regexp). Violation messages follow the DSL wording where the failing
// keyword is one the DSL has, and jsonschema's otherwise; a violation inside
// a property named "" is reported at its parent object (jsonschema/v5 drops
// the empty path token).
func CompileStandard(data []byte) (s *Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("invalid JSON Schema: %v", r)
		}
	}()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("invalid JSON: unexpected data after the schema")
	}
	w := valueWalker{maxDepth: maxStandardDepth, limit: 1}
	w.walk(doc, 0)
	if len(w.out) > 0 {
		return nil, fmt.Errorf("at %s: %s", pointerOrRoot(pointer(w.out[0].tokens)), w.out[0].msg)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	c := newCompiler()
	const url = internalBase + "standard.json"
	if err := c.AddResource(url, bytes.NewReader(compact.Bytes())); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	root, err := c.Compile(url)
	if err != nil {
		return nil, invalidSchema(err)
	}
	return &Schema{doc: compact.Bytes(), root: root, index: indexSchemas(root)}, nil
}

// invalidSchema words a jsonschema compile error without the package's
// internal document URL, keeping the error chain (ErrExternalRef).
func invalidSchema(err error) error {
	var se *jsonschema.SchemaError
	if errors.As(err, &se) && se.Err != nil {
		err = se.Err
	}
	return &wrapped{msg: "invalid JSON Schema: " + strings.TrimPrefix(err.Error(), "jsonschema: "), err: err}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

func pointerOrRoot(p string) string {
	if p == "" {
		return "root"
	}
	return p
}
