package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Kind says what a DSL schema describes, which decides the root rules.
type Kind int

const (
	// Parameters: the root must be an object (type "object", or omitted
	// type with properties) and is an open object unless it sets
	// additionalProperties.
	Parameters Kind = iota
	// Value (output schemas): any root type; a root object states
	// additionalProperties like every other object.
	Value
)

func (k Kind) String() string {
	switch k {
	case Parameters:
		return "parameters"
	case Value:
		return "value"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// MaxDepth is how many levels of nested schemas (properties, items, oneOf
// alternatives) a DSL schema may have below its root.
const MaxDepth = 10000

// maxNodes bounds the nodes of a DSL schema, counting a shared subschema once
// per place it is used (so that a small graph cannot expand exponentially).
const maxNodes = 100000

// maxStandardDepth bounds the JSON nesting of a CompileStandard document:
// jsonschema/v5 compiles in time cubic in depth and such documents cannot be
// chunked.
const maxStandardDepth = 128

// ErrExternalRef is wrapped by the error of any compile that would have had
// to fetch a document ($ref or $schema naming an external URL). Nothing is
// ever loaded.
var ErrExternalRef = errors.New("external schema references are not allowed")

// internalBase prefixes the URLs of the documents this package compiles;
// relative references resolve against it.
const internalBase = "codemode:///"

func refuseLoad(url string) (io.ReadCloser, error) {
	return nil, fmt.Errorf("%w: %s", ErrExternalRef, strings.TrimPrefix(url, internalBase))
}

// Error is a schema rejected by Parse or Compile. Path names the offending
// place as dotted keywords from the root ("properties.a.items"; property
// names that are not plain identifiers are quoted).
type Error struct {
	Path    string
	Message string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "(root): " + e.Message
	}
	return e.Path + ": " + e.Message
}

// path is a schema location, built as a linked list and rendered on error.
type path struct {
	parent *path
	seg    string
}

func (p *path) key(seg string) *path { return &path{p, seg} }

func (p *path) prop(name string) *path { return &path{p, propSegment(name)} }

func (p *path) index(i int) *path { return &path{p, strconv.Itoa(i)} }

func (p *path) String() string {
	var segs []string
	for ; p != nil; p = p.parent {
		segs = append(segs, p.seg)
	}
	for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
		segs[i], segs[j] = segs[j], segs[i]
	}
	return strings.Join(segs, ".")
}

func (p *path) errorf(format string, args ...any) *Error {
	return &Error{Path: p.String(), Message: fmt.Sprintf(format, args...)}
}

var plainName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

func propSegment(name string) string {
	if plainName.MatchString(name) {
		return name
	}
	return quoteJSON(name)
}

// Schema is a compiled schema: immutable and safe for concurrent use.
type Schema struct {
	doc      []byte    // model-facing JSON Schema
	compiled *compiled // DSL schemas: compiled at Compile; nil for standard ones
	lazy     *lazy     // standard schemas: compiled on first use, shared by equal documents
	dsl      bool      // chunk boundaries may appear in errors
	fast     *fastNode // DSL schemas: the fast path for valid input (nil otherwise)
}

// compiled is a schema as jsonschema/v5 runs it.
type compiled struct {
	root  *jsonschema.Schema            // chunk 0, or the standard schema
	index map[string]*jsonschema.Schema // compiled subschemas by Location, for messages
}

// program returns the compiled form, compiling a standard schema on first use; err says why
// a standard schema that passed CompileStandard's checks still does not compile.
func (s *Schema) program() (*compiled, error) {
	if s.lazy != nil {
		return s.lazy.get()
	}
	return s.compiled, nil
}

// JSON returns the model-facing JSON Schema, a fresh copy on every call. For
// DSL schemas it has no "$schema" (its keywords mean the same under draft-07
// and 2020-12); for CompileStandard it is the input, compacted.
func (s *Schema) JSON() []byte { return bytes.Clone(s.doc) }

// CompileJSON parses a DSL schema from JSON and compiles it.
func CompileJSON(data []byte, kind Kind) (*Schema, error) {
	n, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return Compile(n, kind)
}

// Compile checks every DSL rule on n and compiles it. A rejected schema
// yields an *Error naming the path of the first problem (properties in name
// order). Rules, beyond the per-type keyword sets documented on Node:
//   - Parameters roots are objects and stay open unless additionalProperties
//     is set; every other object sets additionalProperties.
//   - property names are non-empty valid UTF-8; required names declared
//     properties only, once each, on open and closed objects alike (declare
//     an any-value property with JSON() if needed).
//   - enum is non-empty; enum, const and default values are JSON values of the
//     node's type (an integer accepts 3 and 3.0, not 1.5).
//   - oneOf has at least two alternatives; patterns are valid RE2; bounds are
//     finite, non-negative where they count, and not contradictory.
//   - the graph is acyclic (shared subschemas are fine), at most MaxDepth
//     levels deep and at most 100000 nodes when expanded.
func Compile(n *Node, kind Kind) (*Schema, error) {
	if kind != Parameters && kind != Value {
		return nil, fmt.Errorf("unknown kind %v", kind)
	}
	c := checker{kind: kind, onPath: map[*Node]struct{}{}}
	if err := c.node(n, nil, 0); err != nil {
		return nil, err
	}
	var chunks [][]byte
	renderer{chunks: &chunks}.chunk(n)
	root, index, err := compileChunks(chunks)
	if err != nil {
		return nil, fmt.Errorf("compile generated JSON Schema: %w", err)
	}
	return &Schema{doc: renderer{}.node(nil, n, 0), compiled: &compiled{root: root, index: index}, dsl: true, fast: buildFast(n, kind == Parameters, 0)}, nil
}

// checker walks a Node graph once, enforcing the DSL rules.
type checker struct {
	kind   Kind
	onPath map[*Node]struct{} // nodes on the current path, to find cycles
	nodes  int
}

func (c *checker) node(n *Node, p *path, depth int) error {
	if n == nil {
		return p.errorf("schema is nil")
	}
	if depth > MaxDepth {
		return p.errorf("schema is nested deeper than %d levels", MaxDepth)
	}
	if c.nodes++; c.nodes > maxNodes {
		return p.errorf("schema has more than %d nodes (a shared subschema counts once per use)", maxNodes)
	}
	if _, ok := c.onPath[n]; ok {
		return p.errorf("schema contains itself (cyclic Node graph)")
	}
	c.onPath[n] = struct{}{}
	defer delete(c.onPath, n)

	t := n.effectiveType()
	if !knownType(t) {
		return p.errorf("unknown type %q", t)
	}
	if err := checkKeywords(n, t, n.Type == "", p); err != nil {
		return err
	}
	if !utf8.ValidString(n.Description) {
		return p.key("description").errorf("description is not valid UTF-8")
	}
	root := depth == 0
	if root && c.kind == Parameters && t != TypeObject {
		return p.errorf("parameters must be an object schema, got type %q", t)
	}
	if err := c.typed(n, t, p, depth, root); err != nil {
		return err
	}
	if n.Enum != nil {
		if len(n.Enum) == 0 {
			return p.key("enum").errorf("enum must list at least one value")
		}
		for i, v := range n.Enum {
			if err := checkData(v, t, p.key("enum").index(i)); err != nil {
				return err
			}
		}
	}
	if n.HasConst || n.Const != nil {
		if err := checkData(n.Const, t, p.key("const")); err != nil {
			return err
		}
	}
	if n.HasDefault || n.Default != nil {
		if err := checkData(n.Default, t, p.key("default")); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) typed(n *Node, t string, p *path, depth int, root bool) error {
	switch t {
	case TypeObject:
		if n.AdditionalProperties == nil && !(root && c.kind == Parameters) {
			return p.errorf("object must set additionalProperties to true or false")
		}
		seen := make(map[string]bool, len(n.Required))
		for i, name := range n.Required {
			_, declared := n.Properties[name]
			switch {
			case seen[name]:
				return p.key("required").index(i).errorf("property %s is listed twice", quoteJSON(name))
			case !declared:
				return p.key("required").index(i).errorf("required property %s is not declared in properties", quoteJSON(name))
			}
			seen[name] = true
		}
		for _, name := range sortedKeys(n.Properties) {
			if name == "" {
				// jsonschema/v5 would report violations inside it at
				// the parent object's path.
				return p.key("properties").errorf("property names must not be empty")
			}
			if !utf8.ValidString(name) {
				return p.key("properties").errorf("property name %s is not valid UTF-8", quoteJSON(name))
			}
			if err := c.node(n.Properties[name], p.key("properties").prop(name), depth+1); err != nil {
				return err
			}
		}
	case TypeArray:
		if err := checkCounts(p, "minItems", n.MinItems, "maxItems", n.MaxItems); err != nil {
			return err
		}
		if n.Items != nil {
			return c.node(n.Items, p.key("items"), depth+1)
		}
	case TypeOneOf:
		if len(n.OneOf) < 2 {
			return p.key("oneOf").errorf("oneOf needs at least two alternatives, got %d", len(n.OneOf))
		}
		for i, branch := range n.OneOf {
			if err := c.node(branch, p.key("oneOf").index(i), depth+1); err != nil {
				return err
			}
		}
	case TypeString:
		if err := checkCounts(p, "minLength", n.MinLength, "maxLength", n.MaxLength); err != nil {
			return err
		}
		if n.Pattern != "" {
			if !utf8.ValidString(n.Pattern) {
				return p.key("pattern").errorf("pattern is not valid UTF-8")
			}
			if _, err := regexp.Compile(n.Pattern); err != nil {
				return p.key("pattern").errorf("invalid pattern (Go RE2 syntax): %v", err)
			}
		}
	case TypeNumber, TypeInteger:
		return checkBounds(n, p)
	}
	return nil
}

// checkCounts checks a pair of minX/maxX counts.
func checkCounts(p *path, minName string, lo *int, maxName string, hi *int) error {
	for _, c := range []struct {
		name string
		v    *int
	}{{minName, lo}, {maxName, hi}} {
		if c.v != nil && (*c.v < 0 || *c.v > math.MaxInt32) {
			return p.key(c.name).errorf("%s must be between 0 and %d, got %d", c.name, math.MaxInt32, *c.v)
		}
	}
	if lo != nil && hi != nil && *lo > *hi {
		return p.errorf("%s (%d) is greater than %s (%d)", minName, *lo, maxName, *hi)
	}
	return nil
}

// checkBounds checks the numeric bounds are finite and leave some number.
func checkBounds(n *Node, p *path) error {
	type bound struct {
		name      string
		v         *float64
		exclusive bool
	}
	lower := []bound{{"minimum", n.Minimum, false}, {"exclusiveMinimum", n.ExclusiveMinimum, true}}
	upper := []bound{{"maximum", n.Maximum, false}, {"exclusiveMaximum", n.ExclusiveMaximum, true}}
	for _, b := range append(append([]bound(nil), lower...), upper...) {
		if b.v != nil && (math.IsNaN(*b.v) || math.IsInf(*b.v, 0)) {
			return p.key(b.name).errorf("%s must be a finite number", b.name)
		}
	}
	for _, lo := range lower {
		for _, hi := range upper {
			if lo.v == nil || hi.v == nil {
				continue
			}
			if *lo.v > *hi.v || *lo.v == *hi.v && (lo.exclusive || hi.exclusive) {
				return p.errorf("%s (%v) and %s (%v) leave no allowed number", lo.name, *lo.v, hi.name, *hi.v)
			}
		}
	}
	return nil
}

// checkData checks an enum, const or default value: JSON data of type t.
func checkData(v any, t string, p *path) error {
	w := valueWalker{maxDepth: maxEmbeddedDepth, strict: true, limit: 1}
	w.walk(v, 0)
	if len(w.out) > 0 {
		q := p
		for _, tok := range w.out[0].tokens {
			q = q.prop(tok)
		}
		return q.errorf("%s", w.out[0].msg)
	}
	if t != TypeOneOf && !hasType(v, t) {
		return p.errorf("%s is not of type %s", preview(v), t)
	}
	return nil
}

func knownType(t string) bool {
	switch t {
	case TypeString, TypeNumber, TypeInteger, TypeBoolean, TypeNull, TypeArray, TypeObject, TypeJSON, TypeOneOf:
		return true
	}
	return false
}

// keyword is a type-specific keyword and the types it applies to.
type keyword struct {
	name  string
	set   func(*Node) bool
	types []string
}

var (
	numeric   = []string{TypeNumber, TypeInteger}
	valueKind = []string{TypeString, TypeNumber, TypeInteger, TypeBoolean, TypeNull, TypeArray, TypeObject, TypeJSON}
	keywords  = []keyword{
		{"properties", func(n *Node) bool { return n.Properties != nil }, []string{TypeObject}},
		{"required", func(n *Node) bool { return n.Required != nil }, []string{TypeObject}},
		{"additionalProperties", func(n *Node) bool { return n.AdditionalProperties != nil }, []string{TypeObject}},
		{"items", func(n *Node) bool { return n.Items != nil }, []string{TypeArray}},
		{"minItems", func(n *Node) bool { return n.MinItems != nil }, []string{TypeArray}},
		{"maxItems", func(n *Node) bool { return n.MaxItems != nil }, []string{TypeArray}},
		{"oneOf", func(n *Node) bool { return n.OneOf != nil }, []string{TypeOneOf}},
		{"minimum", func(n *Node) bool { return n.Minimum != nil }, numeric},
		{"maximum", func(n *Node) bool { return n.Maximum != nil }, numeric},
		{"exclusiveMinimum", func(n *Node) bool { return n.ExclusiveMinimum != nil }, numeric},
		{"exclusiveMaximum", func(n *Node) bool { return n.ExclusiveMaximum != nil }, numeric},
		{"minLength", func(n *Node) bool { return n.MinLength != nil }, []string{TypeString}},
		{"maxLength", func(n *Node) bool { return n.MaxLength != nil }, []string{TypeString}},
		{"pattern", func(n *Node) bool { return n.Pattern != "" }, []string{TypeString}},
		{"enum", func(n *Node) bool { return n.Enum != nil }, valueKind},
		{"const", func(n *Node) bool { return n.HasConst || n.Const != nil }, valueKind},
	}
)

// checkKeywords rejects a keyword set on a node whose type it does not apply
// to. inferred says the type was not written but derived (see Node).
func checkKeywords(n *Node, t string, inferred bool, p *path) error {
	for _, kw := range keywords {
		if !kw.set(n) || slices.Contains(kw.types, t) {
			continue
		}
		switch {
		case t == TypeOneOf:
			return p.errorf("keyword %q cannot be combined with oneOf", kw.name)
		case inferred:
			return p.errorf("keyword %q requires \"type\": %q", kw.name, kw.types[0])
		default:
			return p.errorf("keyword %q does not apply to type %q", kw.name, t)
		}
	}
	return nil
}

// compileChunks compiles rendered chunks with jsonschema/v5, children first,
// and returns chunk 0 and the index of every compiled subschema.
func compileChunks(chunks [][]byte) (*jsonschema.Schema, map[string]*jsonschema.Schema, error) {
	c := newCompiler()
	// Draft-07 validates the generated documents against a much cheaper
	// meta-schema than 2020-12; every DSL keyword means the same in both.
	c.Draft = jsonschema.Draft7
	compiled := make([]*jsonschema.Schema, len(chunks))
	c.RegisterExtension("codemode-chunk", nil, chunkCompiler{compiled})
	for i := len(chunks) - 1; i >= 0; i-- {
		url := internalBase + "chunk/" + strconv.Itoa(i) + ".json"
		if err := c.AddResource(url, bytes.NewReader(chunks[i])); err != nil {
			return nil, nil, err
		}
		s, err := c.Compile(url)
		if err != nil {
			return nil, nil, err
		}
		compiled[i] = s
	}
	return compiled[0], indexSchemas(compiled...), nil
}

func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.LoadURL = refuseLoad
	return c
}

// chunkCompiler compiles the chunk keyword into a reference to an already
// compiled child chunk.
type chunkCompiler struct{ compiled []*jsonschema.Schema }

func (cc chunkCompiler) Compile(_ jsonschema.CompilerContext, m map[string]any) (jsonschema.ExtSchema, error) {
	raw, ok := m[chunkKeyword]
	if !ok {
		return nil, nil
	}
	num, _ := raw.(json.Number)
	i, err := strconv.Atoi(string(num))
	if err != nil || i < 0 || i >= len(cc.compiled) || cc.compiled[i] == nil {
		return nil, fmt.Errorf("bad chunk reference %v", raw)
	}
	return chunkRef{cc.compiled[i]}, nil
}

// chunkRef validates the value at a chunk boundary against the child chunk,
// starting a fresh jsonschema validation (its error paths are relative to the
// boundary; Validate re-bases them).
type chunkRef struct{ target *jsonschema.Schema }

func (r chunkRef) Validate(ctx jsonschema.ValidationContext, v any) error {
	err := r.target.Validate(v)
	if err == nil {
		return nil
	}
	boundary := ctx.Error(chunkKeyword, "nested schema failed")
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		boundary.Causes = []*jsonschema.ValidationError{ve}
	} else {
		boundary.Message = err.Error()
	}
	return boundary
}
