package sandbox

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// snapMode says which side of the boundary a snapshot is for.
type snapMode uint8

const (
	// snapArgument is a tool call's argument: only JSON data, nothing dropped silently.
	snapArgument snapMode = iota
	// snapResult is the program's returned value: as snapArgument, except that an object
	// property whose value is undefined is left out, as JSON.stringify does.
	snapResult
)

var (
	proxyType     = reflect.TypeOf(goja.Proxy{})
	mapExportType = reflect.TypeOf([][2]any{})
	setExportType = reflect.TypeOf([]any{})
)

// objectClass is o's class name, telling the Map, Set and Promise objects that goja reports
// as "Object" apart by what they export to.
func objectClass(o *goja.Object) string {
	cls := o.ClassName()
	if cls != "Object" {
		return cls
	}
	switch o.ExportType() {
	case promiseType:
		return "Promise"
	case mapExportType:
		return "Map"
	case setExportType:
		return "Set"
	}
	return cls
}

// snapError says why a value cannot cross the boundary.
type snapError struct {
	mode   snapMode
	path   string // where, as .a[2]["b-c"]; empty for the root
	what   string // what is wrong, as "is a function"
	tooBig int    // when > 0, the JSON text exceeded this many bytes
}

func (e *snapError) message() string {
	subject := "argument"
	if e.mode == snapResult {
		subject = "result"
	}
	if e.tooBig > 0 {
		return fmt.Sprintf("%s is larger than %d bytes as JSON", subject, e.tooBig)
	}
	if e.path == "" {
		return subject + " " + e.what
	}
	return subject + " at " + e.path + " " + e.what
}

// failure reports a result snapshot error as the run's failure.
func (e *snapError) failure() *Failure {
	if e.tooBig > 0 {
		return &Failure{Kind: KindLimit, Message: "the returned value is too large: " + e.message()}
	}
	return &Failure{Kind: KindRuntime, Message: "the returned value is not JSON data: " + e.message()}
}

// snapshot converts v to JSON text of at most limit bytes. It walks iteratively (any nesting
// up to MaxDataDepth, no Go recursion) and accepts only JSON data: null, booleans, finite
// numbers (-0 stays -0), strings (lone surrogates escaped, so nothing is lost), arrays without
// holes whose prototype is Array.prototype, and objects whose prototype is Object.prototype or
// null. It rejects undefined (except as a property value in snapResult mode), functions,
// symbols, BigInt, NaN and infinities, cycles, Proxies and every other object (Date, Map, Set,
// RegExp, errors, typed arrays, boxed primitives, class instances). Reading a property runs its
// getter; a getter that throws rejects the value. Two snapshots of one object are independent.
// Must run on the VM goroutine, inside the VM.
func (r *run) snapshot(v goja.Value, mode snapMode, limit int) ([]byte, *snapError) {
	s := &snapshotter{r: r, mode: mode, limit: limit}
	var serr *snapError
	if ex := r.rt.Try(func() { serr = s.walk(v) }); ex != nil {
		serr = &snapError{mode: mode, path: s.path(), what: "could not be read: " + r.describeThrown(ex.Value())}
	}
	if serr != nil {
		return nil, serr
	}
	return s.buf, nil
}

type snapFrame struct {
	obj   *goja.Object
	array bool
	keys  []string // object: own enumerable string keys
	n     int64    // array: length
	i     int      // next member; i-1 is the one being written
	count int      // members written so far
}

type snapshotter struct {
	r      *run
	mode   snapMode
	limit  int
	buf    []byte
	stack  []snapFrame
	onPath map[*goja.Object]struct{} // ancestors, kept once the stack is deep
}

// pathScanDepth is the depth below which cycles are found by scanning the stack.
const pathScanDepth = 32

func (s *snapshotter) fail(what string) *snapError {
	return &snapError{mode: s.mode, path: s.path(), what: what}
}

func (s *snapshotter) walk(root goja.Value) *snapError {
	if err := s.value(root); err != nil {
		return err
	}
	for len(s.stack) > 0 {
		f := &s.stack[len(s.stack)-1]
		var next goja.Value
		if f.array {
			if int64(f.i) >= f.n {
				s.buf = append(s.buf, ']')
				s.pop()
				continue
			}
			if f.i > 0 {
				s.buf = append(s.buf, ',')
			}
			f.i++
			if next = f.obj.Get(strconv.Itoa(f.i - 1)); next == nil {
				return s.fail("is a hole in a sparse array")
			}
		} else {
			if f.i >= len(f.keys) {
				s.buf = append(s.buf, '}')
				s.pop()
				continue
			}
			key := f.keys[f.i]
			f.i++
			if next = f.obj.Get(key); next == nil {
				continue // deleted by a getter while we walked
			}
			if s.mode == snapResult && goja.IsUndefined(next) {
				continue
			}
			if f.count > 0 {
				s.buf = append(s.buf, ',')
			}
			f.count++
			s.buf = appendQuoted(s.buf, key)
			s.buf = append(s.buf, ':')
		}
		if err := s.value(next); err != nil {
			return err
		}
		if len(s.buf) > s.limit {
			return &snapError{mode: s.mode, tooBig: s.limit}
		}
	}
	if len(s.buf) > s.limit {
		return &snapError{mode: s.mode, tooBig: s.limit}
	}
	return nil
}

// value writes a primitive, or opens an array or object and pushes its frame.
func (s *snapshotter) value(v goja.Value) *snapError {
	switch {
	case v == nil || goja.IsUndefined(v):
		return s.fail("is undefined")
	case goja.IsNull(v):
		s.buf = append(s.buf, "null"...)
		return nil
	}
	switch x := v.(type) {
	case *goja.Object:
		return s.object(x)
	case *goja.Symbol:
		return s.fail("is a symbol")
	}
	switch {
	case goja.IsString(v):
		s.buf = appendJSString(s.buf, v)
	case goja.IsNumber(v):
		var what string
		if s.buf, what = appendNumber(s.buf, v); what != "" {
			return s.fail(what)
		}
	case goja.IsBigInt(v):
		return s.fail("is a BigInt")
	case v.ExportType().Kind() == reflect.Bool:
		if v.ToBoolean() {
			s.buf = append(s.buf, "true"...)
		} else {
			s.buf = append(s.buf, "false"...)
		}
	default:
		return s.fail("is not JSON data")
	}
	return nil
}

func (s *snapshotter) object(o *goja.Object) *snapError {
	if _, ok := goja.AssertFunction(o); ok {
		return s.fail("is a function")
	}
	if o.ExportType() == proxyType {
		return s.fail("is a Proxy")
	}
	if s.isAncestor(o) {
		return s.fail("is a circular reference")
	}
	if len(s.stack) >= MaxDataDepth {
		return s.fail(fmt.Sprintf("nests deeper than %d levels", MaxDataDepth))
	}
	objectProto, arrayProto := s.r.intrinsics()
	switch cls := objectClass(o); cls {
	case "Array":
		if o.Prototype() != arrayProto {
			return s.fail("is an instance of an Array subclass, not a plain array")
		}
		s.buf = append(s.buf, '[')
		s.push(snapFrame{obj: o, array: true, n: o.Get("length").ToInteger()})
	case "Object":
		if proto := o.Prototype(); proto != nil && proto != objectProto {
			// Map, Set, Promise and class instances land here.
			if name := constructorName(proto); name != "" {
				return s.fail("is " + withArticle(name) + ", not a plain object")
			}
			return s.fail("is an object with a custom prototype, not a plain object")
		}
		s.buf = append(s.buf, '{')
		s.push(snapFrame{obj: o, keys: o.Keys()})
	default:
		what := "is " + withArticle(cls)
		if cls == "Date" {
			what += " (pass date.toISOString() instead)"
		}
		return s.fail(what)
	}
	return nil
}

func (s *snapshotter) push(f snapFrame) {
	s.stack = append(s.stack, f)
	if s.onPath != nil {
		s.onPath[f.obj] = struct{}{}
	} else if len(s.stack) > pathScanDepth {
		s.onPath = make(map[*goja.Object]struct{}, 2*pathScanDepth)
		for _, fr := range s.stack {
			s.onPath[fr.obj] = struct{}{}
		}
	}
}

func (s *snapshotter) pop() {
	top := len(s.stack) - 1
	if s.onPath != nil {
		delete(s.onPath, s.stack[top].obj)
	}
	s.stack[top] = snapFrame{}
	s.stack = s.stack[:top]
}

func (s *snapshotter) isAncestor(o *goja.Object) bool {
	if s.onPath != nil {
		_, ok := s.onPath[o]
		return ok
	}
	for i := range s.stack {
		if s.stack[i].obj == o {
			return true
		}
	}
	return false
}

// pathEnds is how many path segments are shown at each end of a long path.
const pathEnds = 8

// path renders where the walk is, as .a[2]["b-c"]; a very deep path keeps its ends.
func (s *snapshotter) path() string {
	depth := 0
	for depth < len(s.stack) && s.stack[depth].i > 0 {
		depth++
	}
	var b strings.Builder
	for d := 0; d < depth; d++ {
		if depth > 2*pathEnds+1 && d == pathEnds {
			fmt.Fprintf(&b, " … %d levels … ", depth-2*pathEnds)
			d = depth - pathEnds - 1
			continue
		}
		f := &s.stack[d]
		if f.array {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(f.i - 1))
			b.WriteByte(']')
			continue
		}
		key := f.keys[f.i-1]
		if isIdentifier(key) {
			b.WriteByte('.')
			b.WriteString(key)
		} else {
			b.WriteByte('[')
			b.Write(appendQuoted(nil, key))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// constructorName is proto.constructor.name, or "" when it is not a plain string.
func constructorName(proto *goja.Object) string {
	c, ok := proto.Get("constructor").(*goja.Object)
	if !ok {
		return ""
	}
	if n := c.Get("name"); n != nil && goja.IsString(n) {
		return n.String()
	}
	return ""
}

func withArticle(noun string) string {
	if noun == "" {
		return "an unsupported object"
	}
	switch noun[0] {
	case 'A', 'E', 'I', 'O', 'U':
		return "an " + noun
	}
	return "a " + noun
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return true
}

// appendNumber writes a JS number as JSON, or says why it cannot be.
func appendNumber(buf []byte, v goja.Value) ([]byte, string) {
	switch n := v.Export().(type) {
	case int64:
		return strconv.AppendInt(buf, n, 10), ""
	case float64:
		switch {
		case math.IsNaN(n):
			return buf, "is NaN"
		case math.IsInf(n, 1):
			return buf, "is Infinity"
		case math.IsInf(n, -1):
			return buf, "is -Infinity"
		case n == 0 && math.Signbit(n):
			return append(buf, "-0"...), ""
		}
		// JavaScript's own number formatting (1e+21, 5e-7) is valid JSON.
		return append(buf, v.String()...), ""
	}
	return buf, "is not a number"
}

// appendJSString writes a JS string as a JSON string. goja's Go conversion turns lone
// surrogates into U+FFFD; when one may be present the UTF-16 code units are read instead and a
// lone surrogate is written as a \uXXXX escape, so the text is lossless.
func appendJSString(buf []byte, v goja.Value) []byte {
	str := v.String()
	js, ok := v.(goja.String)
	if !ok || !strings.ContainsRune(str, utf8.RuneError) {
		return appendQuoted(buf, str)
	}
	buf = append(buf, '"')
	n := js.Length()
	for i := 0; i < n; i++ {
		c := rune(js.CharAt(i))
		if utf16.IsSurrogate(c) {
			if c < 0xDC00 && i+1 < n {
				if lo := rune(js.CharAt(i + 1)); lo >= 0xDC00 && lo <= 0xDFFF {
					buf = appendEscapedRune(buf, utf16.DecodeRune(c, lo))
					i++
					continue
				}
			}
			buf = append(buf, `\u`...)
			buf = append(buf, strconv.FormatInt(int64(c), 16)...)
			continue
		}
		buf = appendEscapedRune(buf, c)
	}
	return append(buf, '"')
}

// appendQuoted writes a valid UTF-8 Go string as a JSON string.
func appendQuoted(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		buf = append(buf, s[start:i]...)
		buf = appendEscapedRune(buf, rune(c))
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

const hexDigits = "0123456789abcdef"

func appendEscapedRune(buf []byte, c rune) []byte {
	switch c {
	case '"':
		return append(buf, `\"`...)
	case '\\':
		return append(buf, `\\`...)
	case '\n':
		return append(buf, `\n`...)
	case '\r':
		return append(buf, `\r`...)
	case '\t':
		return append(buf, `\t`...)
	case '\b':
		return append(buf, `\b`...)
	case '\f':
		return append(buf, `\f`...)
	}
	if c < 0x20 {
		return append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
	}
	return utf8.AppendRune(buf, c)
}
