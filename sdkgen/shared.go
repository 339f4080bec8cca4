package sdkgen

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Shared types. A subschema that several tools repeat (MCP's content blocks as the output of
// every tool without an output schema; GitHub's simple-user in hundreds of responses) is
// declared once, `type McpContent = …;`, and the members refer to it by name. A subschema is
// declared when, after resolveRefs, it is an object type, a union of objects or a titled array
// of objects, renders to at least minSharedTypeBytes, and is referred to from at least two places
// (tools, or other declared types) once the declared types stand in for their occurrences.
// Subschemas are compared by shape: their canonical JSON without the annotations of their own
// top level (description, title, default, …), which stay with each occurrence. The root of a
// tool's parameters is never declared: a signature shows its arguments.

const (
	minSharedTypeBytes = 150     // one-line rendered size below which a type stays inline
	maxSharedNodes     = 8192    // subschemas examined in one schema document
	maxSharedTotal     = 1 << 20 // subschemas examined in one set
	maxSharedRounds    = 8       // rounds of dropping types referred to from one place only
	maxSharedNameBytes = 48      // a declared type's name, before its numeric suffix
)

// declType is a declared shared type.
type declType struct {
	name string
	doc  string         // the one-line JSDoc of the declaration; "" for none
	node map[string]any // the first occurrence, references resolved
	uses []*declType    // the declared types its declaration refers to directly, by name
}

// sharedTypes are the declared types of a set, computed once (Set.shared).
type sharedTypes struct {
	byShape map[shapeKey]*declType
	list    []*declType // by name
}

type shapeKey [16]byte

// namedRef stands, in a resolved schema tree about to be rendered, for a subschema declared as
// a named type. JSON never decodes into it, so no schema can forge one.
type namedRef struct {
	t    *declType
	orig map[string]any // the occurrence, whose annotations make its property JSDoc
}

// reservedTypeNames are global names a declared type must not take: the SDK's own and those of
// TypeScript's standard and DOM libraries a reader's editor is likely to have loaded.
var reservedTypeNames = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`ToolCallError ToolName ToolArgsMap ToolOutputMap
		Promise PromiseLike Awaited Array ReadonlyArray Record Partial Required Readonly Pick Omit
		Exclude Extract NonNullable Parameters ReturnType InstanceType ConstructorParameters
		ThisType Uppercase Lowercase Capitalize Uncapitalize NoInfer Object String Number Boolean
		Symbol BigInt Function Error TypeError RangeError SyntaxError Date RegExp Map Set WeakMap
		WeakSet WeakRef JSON Math Intl Reflect Proxy ArrayBuffer DataView Uint8Array Int8Array
		Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array BigInt64Array
		BigUint64Array Iterator Iterable Generator AsyncIterator AsyncIterable AsyncGenerator
		PropertyKey Infinity NaN URL URLSearchParams TextEncoder TextDecoder AbortController
		AbortSignal Blob File FormData Headers Request Response Event EventTarget Node Element
		Document Window Text Comment Image Audio Range Selection Location History Storage
		Notification Worker Crypto Performance Console Attr Credential Position Plugin Screen
		Touch Animation Clipboard Geolocation Navigator Option Permissions Report Lock
		ReadableStream WritableStream TransformStream Symbol Tools`) {
		reservedTypeNames[n] = true
	}
}

// shared returns the set's declared types, computing them on first use.
func (s *Set) shared() *sharedTypes {
	if s == nil {
		return nil
	}
	s.sharedOnce.Do(func() { s.sharedTypes = detectShared(s.tools) })
	return s.sharedTypes
}

// skel is the skeleton of a schema document: its candidate subschemas (eligible and large
// enough, by their JSON), each with the candidates nested in it.
type skel struct {
	shape shapeKey
	kids  []*skel
}

// scanned is one object subschema as scanner.scan saw it.
type scanned struct {
	full, shape shapeKey
	size        int  // about the length of its canonical JSON
	opaque      bool // past a cap, in part: never shared
	eligible    bool // an object, an array of objects or a union of objects
	out         any  // the rewritten subschema (rewrite mode)
	skels       []*skel
}

// scanner hashes a resolved schema tree bottom-up: each object subschema's full hash covers
// its canonical JSON, its shape hash the same without its own top-level annotations; a parent
// hashes its children's full hashes, so the work is linear in the tree. In detection mode it
// reports each candidate subschema; in rewrite mode (types set) it returns a copy of the tree
// in which every declared subschema below the root is a namedRef.
type scanner struct {
	budget int
	names  map[uintptr]string // resolveRefsNamed's names of referred schemas
	// detection
	seen func(sc *scanned, m map[string]any, hint string)
	// rewrite
	types *sharedTypes
	used  []*declType
}

// annotationKeys do not change the type a subschema renders to (or, for $defs, after refs are
// resolved): they are left out of its shape.
var annotationKeys = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true, "deprecated": true,
	"$comment": true, "$schema": true, "$id": true, "$defs": true, "definitions": true,
	"readOnly": true, "writeOnly": true, "example": true,
}

func (sn *scanner) scan(m map[string]any, hint string, depth int) *scanned {
	r := &scanned{}
	if depth > maxSchemaDepth || sn.budget <= 0 {
		r.opaque, r.out = true, m
		return r
	}
	sn.budget--
	if title, ok := m["title"].(string); ok && typeIdent(title) != "" {
		hint = title
	} else if name, ok := sn.names[reflect.ValueOf(m).Pointer()]; ok && typeIdent(name) != "" {
		hint = name
	}
	n := &scanNode{sn: sn, r: r, depth: depth, full: sha256.New(), shape: sha256.New()}
	if sn.types != nil {
		n.out = make(map[string]any, len(m))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n.key(k, m[k], hint)
	}
	copy(r.full[:], n.full.Sum(nil))
	copy(r.shape[:], n.shape.Sum(nil))
	if n.out != nil {
		r.out = n.out
	} else {
		r.out = m
	}
	r.eligible = !r.opaque && objectsOnly(m)
	if r.eligible && r.size >= minSharedTypeBytes {
		r.skels = []*skel{{shape: r.shape, kids: r.skels}}
		if sn.seen != nil {
			sn.seen(r, m, hint)
		}
	}
	return r
}

// scanNode is one object subschema being scanned: its two hashes and, in rewrite mode, its
// copy (out).
type scanNode struct {
	sn          *scanner
	r           *scanned
	depth       int
	full, shape hash.Hash
	lenBuf      []byte
	out         map[string]any // nil in detection mode
}

// write hashes b, length-prefixed, into h.
func (n *scanNode) write(h hash.Hash, b []byte) {
	n.lenBuf = binary.AppendUvarint(n.lenBuf[:0], uint64(len(b)))
	h.Write(n.lenBuf)
	h.Write(b)
}

// both hashes b into the full and the shape hash.
func (n *scanNode) both(b []byte) {
	n.write(n.full, b)
	n.write(n.shape, b)
	n.r.size += len(b)
}

// bothJSON hashes x's canonical JSON into both hashes; a value that has none makes the node
// opaque when strict.
func (n *scanNode) bothJSON(x any, strict bool) {
	b, err := canonicalJSON(x)
	if err != nil && strict {
		n.r.opaque = true
	}
	n.both(b)
}

// key hashes the member k: x of the node and copies it to out.
func (n *scanNode) key(k string, x any, hint string) {
	if annotationKeys[k] {
		b, _ := canonicalJSON(x)
		n.write(n.full, []byte(k))
		n.write(n.full, b)
		n.r.size += len(k) + len(b)
		if n.out != nil {
			n.out[k] = x
		}
		return
	}
	n.both([]byte(k))
	switch {
	case (k == "properties" || k == "patternProperties") && isMap(x):
		x = n.properties(x.(map[string]any), k == "properties", hint)
	case k == "anyOf" || k == "oneOf" || k == "allOf" || k == "prefixItems" || k == "items" && isList(x):
		list, ok := x.([]any)
		if !ok {
			n.bothJSON(x, false)
			break
		}
		c := make([]any, len(list))
		n.both([]byte(strconv.Itoa(len(list))))
		for i, e := range list {
			c[i] = n.child(e, hint)
		}
		x = c
	case k == "items" || k == "additionalProperties":
		x = n.child(x, hint)
	default:
		n.bothJSON(x, true)
	}
	if n.out != nil {
		n.out[k] = x
	}
}

// properties hashes a properties or patternProperties map in key order and returns its copy
// (nil in detection mode). A property's subschema is hinted with its name when named.
func (n *scanNode) properties(props map[string]any, named bool, hint string) any {
	var c map[string]any
	if n.out != nil {
		c = make(map[string]any, len(props))
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		n.both([]byte(name))
		sub := hint
		if named {
			sub = name
		}
		v := n.child(props[name], sub)
		if c != nil {
			c[name] = v
		}
	}
	return c
}

// child hashes one subschema value and returns what goes in its place.
func (n *scanNode) child(v any, hint string) any {
	cm, ok := v.(map[string]any)
	if !ok {
		n.bothJSON(v, true)
		return v
	}
	sn, r := n.sn, n.r
	c := sn.scan(cm, hint, n.depth+1)
	r.opaque = r.opaque || c.opaque
	n.both(c.full[:])
	r.size += c.size - len(c.full)
	r.skels = append(r.skels, c.skels...)
	if sn.types != nil && c.eligible && !c.opaque {
		if t := sn.types.byShape[c.shape]; t != nil {
			sn.used = append(sn.used, t)
			return namedRef{t: t, orig: cm}
		}
	}
	return c.out
}

func isMap(v any) bool  { _, ok := v.(map[string]any); return ok }
func isList(v any) bool { _, ok := v.([]any); return ok }

// objectsOnly reports whether a resolved subschema is an object type, a union of objects or a
// titled array of objects. An untitled array is left to its items: `Block[]` says more than a
// name made up for the array.
func objectsOnly(m map[string]any) bool {
	if isObjectSchema(m, 0) {
		return true
	}
	title, _ := m["title"].(string)
	return typeIdent(title) != "" && isArrayOfObjects(m)
}

func isArrayOfObjects(m map[string]any) bool {
	t, typed := m["type"]
	if typed && t != "array" {
		return false
	}
	items, ok := m["items"].(map[string]any)
	return ok && isObjectSchema(items, 0)
}

func isObjectSchema(m map[string]any, depth int) bool {
	if depth > 4 {
		return false
	}
	if _, ok := m["$ref"]; ok {
		return false
	}
	t, typed := m["type"]
	if typed {
		return t == "object"
	}
	for _, k := range [...]string{"properties", "additionalProperties", "patternProperties"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	for _, k := range [...]string{"anyOf", "oneOf"} {
		list, ok := m[k].([]any)
		if !ok || len(list) == 0 {
			continue
		}
		for _, e := range list {
			em, ok := e.(map[string]any)
			if !ok || !isObjectSchema(em, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// detectShared finds the set's shared types. It depends only on the entries (sorted by name):
// first occurrences are taken in name order, parameters before output, keys in order.
func detectShared(entries []entry) *sharedTypes {
	cands, roots := findCandidates(entries)
	named := keepShared(cands, roots)
	if len(named) == 0 {
		return nil
	}
	return nameShared(named)
}

// candidate is a subschema that may become a shared type, by shape.
type candidate struct {
	node      map[string]any
	hint, doc string
	order     int // of first occurrence
	tools     int // how many tools it occurs in
	lastTool  int
	skel      *skel
}

// findCandidates scans every valid schema of the entries, within maxSharedTotal nodes, and
// returns the candidates by shape and, per schema document, its top candidates.
func findCandidates(entries []entry) (map[shapeKey]*candidate, [][]*skel) {
	cands := map[shapeKey]*candidate{}
	var roots [][]*skel
	total := maxSharedTotal
	for i, e := range entries {
		for j, sc := range [...]schema{e.params, e.output} {
			if sc.state != schemaValid || total <= 0 {
				continue
			}
			resolved, names := resolveRefsNamed(sc.value())
			m, ok := resolved.(map[string]any)
			if !ok {
				continue
			}
			isParams := j == 0
			sn := &scanner{budget: min(maxSharedNodes, total), names: names}
			sn.seen = func(r *scanned, node map[string]any, hint string) {
				if isParams && reflect.ValueOf(node).Pointer() == reflect.ValueOf(m).Pointer() {
					return // a tool's arguments stay in its signature
				}
				c := cands[r.shape]
				if c == nil {
					doc, _ := node["description"].(string)
					c = &candidate{node: node, hint: hint, doc: docSummary(doc), order: len(cands), lastTool: -1}
					cands[r.shape] = c
				}
				if c.skel == nil {
					c.skel = r.skels[0]
				}
				if c.lastTool != i {
					c.lastTool = i
					c.tools++
				}
			}
			before := sn.budget
			root := sn.scan(m, map[bool]string{true: "", false: "Output"}[isParams], 0)
			total -= before - sn.budget
			top := root.skels
			if isParams && len(top) == 1 && top[0].shape == root.shape && root.eligible && root.size >= minSharedTypeBytes {
				top = top[0].kids
			}
			roots = append(roots, top)
		}
	}
	return cands, roots
}

// keepShared keeps the candidates found in two tools or more that render long enough, then
// drops, round after round, those referred to from fewer than two places once the others
// stand in.
func keepShared(cands map[shapeKey]*candidate, roots [][]*skel) map[shapeKey]*candidate {
	named := map[shapeKey]*candidate{}
	for k, c := range cands {
		if c.tools < 2 {
			continue
		}
		if len(inline(stripDocs(renderType(c.node, 0, "").text))) < minSharedTypeBytes {
			continue
		}
		named[k] = c
	}
	for range maxSharedRounds {
		count := map[shapeKey]int{}
		for _, top := range roots {
			for k := range refsTo(named, top) {
				count[k]++
			}
		}
		for _, c := range named {
			for k := range refsTo(named, c.skel.kids) {
				count[k]++
			}
		}
		dropped := false
		for k := range named {
			if count[k] < 2 {
				delete(named, k)
				dropped = true
			}
		}
		if !dropped {
			break
		}
	}
	return named
}

// refsTo is the named shapes that top refers to: the first named ones on each path down.
func refsTo(named map[shapeKey]*candidate, top []*skel) map[shapeKey]bool {
	hit := map[shapeKey]bool{}
	var walk func(ks []*skel)
	walk = func(ks []*skel) {
		for _, k := range ks {
			if named[k.shape] != nil {
				hit[k.shape] = true
				continue
			}
			walk(k.kids)
		}
	}
	walk(top)
	return hit
}

// nameShared names the kept candidates in order of first occurrence, from their hints, and
// records which of them each uses.
func nameShared(named map[shapeKey]*candidate) *sharedTypes {
	keys := make([]shapeKey, 0, len(named))
	for k := range named {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b shapeKey) int { return cmp.Compare(named[a].order, named[b].order) })
	st := &sharedTypes{byShape: make(map[shapeKey]*declType, len(keys))}
	taken := map[string]bool{}
	for _, k := range keys {
		c := named[k]
		base := typeIdent(c.hint)
		if base == "" {
			base = "Shared"
		}
		name := base
		for n := 2; taken[name] || reservedTypeNames[name]; n++ {
			name = base + strconv.Itoa(n)
		}
		taken[name] = true
		t := &declType{name: name, doc: c.doc, node: c.node}
		st.byShape[k] = t
		st.list = append(st.list, t)
	}
	for _, k := range keys {
		t := st.byShape[k]
		for ref := range refsTo(named, named[k].skel.kids) {
			t.uses = append(t.uses, st.byShape[ref])
		}
		slices.SortFunc(t.uses, func(a, b *declType) int { return cmp.Compare(a.name, b.name) })
	}
	slices.SortFunc(st.list, func(a, b *declType) int { return cmp.Compare(a.name, b.name) })
	return st
}

// typeIdent makes a PascalCase TypeScript identifier of a title or key: its ASCII letters and
// digits, each word capitalized ("simple-user" and "Simple User" are SimpleUser, "_meta" is
// Meta), prefixed with T when it would start with a digit; "" when nothing is left.
func typeIdent(s string) string {
	var b strings.Builder
	upper := true
	for i := 0; i < len(s) && b.Len() < maxSharedNameBytes; i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			if upper {
				c -= 'a' - 'A'
			}
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		default:
			upper = true
			continue
		}
		if b.Len() == 0 && '0' <= c && c <= '9' {
			b.WriteByte('T')
		}
		b.WriteByte(c)
		upper = false
	}
	return b.String()
}

// rewrite resolves a schema document's references and puts a namedRef in place of each
// declared subschema; the root too when rootShared. It returns the tree and the declared
// types it refers to directly.
func (st *sharedTypes) rewrite(doc any, rootShared bool) (any, []*declType) {
	resolved := resolveRefs(doc)
	m, ok := resolved.(map[string]any)
	if st == nil || !ok {
		return resolved, nil
	}
	return st.rewriteResolved(m, rootShared)
}

func (st *sharedTypes) rewriteResolved(m map[string]any, rootShared bool) (any, []*declType) {
	sn := &scanner{budget: maxSharedNodes, types: st}
	r := sn.scan(m, "", 0)
	if rootShared && r.eligible {
		if t := st.byShape[r.shape]; t != nil {
			return namedRef{t: t, orig: m}, []*declType{t}
		}
	}
	return r.out, sn.used
}

// declaration renders `type Name = …;` laid out as lay, with its JSDoc.
func (t *declType) declaration(st *sharedTypes, lay layout) string {
	body, _ := st.rewriteResolved(t.node, false)
	text := dropRestatedDocs(renderType(body, 0, "").text, "")
	switch lay {
	case layoutInline:
		text = inline(text)
	case layoutBare:
		text = inline(stripDocs(text))
	}
	var b strings.Builder
	if t.doc != "" && lay != layoutBare {
		b.WriteString("/** ")
		b.WriteString(t.doc)
		if lay == layoutLines {
			b.WriteString(" */\n")
		} else {
			b.WriteString(" */ ")
		}
	}
	b.WriteString("type ")
	b.WriteString(t.name)
	b.WriteString(" = ")
	b.WriteString(text)
	b.WriteString(";\n")
	return b.String()
}

// closure adds to need the types in used and, transitively, those they refer to.
func closure(need map[*declType]bool, used []*declType) {
	for _, t := range used {
		if !need[t] {
			need[t] = true
			closure(need, t.uses)
		}
	}
}

// writeDeclarations writes the declarations of the types in need (all with need nil), by name,
// laid out as lay; in layoutLines each is followed by an empty line.
func (st *sharedTypes) writeDeclarations(b interface{ WriteString(string) (int, error) }, need map[*declType]bool, lay layout) {
	if st == nil {
		return
	}
	for _, t := range st.list {
		if need != nil && !need[t] {
			continue
		}
		b.WriteString(t.declaration(st, lay))
		if lay == layoutLines {
			b.WriteString("\n")
		}
	}
}
