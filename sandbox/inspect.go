package sandbox

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// inspector renders values for the console, Node-style, with bounded depth and output size.
type inspector struct {
	r          *run
	b          strings.Builder
	limit      int
	depthLimit int // nesting shown before [Object]; negative for no limit
	full       bool
	seen       []*goja.Object // the objects being rendered, for [Circular]
	indent     int            // columns the value's lines start at (Node's indentationLvl)
	st         *inspectState  // shared by the inspectors of one value; made by value when nil
}

// formatLog renders console arguments like Node's util.format, on one line and at most limit
// bytes long (the output is cut there). A first string argument may hold %s %d %i %f %j %o %O
// %c and %% directives.
func (r *run) formatLog(args []goja.Value, limit int) string {
	in := &inspector{r: r, limit: limit, depthLimit: inspectDepth}
	rest := args
	if len(args) > 0 && goja.IsString(args[0]) {
		f := args[0].String()
		rest = args[1:]
		if strings.IndexByte(f, '%') >= 0 && len(rest) > 0 {
			rest = in.format(f, rest)
		} else {
			in.write(f)
		}
		for _, a := range rest {
			in.write(" ")
			in.top(a)
		}
		return in.b.String()
	}
	for i, a := range rest {
		if i > 0 {
			in.write(" ")
		}
		in.top(a)
	}
	return in.b.String()
}

// inspectValue renders v as util.inspect does, strings quoted, nesting shown to depth
// (negative for all), in at most limit bytes.
func (r *run) inspectValue(v goja.Value, depth, limit int) string {
	in := &inspector{r: r, limit: limit, depthLimit: depth}
	in.value(v, 0)
	return in.b.String()
}

// tooDeep reports whether a value at depth is shown by its kind only.
func (in *inspector) tooDeep(depth int) bool { return in.depthLimit >= 0 && depth > in.depthLimit }

func (in *inspector) write(s string) {
	if in.full {
		return
	}
	if room := in.limit - in.b.Len(); len(s) > room {
		in.b.WriteString(truncateUTF8(s, room))
		in.full = true
		return
	}
	in.b.WriteString(s)
}

// top renders a console argument: strings raw, anything else inspected.
func (in *inspector) top(v goja.Value) {
	if goja.IsString(v) {
		in.write(v.String())
		return
	}
	in.inspect(v)
}

// inspect renders v as util.inspect does, as a value of its own: [Circular *n] numbers start
// again from 1.
func (in *inspector) inspect(v goja.Value) {
	in.st = &inspectState{}
	in.value(v, 0)
}

// format expands printf-like directives in f and returns the arguments left over.
func (in *inspector) format(f string, args []goja.Value) []goja.Value {
	start := 0
	for i := 0; i < len(f)-1; i++ {
		if f[i] != '%' {
			continue
		}
		d := f[i+1]
		if d == '%' {
			in.write(f[start:i])
			in.write("%")
			start = i + 2
			i++
			continue
		}
		if !strings.ContainsRune("sdifjoOc", rune(d)) || len(args) == 0 {
			continue
		}
		in.write(f[start:i])
		a := args[0]
		args = args[1:]
		switch d {
		case 's':
			in.top(a)
		case 'd', 'i':
			switch {
			case goja.IsBigInt(a):
				in.write(a.String() + "n")
			case isObject(a):
				in.write("NaN")
			default:
				n := a.ToFloat()
				if d == 'i' && !math.IsNaN(n) && !math.IsInf(n, 0) {
					n = math.Trunc(n)
				}
				in.write(numberString(in.r.rt.ToValue(n)))
			}
		case 'f':
			if isObject(a) {
				in.write("NaN")
			} else {
				in.write(numberString(in.r.rt.ToValue(a.ToFloat())))
			}
		case 'j':
			b, serr := in.r.snapshot(a, snapResult, in.limit)
			switch {
			case serr == nil:
				in.write(string(b))
			case strings.Contains(serr.what, "circular"):
				in.write("[Circular]")
			default:
				in.inspect(a)
			}
		case 'o', 'O':
			in.inspect(a)
		case 'c':
			// CSS styling: consumed, not shown.
		}
		start = i + 2
		i++
	}
	in.write(f[start:])
	return args
}

func isObject(v goja.Value) bool {
	_, ok := v.(*goja.Object)
	return ok
}

// value renders v as Node's util.inspect would, on one line.
func (in *inspector) value(v goja.Value, depth int) {
	if in.full {
		return
	}
	if in.st == nil {
		in.st = &inspectState{}
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		in.write("undefined")
		return
	case goja.IsNull(v):
		in.write("null")
		return
	}
	switch x := v.(type) {
	case *goja.Object:
		in.object(x, depth)
	case *goja.Symbol:
		in.write(symbolText(x))
	default:
		switch {
		case goja.IsString(v):
			in.write(quote(v.String()))
		case goja.IsNumber(v):
			in.write(numberString(v))
		case goja.IsBigInt(v):
			in.write(v.String() + "n")
		default:
			in.write(v.String())
		}
	}
}

func numberString(v goja.Value) string {
	if f, ok := v.Export().(float64); ok && f == 0 && math.Signbit(f) {
		return "-0"
	}
	return v.String()
}

// inspectCache is what the inspector keeps between the values of one run.
type inspectCache struct {
	natives          *inspectNatives                           // see inspectNatives; made on first use
	iteratorKinds    func(*goja.Object) (keyValue, known bool) // see installIteratorPreview; nil until then
	iteratorPreviews map[*goja.Object]*iteratorPreview         // iterators the console has read
	protoNames       map[*goja.Object]protoName                // constructor names of prototypes met (see constructorName)
}

// inspectNatives are the intrinsics of prelude/inspect.js, taken when the run's console first
// renders an object.
type inspectNatives struct {
	descriptor, descriptors, functionSource, typedArrayTag, typedArrayLength goja.Callable
	dataViewByteLength, dataViewByteOffset, dataViewBuffer                   goja.Callable
	weakMapHas, weakSetHas, symbolValueOf, bigIntValueOf                     goja.Callable
	mapIteratorNext, setIteratorNext                                         goja.Callable
	typedArrayProto, dataViewProto, weakMapProto, weakSetProto               *goja.Object
	symbolProto, bigIntProto                                                 *goja.Object
	mapIteratorProto, setIteratorProto                                       *goja.Object
}

func (r *run) inspectNatives() *inspectNatives {
	if r.inspected.natives != nil {
		return r.inspected.natives
	}
	exports := r.prelude("inspect.js").(*goja.Object)
	fn := func(name string) goja.Callable {
		f, ok := goja.AssertFunction(exports.Get(name))
		if !ok {
			panic("sandbox: prelude inspect.js: " + name + " is not a function")
		}
		return f
	}
	obj := func(name string) *goja.Object { return exports.Get(name).(*goja.Object) }
	r.inspected.natives = &inspectNatives{
		descriptor: fn("descriptor"), descriptors: fn("descriptors"), functionSource: fn("functionSource"),
		typedArrayTag: fn("typedArrayTag"), typedArrayLength: fn("typedArrayLength"),
		dataViewByteLength: fn("dataViewByteLength"), dataViewByteOffset: fn("dataViewByteOffset"), dataViewBuffer: fn("dataViewBuffer"),
		weakMapHas: fn("weakMapHas"), weakSetHas: fn("weakSetHas"), symbolValueOf: fn("symbolValueOf"), bigIntValueOf: fn("bigIntValueOf"),
		mapIteratorNext: fn("mapIteratorNext"), setIteratorNext: fn("setIteratorNext"),
		typedArrayProto: obj("typedArrayPrototype"), dataViewProto: obj("dataViewPrototype"), weakMapProto: obj("weakMapPrototype"), weakSetProto: obj("weakSetPrototype"),
		symbolProto: obj("symbolPrototype"), bigIntProto: obj("bigIntPrototype"),
		mapIteratorProto: obj("mapIteratorPrototype"), setIteratorProto: obj("setIteratorPrototype"),
	}
	return r.inspected.natives
}

// brand calls a native with o as this and reports whether it accepted o (Node's isX checks,
// for the objects goja reports as plain ones).
func (r *run) brand(f goja.Callable, o *goja.Object, args ...goja.Value) (goja.Value, bool) {
	var v goja.Value
	if ex := r.rt.Try(func() {
		var err error
		v, err = f(o, args...)
		must(err)
	}); ex != nil {
		return nil, false
	}
	return v, true
}

// inherits reports whether proto is on o's prototype chain.
func inherits(o, proto *goja.Object) bool {
	for p, n := o.Prototype(), 0; p != nil && n < maxProtoChain; p, n = p.Prototype(), n+1 {
		if p == proto {
			return true
		}
	}
	return false
}

// maxProtoChain bounds the prototype chains the inspector walks.
const maxProtoChain = 1000

// objectKind is what the inspector shows an object as, beyond what its class name says.
type objectKind uint8

const (
	kindOther objectKind = iota
	kindTypedArray
	kindArrayBuffer
	kindDataView
	kindWeakMap
	kindWeakSet
	kindSymbolBox
	kindBigIntBox
	kindMapIterator
	kindSetIterator
)

// kindOf tells the objects goja reports as plain ones apart, by brand checks made only when the
// object inherits from the prototype concerned.
func (in *inspector) kindOf(o *goja.Object) objectKind {
	if objectProto, _ := in.r.intrinsics(); o.Prototype() == objectProto {
		return kindOther
	}
	if _, ok := o.Export().(goja.ArrayBuffer); ok {
		return kindArrayBuffer
	}
	n := in.r.inspectNatives()
	if inherits(o, n.typedArrayProto) {
		if tag, ok := in.r.brand(n.typedArrayTag, o); ok && goja.IsString(tag) {
			return kindTypedArray
		}
	}
	checks := []struct {
		proto *goja.Object
		fn    goja.Callable
		kind  objectKind
	}{
		{n.dataViewProto, n.dataViewByteLength, kindDataView},
		{n.weakMapProto, n.weakMapHas, kindWeakMap},
		{n.weakSetProto, n.weakSetHas, kindWeakSet},
		{n.symbolProto, n.symbolValueOf, kindSymbolBox},
		{n.bigIntProto, n.bigIntValueOf, kindBigIntBox},
	}
	for _, c := range checks {
		if inherits(o, c.proto) {
			if _, ok := in.r.brand(c.fn, o, in.r.rt.NewObject()); ok {
				return c.kind
			}
		}
	}
	if in.r.iteratorPreview(o) != nil {
		if inherits(o, n.mapIteratorProto) {
			return kindMapIterator
		}
		return kindSetIterator
	}
	return kindOther
}

// descriptor is Object.getOwnPropertyDescriptor(o, key): nil when o
// has no such property.
func (in *inspector) descriptor(o *goja.Object, key goja.Value) *goja.Object {
	d, err := in.r.inspectNatives().descriptor(goja.Undefined(), o, key)
	must(err)
	desc, _ := d.(*goja.Object)
	return desc
}

// constructorName is Node's getConstructorName: the name of the first constructor up o's
// prototype chain (o's own included) that o is an instance of; ok is false when o's prototype
// is null. What the chain above o gives is kept for the rest of the value's rendering (an
// array of class instances looks its class up once); o's own constructor is looked for only
// when it is an enumerable key (a non-enumerable own constructor is taken for an inherited
// one).
func (in *inspector) constructorName(o *goja.Object, own []string) (name string, ok bool) {
	if slices.Contains(own, "constructor") {
		if name, ok := in.ownConstructor(o, o); ok {
			return name, true
		}
	}
	proto := o.Prototype()
	if proto == nil {
		return "", false
	}
	if c, ok := in.r.inspected.protoNames[proto]; ok && proto.Get("constructor") == c.ctor && c.ctor.Get("prototype") == proto {
		return c.name, true
	}
	if c, ok := in.st.ctors[proto]; ok {
		return c, true
	}
	if name, ok := in.ownConstructor(o, proto); ok {
		// Found on the prototype itself (a class's, a built-in's): kept for the run, and
		// trusted while the prototype's constructor is that function and its prototype this.
		if in.r.inspected.protoNames == nil {
			in.r.inspected.protoNames = make(map[*goja.Object]protoName)
		}
		in.r.inspected.protoNames[proto] = protoName{ctor: proto.Get("constructor").(*goja.Object), name: name}
		return name, true
	}
	name = "Object"
	for p, n := proto, 0; p != nil && n < maxProtoChain; p, n = p.Prototype(), n+1 {
		if c, ok := in.ownConstructor(o, p); ok {
			name = c
			break
		}
	}
	if in.st.ctors == nil {
		in.st.ctors = make(map[*goja.Object]string)
	}
	in.st.ctors[proto] = name
	return name, true
}

// protoName is a prototype's constructor and its name, as constructorName found them.
type protoName struct {
	ctor *goja.Object
	name string
}

// ownConstructor is p's own constructor's name when it is a named function o is an instance
// of.
func (in *inspector) ownConstructor(o, p *goja.Object) (string, bool) {
	d := in.descriptor(p, in.r.rt.ToValue("constructor"))
	if d == nil {
		return "", false
	}
	c, isObj := d.Get("value").(*goja.Object)
	if !isObj || !isFunctionObject(c) {
		return "", false
	}
	nv := c.Get("name")
	if nv == nil || !goja.IsString(nv) || nv.String() == "" {
		return "", false
	}
	if proto, isObj := c.Get("prototype").(*goja.Object); isObj && inherits(o, proto) {
		return nv.String(), true
	}
	return "", false
}

// stringTag is o[Symbol.toStringTag] as Node shows it: "" when it is not a string or is o's
// own enumerable property (then it is shown among the keys).
func (in *inspector) stringTag(o *goja.Object) string {
	t := o.GetSymbol(goja.SymToStringTag)
	if t == nil || !goja.IsString(t) || t.String() == "" {
		return ""
	}
	for _, s := range o.Symbols() {
		if s == goja.SymToStringTag {
			return ""
		}
	}
	return t.String()
}

// prefix is Node's getPrefix: "Foo ", "Foo(3) [tag] ", "[Array(3): null prototype] ".
func prefix(ctor string, hasCtor bool, tag, fallback, size string) string {
	if !hasCtor {
		if tag != "" && tag != fallback {
			return "[" + fallback + size + ": null prototype] [" + tag + "] "
		}
		return "[" + fallback + size + ": null prototype] "
	}
	if tag != "" && ctor != tag {
		return ctor + size + " [" + tag + "] "
	}
	return ctor + size + " "
}

// propKey is a property shown as "key: value": a string or a symbol.
type propKey struct {
	name   goja.Value
	hidden bool // a key Node shows in brackets, [key], as it does non-enumerable ones
}

// keysOf are o's own enumerable string keys (own, or o.Keys() when own is nil) then symbol
// keys, as Node's getKeys; skip drops the string keys it reports true for (array indices).
func (in *inspector) keysOf(o *goja.Object, own []string, skip func(string) bool) []propKey {
	if own == nil {
		own = o.Keys()
	}
	keys := make([]propKey, 0, len(own))
	for _, k := range own {
		if skip == nil || !skip(k) {
			keys = append(keys, propKey{name: in.r.rt.ToValue(k)})
		}
	}
	for _, s := range o.Symbols() {
		keys = append(keys, propKey{name: s})
	}
	return keys
}

// isIndex reports whether k is an array index.
func isIndex(k string) bool {
	if k == "" || len(k) > 10 || (k[0] == '0' && len(k) > 1) {
		return false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	return err == nil && n < 1<<32-1
}

// hasKey reports whether keys holds the string key k.
func hasKey(keys []propKey, k string) bool {
	for _, p := range keys {
		if goja.IsString(p.name) && p.name.String() == k {
			return true
		}
	}
	return false
}

// shape is how an object is laid out (the locals of Node's formatRaw): base text before the
// braces ([Function: f], [String: 'ab']), the braces, the entries of its contents (items,
// Map pairs) made by items, then its keys as "key: value".
type shape struct {
	base, open, close string
	items             func(l *entryList, depth int) arrayLayout
	keys              []propKey
	array             bool // the entries are an array's: they may be grouped in columns
}

// object renders o as Node's formatValue and formatRaw do.
func (in *inspector) object(o *goja.Object, depth int) {
	for o.ExportType() == proxyType {
		// As Node: a proxy is shown as its target, and none of its traps runs.
		if o = o.Export().(goja.Proxy).Target(); o == nil {
			in.write("<Revoked Proxy>")
			return
		}
	}
	for _, s := range in.seen {
		if s == o {
			in.write(fmt.Sprintf("[Circular *%d]", in.st.ref(o)))
			return
		}
	}
	in.seen = append(in.seen, o)
	defer func() { in.seen = in.seen[:len(in.seen)-1] }()

	s, done := in.shapeOf(o, depth)
	if done {
		return
	}
	if in.tooDeep(depth) {
		ctor, hasCtor := in.constructorName(o, nil)
		name := strings.TrimSuffix(prefix(ctor, hasCtor, in.stringTag(o), "Object", ""), " ")
		if hasCtor {
			name = "[" + name + "]"
		}
		in.write(name)
		return
	}
	in.enter(depth)
	var entries entryList
	lay := arrayLayout{grouped: s.array}
	if s.items != nil {
		lay = s.items(&entries, depth)
		lay.grouped = s.array
	}
	// One call for the descriptors of an object's keys, but for an array's (that would list
	// every index) and an object with more keys than are shown.
	var descs *goja.Object
	if len(s.keys) > 1 && len(s.keys) <= inspectItems && !s.array {
		d, err := in.r.inspectNatives().descriptors(goja.Undefined(), o)
		must(err)
		descs, _ = d.(*goja.Object)
	}
	for i, k := range s.keys {
		if entries.full {
			break
		}
		if i == inspectItems {
			entries.add(in, fmt.Sprintf("... %d more propert%s", len(s.keys)-i, map[bool]string{true: "y", false: "ies"}[len(s.keys)-i == 1]))
			break
		}
		entries.add(in, in.property(o, k, descs, depth))
	}
	base := s.base
	if n, ok := in.st.circular[o]; ok {
		if base == "" {
			base = fmt.Sprintf("<ref *%d>", n)
		} else {
			base = fmt.Sprintf("<ref *%d> %s", n, base)
		}
	}
	in.reduce(base, s.open, s.close, entries.items, depth, lay)
}

// shapeOf works out o's shape; done reports that o was written whole already (an object
// with nothing inside its braces). The steps go from what the class says to what brand checks
// find to a plain object.
func (in *inspector) shapeOf(o *goja.Object, depth int) (s shape, done bool) {
	h := in.headOf(o)
	s.open, s.close = "{", "}"
	if isFunctionObject(o) {
		s.base = in.functionBase(o, h.ctor, h.hasCtor, h.tag)
		if s.keys = in.keysOf(o, h.own, nil); len(s.keys) == 0 {
			return in.whole(s, s.base)
		}
		return s, false
	}
	return in.classShape(h, s, depth)
}

// shapeHead is what shapeOf's steps know of an object before its shape: its class, its own
// keys, its constructor's name and its Symbol.toStringTag.
type shapeHead struct {
	o       *goja.Object
	cls     string
	own     []string
	ctor    string
	hasCtor bool
	tag     string
}

// prefix is prefix for o: its constructor and tag, else fallback.
func (h shapeHead) prefix(fallback, size string) string {
	return prefix(h.ctor, h.hasCtor, h.tag, fallback, size)
}

// boxedBase is boxedBase for o, a boxed primitive of class cls shown as shown.
func (h shapeHead) boxedBase(cls, shown string) string {
	return boxedBase(cls, h.ctor, h.hasCtor, h.tag, shown)
}

// headOf reads what shapeOf needs of o first.
func (in *inspector) headOf(o *goja.Object) shapeHead {
	h := shapeHead{o: o, cls: objectClass(o)}
	// Own keys are listed once, except an array's or typed array's (those list every index):
	// their own constructor is not looked for.
	if h.cls != "Array" && !inherits(o, in.r.inspectNatives().typedArrayProto) {
		h.own = o.Keys()
	}
	h.ctor, h.hasCtor = in.constructorName(o, h.own)
	h.tag = in.stringTag(o)
	return h
}

// whole writes text, all of o, for shapeOf.
func (in *inspector) whole(s shape, text string) (shape, bool) {
	in.write(text)
	return s, true
}

// classShape is shapeOf for the classes goja reports (Array, Map, Date, boxed primitives...).
func (in *inspector) classShape(h shapeHead, s shape, depth int) (shape, bool) {
	o, cls := h.o, h.cls
	switch cls {
	case "Array":
		n := o.Get("length").ToInteger()
		if n <= inspectReads {
			s.keys = in.keysOf(o, nil, isIndex)
		}
		if h.ctor != "Array" || h.tag != "" {
			s.open = h.prefix("Array", fmt.Sprintf("(%d)", n)) + "["
		} else {
			s.open = "["
		}
		s.close = "]"
		if n == 0 && len(s.keys) == 0 {
			return in.whole(s, s.open+"]")
		}
		s.array = true
		s.items = func(l *entryList, depth int) arrayLayout { return in.arrayItems(o, n, len(s.keys), l, depth) }
		return s, false
	case "Map", "Set":
		size := o.Get("size").ToInteger()
		s.keys = in.keysOf(o, h.own, nil)
		p := h.prefix(cls, fmt.Sprintf("(%d)", size))
		if size == 0 && len(s.keys) == 0 {
			return in.whole(s, p+"{}")
		}
		s.open = p + "{"
		s.items = func(l *entryList, depth int) arrayLayout { in.collection(o, cls, l, depth); return arrayLayout{} }
		return s, false
	case "Arguments":
		s.keys = in.keysOf(o, h.own, nil)
		s.open = "[Arguments] {"
		if len(s.keys) == 0 {
			return in.whole(s, "[Arguments] {}")
		}
		return s, false
	case "Error":
		s.keys = in.keysOf(o, h.own, nil)
		s.base = in.errorBase(o, &s.keys, depth)
		if len(s.keys) == 0 {
			return in.whole(s, s.base)
		}
		return s, false
	case "Date":
		s.keys = in.keysOf(o, h.own, nil)
		if t, ok := o.Export().(time.Time); ok {
			s.base = isoString(t)
		} else {
			s.base = "Invalid Date"
		}
		if p := h.prefix("Date", ""); p != "Date " {
			s.base = p + s.base
		}
		if len(s.keys) == 0 {
			return in.whole(s, s.base)
		}
		return s, false
	case "RegExp":
		s.keys = in.keysOf(o, h.own, nil)
		s.base = o.String()
		if p := h.prefix("RegExp", ""); p != "RegExp " {
			s.base = p + s.base
		}
		if len(s.keys) == 0 || in.tooDeep(depth) {
			return in.whole(s, s.base)
		}
		return s, false
	case "String", "Number", "Boolean":
		skip := func(string) bool { return false }
		shown := o.String()
		if cls == "String" {
			length := int64(jsLength(shown))
			skip = func(k string) bool {
				n, err := strconv.ParseInt(k, 10, 64)
				return isIndex(k) && err == nil && n < length
			}
			shown = quote(shown)
		} else if cls == "Number" {
			shown = numberString(in.r.rt.ToValue(o.ToFloat()))
		}
		s.keys = in.keysOf(o, h.own, skip)
		s.base = h.boxedBase(cls, shown)
		if len(s.keys) == 0 {
			return in.whole(s, s.base)
		}
		return s, false
	case "Promise":
		s.keys = in.keysOf(o, h.own, nil)
		s.open = h.prefix("Promise", "") + "{"
		s.items = func(l *entryList, depth int) arrayLayout { in.promiseState(o, l, depth); return arrayLayout{} }
		return s, false
	}
	return in.brandedShape(h, s)
}

// brandedShape is shapeOf for the objects goja reports as plain ones that brand checks tell
// apart (kindOf): typed arrays, buffers, weak collections, boxed symbols, iterators.
func (in *inspector) brandedShape(h shapeHead, s shape) (shape, bool) {
	o := h.o
	switch kind := in.kindOf(o); kind {
	case kindTypedArray:
		n := in.r.inspectNatives()
		name, _ := in.r.brand(n.typedArrayTag, o)
		lv, _ := in.r.brand(n.typedArrayLength, o)
		length := lv.ToInteger()
		s.keys = in.keysOf(o, nil, isIndex)
		s.open = h.prefix(name.String(), fmt.Sprintf("(%d)", length)) + "["
		s.close = "]"
		if length == 0 && len(s.keys) == 0 {
			return in.whole(s, s.open+"]")
		}
		s.array = true
		s.items = func(l *entryList, depth int) arrayLayout { return in.typedArrayItems(o, length, l) }
		return s, false
	case kindArrayBuffer:
		s.keys = append([]propKey{{name: in.r.rt.ToValue("byteLength"), hidden: true}}, in.keysOf(o, h.own, nil)...)
		s.open = h.prefix("ArrayBuffer", "") + "{"
		ab := o.Export().(goja.ArrayBuffer)
		s.items = func(l *entryList, _ int) arrayLayout {
			l.add(in, bufferContents(ab))
			return arrayLayout{}
		}
		return s, false
	case kindDataView:
		s.keys = append([]propKey{
			{name: in.r.rt.ToValue("byteLength"), hidden: true},
			{name: in.r.rt.ToValue("byteOffset"), hidden: true},
			{name: in.r.rt.ToValue("buffer"), hidden: true},
		}, in.keysOf(o, h.own, nil)...)
		s.open = h.prefix("DataView", "") + "{"
		return s, false
	case kindWeakMap, kindWeakSet:
		s.keys = in.keysOf(o, h.own, nil)
		name := map[objectKind]string{kindWeakMap: "WeakMap", kindWeakSet: "WeakSet"}[kind]
		s.open = h.prefix(name, "") + "{"
		s.items = func(l *entryList, _ int) arrayLayout { l.add(in, "<items unknown>"); return arrayLayout{} }
		return s, false
	case kindSymbolBox, kindBigIntBox:
		n := in.r.inspectNatives()
		cls, fn := "Symbol", n.symbolValueOf
		if kind == kindBigIntBox {
			cls, fn = "BigInt", n.bigIntValueOf
		}
		v, _ := in.r.brand(fn, o)
		c := &inspector{r: in.r, limit: 1 << 10, depthLimit: 0}
		c.value(v, 0)
		s.keys = in.keysOf(o, h.own, nil)
		s.base = h.boxedBase(cls, c.b.String())
		if len(s.keys) == 0 {
			return in.whole(s, s.base)
		}
		return s, false
	case kindMapIterator, kindSetIterator:
		s.keys = in.keysOf(o, h.own, nil)
		typ := map[objectKind]string{kindMapIterator: "Map", kindSetIterator: "Set"}[kind]
		t := h.tag
		if t != typ+" Iterator" {
			if t != "" {
				t += "] ["
			}
			t += typ + " Iterator"
		}
		p := in.r.iteratorPreview(o)
		if p.keyValue {
			t = strings.TrimSuffix(t, " Iterator") + " Entries"
		}
		s.open = "[" + t + "] {"
		s.items = func(l *entryList, depth int) arrayLayout { in.iteratorItems(p, l, depth); return arrayLayout{} }
		return s, false
	}
	return in.plainShape(h, s)
}

// plainShape is shapeOf for any other object: a URL, URLSearchParams or plain object.
func (in *inspector) plainShape(h shapeHead, s shape) (shape, bool) {
	o := h.o
	s.keys = in.keysOf(o, h.own, nil)
	switch {
	case h.ctor == "URL" && in.r.web.class(o, "URL"):
		s.keys = nil
		for _, k := range urlInspectKeys {
			s.keys = append(s.keys, propKey{name: in.r.rt.ToValue(k)})
		}
		s.open = "URL {"
	case h.ctor == "URLSearchParams":
		if pairs, ok := in.r.web.searchParamsPairs(o); ok {
			if len(pairs) == 0 {
				return in.whole(s, "URLSearchParams {}")
			}
			s.open = "URLSearchParams {"
			s.keys = nil
			s.items = func(l *entryList, _ int) arrayLayout {
				for i, pr := range pairs {
					if i == inspectItems || l.full {
						l.add(in, fmt.Sprintf("... %d more items", len(pairs)-i))
						break
					}
					l.add(in, quote(pr[0])+" => "+quote(pr[1]))
				}
				return arrayLayout{}
			}
			return s, false
		}
		fallthrough
	default:
		// A plain object has no prefix unless it has a tag: { a: 1 }, Object [T] { a: 1 }.
		if h.ctor != "Object" || !h.hasCtor || h.tag != "" {
			s.open = h.prefix("Object", "") + "{"
		}
		if len(s.keys) == 0 {
			return in.whole(s, s.open+"}")
		}
	}
	return s, false
}

// functionBase is Node's getFunctionBase: [Function: f], [AsyncFunction: f],
// [GeneratorFunction: g], [Function (anonymous)], [class A extends B].
func (in *inspector) functionBase(o *goja.Object, ctor string, hasCtor bool, tag string) string {
	if src, err := in.r.inspectNatives().functionSource(o); err == nil {
		if text := src.String(); strings.HasPrefix(text, "class") && strings.HasSuffix(text, "}") {
			return in.classBase(o, ctor, hasCtor, tag)
		}
	}
	typ := "Function"
	switch ctor {
	case "GeneratorFunction", "AsyncFunction", "AsyncGeneratorFunction":
		typ = ctor
	}
	base := "[" + typ
	if !hasCtor {
		base += " (null prototype)"
	}
	if n := o.Get("name"); n == nil || !goja.IsString(n) || n.String() == "" {
		base += " (anonymous)"
	} else {
		base += ": " + n.String()
	}
	base += "]"
	if hasCtor && ctor != typ && ctor != "Function" {
		base += " " + ctor
	}
	if tag != "" && ctor != tag {
		base += " [" + tag + "]"
	}
	return base
}

// classBase is Node's getClassBase.
func (in *inspector) classBase(o *goja.Object, ctor string, hasCtor bool, tag string) string {
	name := "(anonymous)"
	if d := in.descriptor(o, in.r.rt.ToValue("name")); d != nil {
		if n := d.Get("value"); n != nil && goja.IsString(n) && n.String() != "" {
			name = n.String()
		}
	}
	base := "class " + name
	if ctor != "Function" && hasCtor {
		base += " [" + ctor + "]"
	}
	if tag != "" && ctor != tag {
		base += " [" + tag + "]"
	}
	if !hasCtor {
		base += " extends [null prototype]"
	} else if super := o.Prototype(); super != nil {
		if n := super.Get("name"); n != nil && goja.IsString(n) && n.String() != "" {
			base += " extends " + n.String()
		}
	}
	return "[" + base + "]"
}

// boxedBase is Node's getBoxedBase: [Number: 3], [String: 'ab'], [Symbol: Symbol(q)].
func boxedBase(typ, ctor string, hasCtor bool, tag, shown string) string {
	base := "[" + typ
	if typ != ctor {
		if !hasCtor {
			base += " (null prototype)"
		} else {
			base += " (" + ctor + ")"
		}
	}
	base += ": " + shown + "]"
	if tag != "" && tag != ctor {
		base += " [" + tag + "]"
	}
	return base
}

// errorBase is an error's text: "Error: boom" at the top, "[Error: boom]" inside another
// value (the stack is not shown: its frames are the sandbox's, not the model's). Its cause and
// an AggregateError's errors join the keys, shown as Node does: [cause]: …, [errors]: [ … ].
func (in *inspector) errorBase(o *goja.Object, keys *[]propKey, depth int) string {
	name, msg := "Error", ""
	if v := o.Get("name"); v != nil && !goja.IsUndefined(v) {
		name = v.String()
	}
	if v := o.Get("message"); v != nil && !goja.IsUndefined(v) {
		msg = v.String()
	}
	text := name
	if msg != "" {
		text += ": " + msg
	}
	// Node leaves out the keys the stack already shows.
	kept := (*keys)[:0]
	for _, k := range *keys {
		if goja.IsString(k.name) && k.name.String() == "stack" {
			continue // V8's stack is not enumerable
		}
		if goja.IsString(k.name) && (k.name.String() == "name" || k.name.String() == "message") {
			if v := o.Get(k.name.String()); v != nil && goja.IsString(v) && strings.Contains(text, v.String()) {
				continue
			}
		}
		kept = append(kept, k)
	}
	*keys = kept
	if !hasKey(*keys, "cause") && hasOwn(o, "cause") {
		*keys = append(*keys, propKey{name: in.r.rt.ToValue("cause"), hidden: true})
	}
	if errs, ok := o.Get("errors").(*goja.Object); ok && objectClass(errs) == "Array" && !hasKey(*keys, "errors") {
		*keys = append(*keys, propKey{name: in.r.rt.ToValue("errors"), hidden: true})
	}
	// With its stack, Node writes an error as its stack's lines (here only the first); without
	// one (deleted, or not a string), in brackets.
	if st := o.Get("stack"); depth > 0 || st == nil || !goja.IsString(st) {
		return "[" + text + "]"
	}
	return text
}

// property renders one key of o as Node's formatProperty: "key: value", an accessor as
// [Getter], [Setter] or [Getter/Setter] without calling it.
func (in *inspector) property(o *goja.Object, k propKey, descs *goja.Object, depth int) string {
	var str string
	var d *goja.Object
	switch {
	case descs == nil:
		d = in.descriptor(o, k.name)
	case goja.IsString(k.name):
		d, _ = descs.Get(k.name.String()).(*goja.Object)
	default:
		d, _ = descs.GetSymbol(k.name.(*goja.Symbol)).(*goja.Object)
	}
	switch {
	case d == nil: // not an own property (a URL's, a DataView's): read through the prototype
		if sym, ok := k.name.(*goja.Symbol); ok {
			str = in.renderTo(o.GetSymbol(sym), depth+1)
		} else {
			str = in.renderTo(o.Get(k.name.String()), depth+1)
		}
	case defined(d.Get("value")):
		str = in.renderTo(d.Get("value"), depth+1)
	case defined(d.Get("get")):
		str = "[Getter]"
		if defined(d.Get("set")) {
			str = "[Getter/Setter]"
		}
	case defined(d.Get("set")):
		str = "[Setter]"
	default:
		str = "undefined"
	}
	var name string
	switch key := k.name.(type) {
	case *goja.Symbol:
		name = symbolText(key)
	default:
		s := key.String()
		switch {
		case s == "__proto__":
			name = "['__proto__']"
		case k.hidden:
			name = "[" + s + "]"
		case isKeyName(s):
			name = s
		default:
			name = quote(s)
		}
	}
	return name + ": " + str
}

// defined reports whether v is neither absent nor undefined.
func defined(v goja.Value) bool { return v != nil && !goja.IsUndefined(v) }

// renderTo renders v as the value of a key, two columns further in.
func (in *inspector) renderTo(v goja.Value, depth int) string {
	c := in.child()
	c.value(v, depth)
	if c.full {
		in.full = true
	}
	return c.b.String()
}

// symbolText is a symbol as Node shows it: Symbol(description).
func symbolText(s *goja.Symbol) string { return "Symbol(" + s.String() + ")" }

// isKeyName reports whether Node shows key k unquoted (/^[a-zA-Z_][a-zA-Z_0-9]*$/).
func isKeyName(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return true
}

// arrayItems renders an array's elements (Node's formatArray): holes as <n empty items>,
// at most inspectItems of them. extraKeys is how many keys follow them, for the layout.
func (in *inspector) arrayItems(o *goja.Object, n int64, extraKeys int, entries *entryList, depth int) arrayLayout {
	numeric := true
	// reads bounds the elements looked at, holes included: a sparse array's length can be
	// 2^32-1, and this is native code the run's Interrupt cannot stop.
	reads := 0
	i := int64(0)
	for shown := 0; i < n && shown < inspectItems && reads < inspectReads && !entries.full; shown++ {
		reads++
		if v := o.Get(strconv.FormatInt(i, 10)); v != nil {
			if !goja.IsNumber(v) && !goja.IsBigInt(v) {
				numeric = false
			}
			entries.add(in, in.render(v, depth+1, entries))
			i++
			continue
		}
		numeric = false
		holes := int64(1)
		for i++; i < n && reads < inspectReads && o.Get(strconv.FormatInt(i, 10)) == nil; i++ {
			holes++
			reads++
		}
		entries.add(in, fmt.Sprintf("<%d empty item%s>", holes, plural(holes)))
	}
	more := i < n
	if more {
		entries.add(in, fmt.Sprintf("... %d more item%s", n-i, plural(n-i)))
	}
	// Node aligns columns right when the array's first len(output) slots hold numbers: an
	// extra key counts as a slot past the end.
	if extraKeys > 0 && int64(len(entries.items)+extraKeys) > n {
		numeric = false
	}
	return arrayLayout{numeric: numeric, more: len(entries.items)+extraKeys > inspectItems}
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// typedArrayItems renders a typed array's elements (Node's formatTypedArray).
func (in *inspector) typedArrayItems(o *goja.Object, n int64, entries *entryList) arrayLayout {
	shown := min(n, inspectItems)
	for i := int64(0); i < shown && !entries.full; i++ {
		v := o.Get(strconv.FormatInt(i, 10))
		if goja.IsBigInt(v) {
			entries.add(in, v.String()+"n")
		} else {
			entries.add(in, numberString(v))
		}
	}
	if n > shown {
		entries.add(in, fmt.Sprintf("... %d more item%s", n-shown, plural(n-shown)))
	}
	return arrayLayout{numeric: true, more: n > shown}
}

// bufferContents is Node's formatArrayBuffer: [Uint8Contents]: <01 02>.
func bufferContents(ab goja.ArrayBuffer) string {
	if ab.Detached() {
		return "(detached)"
	}
	b := ab.Bytes()
	shown := b[:min(len(b), inspectItems)]
	var sb strings.Builder
	sb.WriteString("[Uint8Contents]: <")
	for i, c := range shown {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	if rest := len(b) - len(shown); rest > 0 {
		fmt.Fprintf(&sb, " ... %d more byte%s", rest, plural(int64(rest)))
	}
	sb.WriteByte('>')
	return sb.String()
}

// promiseState renders a promise's state (Node's formatPromise).
func (in *inspector) promiseState(o *goja.Object, entries *entryList, depth int) {
	p, ok := o.Export().(*goja.Promise)
	if !ok {
		return
	}
	switch p.State() {
	case goja.PromiseStatePending:
		entries.add(in, "<pending>")
	case goja.PromiseStateFulfilled:
		entries.add(in, in.render(p.Result(), depth+1, entries))
	default:
		entries.add(in, "<rejected> "+in.render(p.Result(), depth+1, entries))
	}
}

// collection renders a Map's pairs or a Set's values through Array.from (the program's own,
// should it have replaced it: the output is only its own log).
func (in *inspector) collection(o *goja.Object, cls string, entries *entryList, depth int) {
	var items *goja.Object
	if from, ok := goja.AssertFunction(in.r.rt.Get("Array").ToObject(in.r.rt).Get("from")); ok {
		v, err := from(goja.Undefined(), o)
		must(err)
		items, _ = v.(*goja.Object)
	}
	if items == nil {
		return
	}
	n := items.Get("length").ToInteger()
	for i := int64(0); i < n && i < inspectItems && !entries.full; i++ {
		item := items.Get(strconv.FormatInt(i, 10))
		if pair, ok := item.(*goja.Object); ok && cls == "Map" {
			k := in.render(pair.Get("0"), depth+1, entries)
			entries.add(in, k+" => "+in.render(pair.Get("1"), depth+1, entries))
		} else {
			entries.add(in, in.render(item, depth+1, entries))
		}
	}
	if n > inspectItems {
		entries.add(in, fmt.Sprintf("... %d more item%s", n-inspectItems, plural(n-inspectItems)))
	}
}

// iteratorItems renders what a Map or Set iterator has left to give (Node's formatIterator):
// values, or [key, value] pairs for an entries iterator.
func (in *inspector) iteratorItems(p *iteratorPreview, entries *entryList, depth int) {
	n := int64(len(p.pending))
	for i := int64(0); i < n && i < inspectItems && !entries.full; i++ {
		item := p.pending[i]
		if pair, ok := item.(*goja.Object); ok && p.keyValue {
			c := in.child()
			c.enter(depth)
			var two entryList
			two.add(c, c.render(pair.Get("0"), depth+1, &two))
			two.add(c, c.render(pair.Get("1"), depth+1, &two))
			c.reduce("", "[", "]", two.items, depth, arrayLayout{})
			entries.add(in, c.b.String())
			continue
		}
		entries.add(in, in.render(item, depth+1, entries))
	}
	if n > inspectItems {
		entries.add(in, fmt.Sprintf("... %d more item%s", n-inspectItems, plural(n-inspectItems)))
	}
}

// urlInspectKeys are the properties Node shows of a URL, in its order.
var urlInspectKeys = []string{"href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "searchParams", "hash"}

// Node's layout of objects and arrays (util.inspect with compact: 3, breakLength: 80): an
// object whose entries fit in the line, and that holds fewer than three levels of objects
// entered, is written on one line; otherwise each entry is on a line of its own, indented
// by two more columns; an array of more than six short entries is laid out in columns.
const (
	inspectBreakLength = 80
	inspectCompact     = 3
)

// inspectState is shared by the inspectors rendering one value.
type inspectState struct {
	current  int                     // depth of the object entered last (Node's currentDepth)
	circular map[*goja.Object]int    // the objects met again inside themselves, numbered from 1
	ctors    map[*goja.Object]string // constructor names by prototype, for constructorName
}

// ref numbers o as a target of [Circular *n].
func (st *inspectState) ref(o *goja.Object) int {
	if st.circular == nil {
		st.circular = make(map[*goja.Object]int)
	}
	n, ok := st.circular[o]
	if !ok {
		n = len(st.circular) + 1
		st.circular[o] = n
	}
	return n
}

// enter records that an object at depth is being rendered (Node's ctx.currentDepth).
func (in *inspector) enter(depth int) { in.st.current = depth }

// entryList collects the rendered entries of one object within the output's room.
type entryList struct {
	items []string
	used  int
	full  bool
}

func (l *entryList) add(in *inspector, s string) {
	if l.full {
		return
	}
	l.items = append(l.items, s)
	l.used += len(s) + 2
	if l.used >= in.limit-in.b.Len() {
		l.full = true
	}
}

// child is an inspector for a part of the value in.b is rendering: two columns further in,
// in the room left.
func (in *inspector) child() *inspector {
	return &inspector{r: in.r, limit: max(in.limit-in.b.Len(), 0), depthLimit: in.depthLimit,
		seen: in.seen, indent: in.indent + 2, st: in.st}
}

// render renders v as an entry of the object being rendered: two columns further in, in
// the room the entries before it left.
func (in *inspector) render(v goja.Value, depth int, l *entryList) string {
	c := &inspector{r: in.r, limit: max(in.limit-in.b.Len()-l.used, 0), depthLimit: in.depthLimit,
		seen: in.seen, indent: in.indent + 2, st: in.st}
	c.value(v, depth)
	if c.full {
		l.full = true
	}
	return c.b.String()
}

// arrayLayout says how an array's entries may be grouped in columns.
type arrayLayout struct {
	grouped bool // an array: more than six entries may go in columns
	numeric bool // every element a number or bigint: columns align right
	more    bool // the output has more than inspectItems entries: the last is left out of columns
}

// reduce writes base and the entries between open and close, on one line or on lines of
// their own (Node's reduceToSingleString).
func (in *inspector) reduce(base, open, close string, entries []string, depth int, lay arrayLayout) {
	out := entries
	if lay.grouped && len(entries) > 6 {
		out = in.groupColumns(entries, lay)
	}
	lead := ""
	if base != "" {
		lead = base + " "
	}
	if in.st.current-depth < inspectCompact && len(out) == len(entries) {
		start := len(out) + in.indent + jsLength(open) + jsLength(base) + 10
		if fitsOnALine(out, start) && !strings.Contains(base, "\n") {
			if joined := strings.Join(out, ", "); !strings.Contains(joined, "\n") {
				in.write(lead + open + " " + joined + " " + close)
				return
			}
		}
	}
	ind := "\n" + strings.Repeat(" ", in.indent)
	in.write(lead + open + ind + "  " + strings.Join(out, ","+ind+"  ") + ind + close)
}

// fitsOnALine is Node's isBelowBreakLength.
func fitsOnALine(entries []string, start int) bool {
	total := len(entries) + start
	if total+len(entries) > inspectBreakLength {
		return false
	}
	for _, e := range entries {
		if total += jsLength(e); total > inspectBreakLength {
			return false
		}
	}
	return true
}

// groupColumns is Node's groupArrayElements: short entries in aligned columns, as many as
// make the block roughly square, at most 15 and within the line.
func (in *inspector) groupColumns(entries []string, lay arrayLayout) []string {
	const separator = 2 // ", "
	n := len(entries)
	if lay.more {
		n--
	}
	widths := make([]int, n)
	total, widest := 0, 0
	for i := 0; i < n; i++ {
		widths[i] = jsLength(entries[i])
		total += widths[i] + separator
		widest = max(widest, widths[i])
	}
	actualMax := widest + separator
	if actualMax*3+in.indent >= inspectBreakLength || (float64(total)/float64(actualMax) <= 5 && widest > 6) {
		return entries
	}
	averageBias := math.Sqrt(float64(actualMax) - float64(total)/float64(len(entries)))
	biasedMax := math.Max(float64(actualMax)-3-averageBias, 1)
	columns := min(
		int(math.Round(math.Sqrt(2.5*biasedMax*float64(n))/biasedMax)),
		(inspectBreakLength-in.indent)/actualMax,
		inspectCompact*4,
		15,
	)
	if columns <= 1 {
		return entries
	}
	lineWidths := make([]int, columns)
	for c := 0; c < columns; c++ {
		for j := c; j < n; j += columns {
			lineWidths[c] = max(lineWidths[c], widths[j])
		}
		lineWidths[c] += separator
	}
	var rows []string
	for i := 0; i < n; i += columns {
		last := min(i+columns, n) - 1
		var b strings.Builder
		for j := i; j <= last; j++ {
			cell := entries[j]
			width := lineWidths[j-i]
			if j < last {
				cell += ", "
			} else {
				width -= separator
			}
			pad := strings.Repeat(" ", max(width-jsLength(cell), 0))
			switch {
			case lay.numeric:
				b.WriteString(pad + cell)
			case j < last:
				b.WriteString(cell + pad)
			default:
				b.WriteString(cell)
			}
		}
		rows = append(rows, b.String())
	}
	if lay.more {
		rows = append(rows, entries[n])
	}
	return rows
}

// jsLength is a string's length in UTF-16 code units, as Node measures it.
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// quote renders a string as Node does inside objects: single quotes, escapes for quotes,
// backslashes and control characters.
func quote(s string) string {
	// Node picks the quote the string does not contain: ' then " then `.
	q := '\''
	if strings.ContainsRune(s, '\'') {
		if !strings.ContainsRune(s, '"') {
			q = '"'
		} else if !strings.ContainsRune(s, '`') {
			q = '`'
		}
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteRune(q)
	for _, c := range s {
		switch c {
		case q:
			b.WriteByte('\\')
			b.WriteRune(c)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\x%02X`, c)
			} else {
				b.WriteRune(c)
			}
		}
	}
	b.WriteRune(q)
	return b.String()
}
