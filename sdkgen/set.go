package sdkgen

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	goruntime "runtime"
	"slices"
	"sync"

	"github.com/codemode/codemode/internal/jsontext"
)

// RunCodeName is the name of the Code Mode transport tool. It is never part of the SDK: NewSet
// drops any tool so named.
const RunCodeName = "run_code"

// Tool is the model-visible definition of one tool, as the caller's resolved view presents it.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema (standard form) of the arguments. It may be anything,
	// including invalid JSON or exotic schemas from upstream MCP servers; empty means the tool
	// declares no parameters (an open object).
	Parameters json.RawMessage
	// Output is the JSON Schema of the tool's value; empty means unknown.
	Output json.RawMessage
}

// Set is a normalized tool set: sorted by name (byte order), without run_code, with one tool per
// name. A Set is immutable and safe for concurrent use; a nil *Set behaves as the empty set.
type Set struct {
	tools   []entry // sorted by name; names unique
	version string

	sharedOnce  sync.Once
	sharedTypes *sharedTypes // the declared shared types (shared.go); set by sharedOnce
	signatures  sync.Map     // name → Signature, rendered once
}

// entry is one tool of a Set. Its schemas are kept as canonical text only and decoded when a
// text is rendered, so a large catalog costs about the size of its definitions.
type entry struct {
	name, description string
	params            schema // Parameters
	output            schema // Output
}

// schema is a JSON Schema document in canonical form.
type schema struct {
	state schemaState
	canon []byte // canonical bytes (sorted keys) when valid; the trimmed raw bytes otherwise
}

// value decodes a valid schema's canonical text (with json.Number); nil otherwise. Each call
// returns a fresh tree that the caller may keep or change.
func (sc schema) value() any {
	if sc.state != schemaValid {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(sc.canon))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // cannot happen: canon was encoded from a decoded value
	}
	return v
}

// raw returns the schema as the Tool carries it: canonical JSON, the invalid text as given, or
// nothing.
func (sc schema) raw() json.RawMessage { return bytes.Clone(sc.canon) }

type schemaState uint8

const (
	schemaEmpty   schemaState = iota // no schema given
	schemaValid                      // one well-formed JSON value
	schemaInvalid                    // anything else; rendered as unknown
)

// NewSet normalizes tools into a Set. The input slice is not retained. A tool named run_code is
// dropped. Names in a resolved view are unique; should two tools share a name anyway, the one
// that sorts first by (description, parameters, output) in canonical form is kept, so the result
// never depends on input order.
func NewSet(tools []Tool) *Set {
	entries := make([]entry, 0, len(tools))
	from := make([]int, 0, len(tools)) // entries[i] is tools[from[i]]
	for i, t := range tools {
		if t.Name != RunCodeName {
			entries = append(entries, entry{name: t.Name, description: t.Description})
			from = append(from, i)
		}
	}
	// Canonicalizing the schemas is most of the work: spread it over the processors.
	workers := min(goruntime.GOMAXPROCS(0), len(entries)/64+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(entries); i += workers {
				t := tools[from[i]]
				entries[i].params, entries[i].output = decodeSchema(t.Parameters), decodeSchema(t.Output)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(entries, compareEntries)
	entries = slices.CompactFunc(entries, func(a, b entry) bool { return a.name == b.name })
	return &Set{tools: entries, version: versionOf(entries)}
}

// compareEntries orders by name, then by canonical content, so that sorting is total.
func compareEntries(a, b entry) int {
	return cmp.Or(
		cmp.Compare(a.name, b.name),
		cmp.Compare(a.description, b.description),
		compareSchemas(a.params, b.params),
		compareSchemas(a.output, b.output),
	)
}

func compareSchemas(a, b schema) int {
	return cmp.Or(cmp.Compare(a.state, b.state), bytes.Compare(a.canon, b.canon))
}

// Version returns the set's content hash: 32 hex digits. It is the ETag and cache key of every
// text rendered from the set: it changes exactly when a name, description or schema changes
// (schemas compared as JSON data, so key order and whitespace do not count), never with the
// order in which tools were given.
func (s *Set) Version() string {
	if s == nil {
		return emptyVersion
	}
	return s.version
}

// Tools returns a copy of the set's tools in order, each schema in canonical form (sorted
// keys; an invalid schema as it was given).
func (s *Set) Tools() []Tool {
	if s == nil {
		return []Tool{}
	}
	out := make([]Tool, len(s.tools))
	for i, e := range s.tools {
		out[i] = e.tool()
	}
	return out
}

// Len is the number of tools in the set.
func (s *Set) Len() int { return len(s.entries()) }

// Tool returns the named tool (as Tools does); ok is false when the set has none so named.
func (s *Set) Tool(name string) (t Tool, ok bool) {
	e, ok := s.find(name)
	if !ok {
		return Tool{}, false
	}
	return e.tool(), true
}

// find returns the named entry by binary search.
func (s *Set) find(name string) (entry, bool) {
	entries := s.entries()
	i, ok := slices.BinarySearchFunc(entries, name, func(e entry, name string) int { return cmp.Compare(e.name, name) })
	if !ok {
		return entry{}, false
	}
	return entries[i], true
}

func (e entry) tool() Tool {
	return Tool{Name: e.name, Description: e.description, Parameters: e.params.raw(), Output: e.output.raw()}
}

// entries returns the sorted entries; nil for a nil set.
func (s *Set) entries() []entry {
	if s == nil {
		return nil
	}
	return s.tools
}

var emptyVersion = versionOf(nil)

// formatRevision is hashed into every Version. Bump it whenever a change to this package makes
// the same tool set render differently, so that ETags and caches keyed by Version do not serve
// text from an older generator.
const formatRevision = "codemode-sdk/3"

// versionOf hashes the canonical content: every field length-prefixed, so that no two different
// sets share an encoding.
func versionOf(entries []entry) string {
	h := sha256.New()
	var buf []byte
	field := func(b []byte) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(b)))
		h.Write(buf)
		h.Write(b)
	}
	field([]byte(formatRevision))
	field(binary.AppendUvarint(nil, uint64(len(entries))))
	for _, e := range entries {
		field([]byte(e.name))
		field([]byte(e.description))
		for _, sc := range [...]schema{e.params, e.output} {
			field([]byte{byte(sc.state)})
			field(sc.canon)
		}
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:16])
}

// decodeSchema decodes raw as one JSON value. Whitespace-only input counts as empty; anything
// that is not exactly one JSON value is invalid.
func decodeSchema(raw json.RawMessage) schema {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return schema{state: schemaEmpty}
	}
	if !json.Valid(trimmed) {
		return schema{state: schemaInvalid, canon: bytes.Clone(trimmed)}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return schema{state: schemaInvalid, canon: bytes.Clone(trimmed)}
	}
	canon, err := canonicalJSON(v)
	if err != nil {
		return schema{state: schemaInvalid, canon: bytes.Clone(trimmed)}
	}
	return schema{state: schemaValid, canon: canon}
}

// canonicalJSON encodes a decoded value with sorted object keys (encoding/json sorts map keys)
// and without HTML escaping.
func canonicalJSON(v any) ([]byte, error) { return jsontext.Marshal(v) }
