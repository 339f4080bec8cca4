package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"weak"

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
	l := lazyFor(compact.Bytes())
	if compact.Len() <= eagerCompileBytes {
		if _, err := l.get(); err != nil {
			return nil, err
		}
	} else if err := checkStandard(doc); err != nil {
		return nil, err
	}
	return &Schema{doc: compact.Bytes(), lazy: l}, nil
}

// eagerCompileBytes is the size up to which CompileStandard compiles a document at once, so
// that every error it could have is reported there; a larger one gets checkStandard's checks
// and is compiled on first use.
const eagerCompileBytes = 4 << 10

// checkStandard makes the checks of compiling that a large document most often fails, without
// compiling it: every "$ref" is local, "$schema" names a draft jsonschema/v5 knows, every
// "pattern" and "patternProperties" key is a Go regular expression. Compiling waits for the
// schema's first use (most tools of a large catalog are never called, and compiling costs
// time and memory per operation: BENCHMARKS.md, "Figures behind the code's choices"); a document that passes these checks and
// still does not compile fails each validation with the reason.
func checkStandard(doc any) error {
	var walk func(v any, path []string) error
	walk = func(v any, path []string) error {
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				if err := walk(e, append(path, strconv.Itoa(i))); err != nil {
					return err
				}
			}
		case map[string]any:
			for k, e := range x {
				switch k {
				case "$ref", "$dynamicRef", "$recursiveRef":
					if ref, ok := e.(string); ok && !strings.HasPrefix(ref, "#") {
						return fmt.Errorf("at %s: invalid JSON Schema: %w: %q", pointerOrRoot(pointer(append(path, k))), ErrExternalRef, ref)
					}
				case "$schema":
					if id, ok := e.(string); ok && len(path) == 0 && !knownDrafts[strings.TrimSuffix(id, "#")] {
						return fmt.Errorf("at /$schema: invalid JSON Schema: %w: %q", ErrExternalRef, id)
					}
				case "pattern":
					if p, ok := e.(string); ok {
						if _, err := regexp.Compile(p); err != nil {
							return fmt.Errorf("at %s: invalid JSON Schema: invalid regex pattern %q", pointerOrRoot(pointer(append(path, k))), p)
						}
					}
				case "patternProperties":
					if m, ok := e.(map[string]any); ok {
						for p := range m {
							if _, err := regexp.Compile(p); err != nil {
								return fmt.Errorf("at %s: invalid JSON Schema: invalid regex pattern %q", pointerOrRoot(pointer(append(path, k))), p)
							}
						}
					}
				}
				if err := walk(e, append(path, k)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(doc, nil)
}

// knownDrafts are the "$schema" values jsonschema/v5 resolves without fetching.
var knownDrafts = map[string]bool{
	"http://json-schema.org/schema": true, "https://json-schema.org/draft/2020-12/schema": true,
	"https://json-schema.org/draft/2019-09/schema": true, "http://json-schema.org/draft-07/schema": true,
	"http://json-schema.org/draft-06/schema": true, "http://json-schema.org/draft-04/schema": true,
}

// lazy is a standard schema's compiled form, made on first use. Schemas with the same
// document share one (tools without an output schema of their own all have the same), for as
// long as any of them is alive.
type lazy struct {
	doc  []byte
	once sync.Once
	c    *compiled
	err  error
}

func (l *lazy) get() (*compiled, error) {
	l.once.Do(func() { l.c, l.err = compileStandard(l.doc) })
	return l.c, l.err
}

// lazies maps a document's hash to its lazy compilation, weakly: an entry whose schemas are
// all gone is dropped.
var lazies sync.Map // [32]byte → weak.Pointer[lazy]

func lazyFor(doc []byte) *lazy {
	key := sha256.Sum256(doc)
	if w, ok := lazies.Load(key); ok {
		if l := w.(weak.Pointer[lazy]).Value(); l != nil {
			return l
		}
	}
	l := &lazy{doc: doc}
	wp := weak.Make(l)
	if prev, loaded := lazies.Swap(key, wp); loaded {
		if old := prev.(weak.Pointer[lazy]).Value(); old != nil {
			lazies.Store(key, prev) // another goroutine won: use its
			return old
		}
	}
	runtime.AddCleanup(l, func(key [32]byte) { lazies.CompareAndDelete(key, wp) }, key)
	return l
}

// compileStandard compiles a checked standard document.
func compileStandard(doc []byte) (c *compiled, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("invalid JSON Schema: %v", r)
		}
	}()
	comp := newCompiler()
	const url = internalBase + "standard.json"
	if err := comp.AddResource(url, bytes.NewReader(doc)); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	root, err := comp.Compile(url)
	if err != nil {
		return nil, invalidSchema(err)
	}
	return &compiled{root: root, index: indexSchemas(root)}, nil
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
