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

// snapMode says which side of the boundary a snapshot is for. Both follow
// JSON.stringify (toJSON is honoured, boxed primitives are unwrapped,
// undefined properties are left out and undefined array slots become null);
// they differ on non-finite numbers.
type snapMode uint8

const (
	// snapArgument is a tool call's argument: NaN and ±Infinity reject the
	// call, since a tool must not receive a silent null.
	snapArgument snapMode = iota
	// snapResult is the program's returned value: NaN and ±Infinity become
	// null, as JSON.stringify makes them.
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

// snapshot converts v to JSON text of at most limit bytes by the rules of JSON.stringify, except
// that what JSON.stringify would throw on or lose silently is refused with the path and the fix:
// BigInt, symbols and functions as values, cycles, Map, Set, typed arrays, Date without toJSON,
// RegExp, errors, Promises, Proxies and class instances without toJSON. It walks iteratively
// (any nesting up to MaxDataDepth, no Go recursion). Numbers keep -0, and strings keep lone
// surrogates (escaped), so nothing is lost. Reading a property runs its getter and toJSON runs
// as JSON.stringify runs it; one that throws rejects the value. A root that is (or turns into)
// undefined gives nil. Two snapshots of one object are independent. Must run on the VM
// goroutine, inside the VM.
func (r *run) snapshot(v goja.Value, mode snapMode, limit int) ([]byte, *snapError) {
	// A toJSON may snapshot again (a tool call): the run's stack is lent to one snapshot at a time.
	s := &snapshotter{r: r, mode: mode, limit: limit, buf: make([]byte, 0, snapInitialBytes), stack: r.scratch.snapStack}
	r.scratch.snapStack = nil
	var serr *snapError
	if ex := r.rt.Try(func() { serr = s.walk(v) }); ex != nil {
		serr = &snapError{mode: mode, path: s.path(), what: "could not be read: " + r.describeThrown(ex.Value())}
	}
	clear(s.stack[:cap(s.stack)])
	r.scratch.snapStack = s.stack[:0]
	if serr != nil {
		return nil, serr
	}
	if len(s.buf) == 0 {
		return nil, nil // undefined
	}
	return s.buf, nil
}

// snapInitialBytes is the capacity a snapshot's text starts with: small arguments fit.
const snapInitialBytes = 32

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
	root = s.resolve(root, "")
	if root == nil || goja.IsUndefined(root) {
		return nil
	}
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
			key := strconv.Itoa(f.i - 1)
			if next = s.resolve(f.obj.Get(key), key); next == nil || goja.IsUndefined(next) {
				s.buf = append(s.buf, "null"...) // a hole or undefined, as JSON.stringify writes it
				if len(s.buf) > s.limit {
					return &snapError{mode: s.mode, tooBig: s.limit}
				}
				continue
			}
		} else {
			if f.i >= len(f.keys) {
				s.buf = append(s.buf, '}')
				s.pop()
				continue
			}
			key := f.keys[f.i]
			f.i++
			if next = s.resolve(f.obj.Get(key), key); next == nil || goja.IsUndefined(next) {
				continue // undefined (or deleted by a getter while we walked): left out
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

// resolve applies what JSON.stringify does to a value before writing it: an object's (or a
// BigInt's) toJSON method is called with the key, and a Number, String or Boolean object is
// unwrapped to its primitive.
func (s *snapshotter) resolve(v goja.Value, key string) goja.Value {
	if v == nil {
		return nil
	}
	var holder *goja.Object
	switch x := v.(type) {
	case *goja.Object:
		if x.ExportType() == proxyType {
			return v // refused as it is: its traps are the program's code
		}
		holder = x
	default:
		if !goja.IsBigInt(v) {
			return v
		}
		holder = v.ToObject(s.r.rt)
	}
	if fn, ok := goja.AssertFunction(holder.Get("toJSON")); ok {
		out, err := fn(v, s.r.rt.ToValue(key))
		if err != nil {
			panic(err) // thrown inside the VM: snapshot's Try reports it with the path
		}
		v = out
	}
	if o, ok := v.(*goja.Object); ok && o.ExportType() != proxyType {
		switch o.ClassName() {
		case "Number":
			return s.r.rt.ToValue(o.ToNumber())
		case "String":
			return s.r.rt.ToValue(o.String())
		case "Boolean":
			return s.r.rt.ToValue(o.Export()) // its [[BooleanData]], as JSON.stringify reads it
		}
	}
	return v
}

// value writes a primitive, or opens an array or object and pushes its frame. v is never
// undefined: the caller left it out, wrote null or gave up first.
func (s *snapshotter) value(v goja.Value) *snapError {
	if goja.IsNull(v) {
		s.buf = append(s.buf, "null"...)
		return nil
	}
	switch x := v.(type) {
	case *goja.Object:
		return s.object(x)
	case *goja.Symbol:
		return s.fail("is a symbol: JSON has no symbols (pass its description, or a string)")
	}
	switch {
	case goja.IsString(v):
		s.buf = appendJSString(s.buf, v)
	case goja.IsNumber(v):
		var what string
		if s.buf, what = appendNumber(s.buf, v); what != "" {
			if s.mode == snapResult {
				s.buf = append(s.buf, "null"...) // as JSON.stringify writes it
				return nil
			}
			return s.fail(what + ": a tool must not receive a silent null (check the computation, or pass null or a string)")
		}
	case goja.IsBigInt(v):
		return s.fail("is a BigInt: JSON has no BigInt (pass String(n), or Number(n) when it fits)")
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

// fixes say, per kind of object JSON.stringify would lose, how to pass its data instead.
var fixes = map[string]string{
	"Map":         "pass Object.fromEntries(map) (or [...map] when its keys are not strings)",
	"Set":         "pass [...set]",
	"WeakMap":     "its entries cannot be listed; keep the data in a plain object",
	"WeakSet":     "its members cannot be listed; keep the data in an array",
	"Date":        "pass date.toISOString()",
	"RegExp":      "pass re.source, or String(re)",
	"Error":       "pass {name: e.name, message: e.message}",
	"Promise":     "await it first",
	"ArrayBuffer": "pass Array.from(new Uint8Array(buffer))",
	"DataView":    "pass Array.from(new Uint8Array(view.buffer))",
	"Function":    "call it and pass its value",
	"Arguments":   "pass Array.from(arguments)",
}

func (s *snapshotter) object(o *goja.Object) *snapError {
	if _, ok := goja.AssertFunction(o); ok {
		return s.fail("is a function: JSON has no functions (" + fixes["Function"] + ")")
	}
	if o.ExportType() == proxyType {
		return s.fail("is a Proxy: pass a plain copy, e.g. {...proxy}")
	}
	if s.isAncestor(o) {
		return s.fail("is a circular reference: JSON cannot hold a cycle (pass a copy without the back-reference)")
	}
	if len(s.stack) >= MaxDataDepth {
		return s.fail(fmt.Sprintf("nests deeper than %d levels", MaxDataDepth))
	}
	objectProto, _ := s.r.intrinsics()
	switch cls := objectClass(o); {
	case cls == "Array":
		s.buf = append(s.buf, '[')
		s.push(snapFrame{obj: o, array: true, n: o.Get("length").ToInteger()})
	case cls == "Object" && (o.Prototype() == nil || o.Prototype() == objectProto):
		s.buf = append(s.buf, '{')
		s.push(snapFrame{obj: o, keys: o.Keys()})
	case cls == "Object":
		// Built-ins goja reports as plain Objects (typed arrays, ArrayBuffer, DataView), class
		// instances and objects with another custom prototype would lose what they are.
		name := constructorName(o.Prototype())
		switch {
		case strings.HasSuffix(name, "Array"):
			return s.fail("is " + withArticle(name) + ": pass Array.from(array)")
		case fixes[name] != "":
			return s.fail("is " + withArticle(name) + ": " + fixes[name])
		}
		if name == "" || name == "Object" {
			return s.fail("is an object with a custom prototype, not a plain object: pass {...obj}, or give it a toJSON() method")
		}
		return s.fail("is " + withArticle(name) + " instance, not a plain object: pass {...obj} (its own fields), or give " + name + " a toJSON() method")
	case strings.HasSuffix(cls, "Array"):
		return s.fail("is " + withArticle(cls) + ": pass Array.from(array)")
	default:
		what := "is " + withArticle(cls)
		if fix := fixes[cls]; fix != "" {
			what += ": " + fix
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
	case 'A', 'E', 'I', 'O':
		return "an " + noun
	case 'U':
		if !strings.HasPrefix(noun, "Uint") { // "a Uint8Array", "an Unknown"
			return "an " + noun
		}
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
