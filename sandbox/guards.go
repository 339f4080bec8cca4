package sandbox

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/codemode/codemode/internal/bytesize"
	"github.com/dop251/goja"
)

// Built-in guards.
//
// Many ECMAScript built-ins do their whole work in one native step: goja cannot interrupt
// them, so a step sized by a program's numbers runs to its end whatever the run's timeout,
// and past what the operating system grants, Go ends the whole process with a fatal "out of
// memory" ('x'.repeat(2**40), new ArrayBuffer(2**40), Math.max.apply(null, {length: 2**32-1})
// and Array.prototype.toSorted.call({length: 2**32-2}) each do, in one line), while
// Array.prototype.includes.call({length: 2**53-1}, 1) keeps a core busy for days after its
// run has timed out. A run's fresh runtime gets guarded versions of them that size the step
// first, in proportion to Options.Memory, and fail the run with kind "limit" before any
// allocation or loop when it is too large. The failure cannot be caught: like MaxCalls, a
// program that caught the error and tried again would only spin until its timeout, and the
// model that wrote it learns more from a limit failure naming the built-in and the cap than
// from a RangeError.
//
// Guarded, with what is sized:
//   - strings built: String.prototype.repeat, padStart and padEnd (the result),
//     Array.prototype.join and toString (done by the guard itself, counting every element and
//     separator as it goes, nested arrays included), String.prototype.concat (the parts),
//     replace and replaceAll (the occurrences times the replacement, or what a replacement
//     function returns), TypedArray.prototype.join and toLocaleString (the elements' widest
//     text), JSON.stringify (the text of the values it visits, and their number);
//   - arrays walked or built from an array-like's length: every Array.prototype method that
//     walks up to the length in native code (goja calls no JavaScript at a hole, so a sparse
//     or array-like length of 2**53 is a native loop of 2**53 steps) or allocates for all of
//     it: concat, copyWithin, entries, every, filter, find, findIndex, findLast,
//     findLastIndex, flat and flatMap (the elements they would visit, nested ones included,
//     and the nesting), forEach, includes, indexOf, keys, lastIndexOf, map, reduce,
//     reduceRight, reverse, shift, slice, some, sort, splice, toLocaleString, toReversed,
//     toSorted, toSpliced, unshift, values and [Symbol.iterator] (so spread, for-of and every
//     built-in that iterates: Array.from, new Set, Promise.all, …), with; fill (the range
//     filled); Function.prototype.apply, Reflect.apply and Reflect.construct (the argument
//     list); Array.from (the source's length); String.prototype.split (the pieces);
//     String.raw (the template's length);
//   - allocations: the Array constructor called or constructed with one numeric length (and
//     with it Array.from and the species creation of map, filter and slice), the ArrayBuffer
//     and typed-array constructors (the bytes, and the elements, which every expansion of a
//     typed array — Object.keys, spread, Array.from — multiplies), BigInt.asUintN and asIntN
//     (the bits);
//   - nesting: JSON.parse (goja parses recursively and very deep text overflows the Go stack,
//     which no recover catches), flat (a self-containing array flattened to depth Infinity).
//
// A walked array-like that is not an array (a plain object, arguments, a proxy, a typed
// array) has its length read once, checked and pinned: the built-in is handed a proxy that
// answers that length, so a getter cannot answer the guard small and the built-in huge. The
// guards convert their arguments once and hand the converted values on, so a valueOf or
// toString runs once, as without them. Work counted by a guard-side callback (JSON.stringify,
// flatMap, replace with a function) also stops at once when the run is stopped.
//
// Installing every guard costs several times the rest of a trivial run (each built-in must be
// materialized in the fresh runtime), so a program gets the guards for the built-ins its
// source names, plus those reached without naming them (join through toString and template
// literals, the array iterators through spread and the built-ins that iterate); all of them
// when it builds code at run time with eval or Function. A program that reaches a built-in
// under a computed name gets the original, as it gets everything else the guards do not
// cover: string concatenation (goja has no hook for +; the heap watchdog catches a string
// doubled in a loop), BigInt arithmetic (1n << 2n**40n is one native step), JSON.stringify
// with an array replacer or of very deeply nested data (quadratic in goja), eval of deeply
// nested text, and expansions bounded by a small factor of what already exists (case
// mapping, normalize, Object.keys of a large array). In process those end at the run's
// timeout or take the process down; in a worker process its stack and memory caps end them.
// Hostile programs belong in worker processes.

// caps bound what one call of a guarded built-in may allocate or walk. See Options.Memory.
type caps struct {
	memory       int64
	stringLength int64 // UTF-16 code units
	arrayLength  int64 // elements, also of a typed array; also the steps of a native walk
	bufferBytes  int64
}

// Fractions of Options.Memory that the caps take.
const (
	stringCapDivisor = 16
	arrayCapDivisor  = 32
	bufferCapDivisor = 4
)

func capsFor(memory int64) caps {
	return caps{
		memory:       memory,
		stringLength: memory / stringCapDivisor,
		arrayLength:  memory / arrayCapDivisor,
		bufferBytes:  memory / bufferCapDivisor,
	}
}

// typedArrays are the typed-array constructors goja provides, with their element sizes.
var typedArrays = [...]struct {
	name string
	size float64
}{
	{"Int8Array", 1}, {"Uint8Array", 1}, {"Uint8ClampedArray", 1},
	{"Int16Array", 2}, {"Uint16Array", 2},
	{"Int32Array", 4}, {"Uint32Array", 4}, {"Float32Array", 4},
	{"Float64Array", 8}, {"BigInt64Array", 8}, {"BigUint64Array", 8},
}

// maxArrayLength is the largest valid JavaScript array length.
const maxArrayLength = math.MaxUint32

// guardSet says which built-ins a program's runtime guards, one bit per built-in or group.
type guardSet uint64

const (
	guardRepeat guardSet = 1 << iota
	guardPadStart
	guardPadEnd
	guardJoin // always: toString and template literals reach it unnamed
	guardFill
	guardJSON // parse and stringify
	guardArray
	guardArrayBuffer
	guardIterators // always: spread and the built-ins that iterate reach them unnamed
	guardFlat
	guardConcat
	guardApply
	guardReflect
	guardArrayFrom
	guardReplace
	guardSplit
	guardStringRaw
	guardBigIntBits
	guardTypedJoin
	guardWalkers                                    // the first of len(walkers) bits, one per group
	guardTypedArrays = guardWalkers << len(walkers) // the first of len(typedArrays) bits, one per constructor
	guardAll         = guardTypedArrays<<len(typedArrays) - 1
)

// walkers are the Array.prototype methods that walk an array-like up to its length in native
// code, or allocate for all of it, and are guarded alike: by the length of their receiver.
// Each group is installed when the source contains its trigger.
var walkers = [...]struct {
	trigger string
	methods []string
}{
	{"every", []string{"every"}},
	{"some", []string{"some"}},
	{"forEach", []string{"forEach"}},
	{"map", []string{"map"}},
	{"filter", []string{"filter"}},
	{"reduce", []string{"reduce", "reduceRight"}},
	{"find", []string{"find", "findIndex", "findLast", "findLastIndex"}},
	{"includes", []string{"includes"}},
	{"ndexOf", []string{"indexOf", "lastIndexOf"}},
	{"evers", []string{"reverse", "toReversed"}},
	{"shift", []string{"shift", "unshift"}},
	{"plice", []string{"splice", "toSpliced"}},
	{"copyWithin", []string{"copyWithin"}},
	{"ort", []string{"sort", "toSorted"}},
	{"toLocaleString", []string{"toLocaleString"}},
	{"with", []string{"with"}},
	{"slice", []string{"slice"}},
	{"keys", []string{"keys"}},
	{"entries", []string{"entries"}},
}

// alwaysGuarded are the guards every program gets: the built-ins a program reaches without
// naming them.
const alwaysGuarded = guardJoin | guardIterators

var (
	// codeAtRunTime matches source that builds code at run time, which can name anything.
	codeAtRunTime = regexp.MustCompile(`\beval\b|Function\b`)
	// arrayCreation matches source that makes arrays with the Array constructor.
	arrayCreation = regexp.MustCompile(`\bArray\s*(\(|\.\s*(from|of|apply|call)\b)|\bextends\s+Array\b`)
	// typedArrayName matches source that names a typed-array constructor.
	typedArrayName = regexp.MustCompile(`(Int|Uint|Float|BigInt|BigUint)(8|16|32|64|8Clamped)?Array\b`)
	methodGuards   = []struct {
		name string
		bit  guardSet
	}{
		{"repeat", guardRepeat}, {"padStart", guardPadStart}, {"padEnd", guardPadEnd},
		{"fill", guardFill}, {"JSON", guardJSON}, {"ArrayBuffer", guardArrayBuffer},
		{"flat", guardFlat}, {"concat", guardConcat}, {"apply", guardApply}, {"Reflect", guardReflect},
		{"from", guardArrayFrom}, {"replace", guardReplace}, {"split", guardSplit}, {"raw", guardStringRaw},
		{"asUintN", guardBigIntBits}, {"asIntN", guardBigIntBits},
	}
)

// guardsFor chooses a program's guards from the source goja runs.
func guardsFor(src string) guardSet {
	if codeAtRunTime.MatchString(src) {
		return guardAll
	}
	g := alwaysGuarded
	for _, m := range methodGuards {
		if strings.Contains(src, m.name) {
			g |= m.bit
		}
	}
	for i, w := range walkers {
		if strings.Contains(src, w.trigger) {
			g |= guardWalkers << i
		}
	}
	if arrayCreation.MatchString(src) {
		g |= guardArray
	}
	for i, ta := range typedArrays {
		if strings.Contains(src, ta.name) {
			g |= guardTypedArrays << i
		}
	}
	if typedArrayName.MatchString(src) && (strings.Contains(src, "join") || strings.Contains(src, "toLocaleString")) {
		g |= guardTypedJoin
	}
	return g
}

// install replaces the built-ins of set in the run's runtime with guarded versions. It
// runs before the program, so the originals it wraps (and the intrinsics the guards use) are
// the runtime's own.
func (g *builtinGuards) install(set guardSet) error {
	if set == 0 {
		return nil
	}
	rt := g.h.runtime()
	global := rt.GlobalObject()
	var errs []error
	add := func(bit guardSet, install func() error) {
		if set&bit != 0 {
			errs = append(errs, install())
		}
	}
	object := func(holder *goja.Object, name string) (*goja.Object, error) {
		o, ok := holder.Get(name).(*goja.Object)
		if !ok {
			return nil, fmt.Errorf("guard: no %s object", name)
		}
		return o, nil
	}
	static := func(holder, name string, length int, guard guardFunc) func() error {
		return func() error {
			o, err := object(global, holder)
			if err != nil {
				return err
			}
			return g.guardMethod(o, name, length, guard)
		}
	}
	if set&(guardRepeat|guardPadStart|guardPadEnd|guardConcat|guardReplace|guardSplit) != 0 {
		stringProto := rt.ToValue("").ToObject(rt).Prototype()
		add(guardRepeat, func() error { return g.guardMethod(stringProto, "repeat", 1, g.guardRepeat) })
		add(guardPadStart, func() error { return g.guardMethod(stringProto, "padStart", 2, g.guardPad("padStart")) })
		add(guardPadEnd, func() error { return g.guardMethod(stringProto, "padEnd", 2, g.guardPad("padEnd")) })
		add(guardConcat, func() error { return g.guardMethod(stringProto, "concat", 1, g.guardStringConcat) })
		add(guardReplace, func() error {
			g.state.match, _ = goja.AssertFunction(stringProto.Get("match"))
			return errors.Join(
				g.guardMethod(stringProto, "replace", 2, g.guardReplace("replace", false)),
				g.guardMethod(stringProto, "replaceAll", 2, g.guardReplace("replaceAll", true)))
		})
		add(guardSplit, func() error { return g.guardMethod(stringProto, "split", 2, g.guardSplit) })
	}
	_, arrayProto := g.h.intrinsics()
	add(guardJoin, func() error { return g.guardMethod(arrayProto, "join", 1, g.guardJoin) })
	add(guardFill, func() error { return g.guardMethod(arrayProto, "fill", 1, g.guardFill) })
	add(guardIterators, func() error { return g.guardIterators(arrayProto) })
	add(guardFlat, func() error {
		array, err := object(global, "Array")
		if err != nil {
			return err
		}
		g.state.isArray, _ = goja.AssertFunction(array.Get("isArray"))
		return errors.Join(g.guardMethod(arrayProto, "flat", 0, g.guardFlat), g.guardMethod(arrayProto, "flatMap", 1, g.guardFlatMap))
	})
	add(guardConcat, func() error { return g.guardMethod(arrayProto, "concat", 1, g.guardArrayConcat) })
	for i, w := range walkers {
		add(guardWalkers<<i, func() error {
			var errs []error
			for _, m := range w.methods {
				length := int(intOf(arrayProto.Get(m).ToObject(rt).Get("length")))
				errs = append(errs, g.guardMethod(arrayProto, m, length, g.guardWalk(m)))
			}
			return errors.Join(errs...)
		})
	}
	add(guardApply, func() error {
		fnProto := rt.ToValue(func() {}).ToObject(rt).Prototype()
		return g.guardMethod(fnProto, "apply", 2, g.guardArgList("Function.prototype.apply", 1))
	})
	add(guardReflect, func() error {
		return errors.Join(
			static("Reflect", "apply", 3, g.guardArgList("Reflect.apply", 2))(),
			static("Reflect", "construct", 2, g.guardArgList("Reflect.construct", 1))())
	})
	add(guardStringRaw, static("String", "raw", 1, g.guardStringRaw))
	add(guardBigIntBits, func() error {
		return errors.Join(
			static("BigInt", "asUintN", 2, g.guardBigIntBits("BigInt.asUintN"))(),
			static("BigInt", "asIntN", 2, g.guardBigIntBits("BigInt.asIntN"))())
	})
	add(guardJSON, func() error {
		json, err := object(global, "JSON")
		if err != nil {
			return err
		}
		return errors.Join(g.guardMethod(json, "parse", 2, g.guardJSONParse), g.guardMethod(json, "stringify", 3, g.guardJSONStringify))
	})
	// Array.from is guarded on the original constructor, before the Array guard wraps it:
	// the wrapper's statics are the original's.
	add(guardArrayFrom, static("Array", "from", 1, g.guardArrayFrom))
	add(guardArray, func() error { return g.guardConstructor(global, "Array", true, g.checkArrayArgs) })
	add(guardArrayBuffer, func() error { return g.guardConstructor(global, "ArrayBuffer", false, g.checkBufferArgs) })
	add(guardTypedJoin, func() error {
		proto, err := g.typedArrayProto()
		if err != nil {
			return err
		}
		return errors.Join(
			g.guardMethod(proto, "join", 1, g.guardTypedJoin("join")),
			g.guardMethod(proto, "toLocaleString", 0, g.guardTypedJoin("toLocaleString")))
	})
	for i, ta := range typedArrays {
		add(guardTypedArrays<<i, func() error {
			return g.guardConstructor(global, ta.name, false, g.checkTypedArrayArgs(ta.name, ta.size))
		})
	}
	return errors.Join(errs...)
}

// guardFunc is the body of a guarded method: it checks and converts the arguments and calls
// the original.
type guardFunc func(orig goja.Callable, call goja.FunctionCall) goja.Value

// guardMethod replaces holder[name] with a native function of the same name and length that
// runs guard around the original.
func (g *builtinGuards) guardMethod(holder *goja.Object, name string, length int, guard guardFunc) error {
	orig, ok := goja.AssertFunction(holder.Get(name))
	if !ok {
		return fmt.Errorf("guard %s: not a function", name)
	}
	f := g.h.function(name, func(call goja.FunctionCall) goja.Value { return guard(orig, call) }).(*goja.Object)
	if err := f.DefineDataProperty("length", g.h.runtime().ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		return err
	}
	return holder.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE) // as a built-in method
}

// guardConstructor replaces holder[name], a constructor, with a guarded one that passes the
// arguments through check first, and points the prototype's constructor property at it too,
// so that instances (and species lookups) lead back to the guarded constructor rather than
// the original. A callable constructor (Array) is wrapped in a proxy, which keeps its statics;
// a construct-only one (ArrayBuffer, the typed arrays), which goja's proxies would make
// neither callable nor usable with instanceof, is replaced by a native constructor that takes
// over its prototype, its own statics and its [[Prototype]] (and, being a goja native
// constructor, also constructs when called without new, where the original throws).
func (g *builtinGuards) guardConstructor(holder *goja.Object, name string, callable bool, check func([]goja.Value) []goja.Value) error {
	ctor, ok := holder.Get(name).(*goja.Object)
	if !ok {
		return fmt.Errorf("guard %s: not an object", name)
	}
	construct, ok := goja.AssertConstructor(ctor)
	if !ok {
		return fmt.Errorf("guard %s: not a constructor", name)
	}
	proto, ok := ctor.Get("prototype").(*goja.Object)
	if !ok {
		return fmt.Errorf("guard %s: no prototype", name)
	}
	var guarded goja.Value
	if callable {
		call, _ := goja.AssertFunction(ctor)
		guarded = g.h.runtime().ToValue(g.h.runtime().NewProxy(ctor, &goja.ProxyTrapConfig{
			Construct: func(_ *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
				defer recoverNative(g.h.runtime(), name)
				o, err := construct(newTarget, check(args)...)
				must(err)
				return o
			},
			Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value {
				defer recoverNative(g.h.runtime(), name)
				v, err := call(this, check(args)...)
				must(err)
				return v
			},
		}))
	} else {
		var f *goja.Object
		f = g.h.runtime().ToValue(func(c goja.ConstructorCall) *goja.Object {
			defer recoverNative(g.h.runtime(), name)
			// goja passes no new.target to a native constructor constructed directly (and
			// cannot tell a call from a construction): the constructor itself stands in.
			newTarget := c.NewTarget
			if newTarget == nil {
				newTarget = f
			}
			o, err := construct(newTarget, check(c.Arguments)...)
			must(err)
			return o
		}).(*goja.Object)
		errs := []error{
			f.DefineDataProperty("name", g.h.runtime().ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE),
			f.DefineDataProperty("length", ctor.Get("length"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE),
			f.DefineDataProperty("prototype", proto, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE),
			f.SetPrototype(ctor.Prototype()),
		}
		for _, static := range []string{"BYTES_PER_ELEMENT", "isView"} {
			if v := ctor.Get(static); v != nil && !goja.IsUndefined(v) {
				errs = append(errs, f.DefineDataProperty(static, v, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("guard %s: %w", name, err)
		}
		guarded = f
	}
	if err := proto.DefineDataProperty("constructor", guarded, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		return err
	}
	return holder.DefineDataProperty(name, guarded, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// overCap fails the run with kind "limit" and unwinds the VM. The failure interrupts the
// runtime, so the program runs no further instruction: no catch or finally block of it sees
// the error.
func (g *builtinGuards) overCap(what string, size float64, limit int64, unit string, divisor int64) {
	msg := fmt.Sprintf("%s %s; the limit is %d %s (1/%d of the run's %s memory limit)",
		what, formatCount(size, unit), limit, unit, divisor, bytesize.Format(g.caps.memory))
	g.h.fail(&Failure{Kind: KindLimit, Message: msg})
	panic(g.h.runtime().NewTypeError(msg))
}

func formatCount(n float64, unit string) string {
	if n >= 1<<62 {
		return "more than 2^62 " + unit
	}
	return fmt.Sprintf("%d %s", int64(n), unit)
}

// callOrig calls an original built-in; its exceptions (and interrupts) keep unwinding.
func callOrig(orig goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := orig(this, args...)
	must(err)
	return v
}

func isNullish(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

// stringLength is a string value's length in UTF-16 code units.
func stringLength(v goja.Value) float64 {
	if s, ok := v.(goja.String); ok {
		return float64(s.Length())
	}
	return float64(len(v.String()))
}

// toLength is ECMAScript's ToLength of a value already converted to a number.
func toLength(v goja.Value) float64 {
	f := v.ToFloat()
	if math.IsNaN(f) || f <= 0 {
		return 0
	}
	return math.Min(math.Trunc(f), 1<<53-1)
}

// lengthOf is ToLength(o.length); a missing length reads as 0.
func lengthOf(o *goja.Object) float64 {
	v := o.Get("length")
	if v == nil {
		return 0
	}
	return toLength(v.ToNumber())
}

// relIndex resolves a relative index (already a number) against a length, as fill and slice
// do.
func relIndex(v goja.Value, length float64) float64 {
	f := v.ToFloat()
	switch {
	case math.IsNaN(f):
		return 0
	case f < 0:
		return math.Max(length+math.Trunc(f), 0)
	default:
		return math.Min(math.Trunc(f), length)
	}
}

// guardRepeat is String.prototype.repeat(count).
func (g *builtinGuards) guardRepeat(orig goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		return callOrig(orig, call.This, call.Arguments...) // throws the TypeError
	}
	s := call.This.ToString()
	count := call.Argument(0).ToNumber()
	if n := math.Trunc(count.ToFloat()); n >= 1 && !math.IsInf(n, 1) {
		if size := stringLength(s) * n; size > float64(g.caps.stringLength) {
			g.overCap("String.prototype.repeat would build a string of", size, g.caps.stringLength, "characters", stringCapDivisor)
		}
	}
	return callOrig(orig, s, count)
}

// guardPad is String.prototype.padStart or padEnd(maxLength, fillString).
func (g *builtinGuards) guardPad(name string) guardFunc {
	return func(orig goja.Callable, call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return callOrig(orig, call.This, call.Arguments...)
		}
		s := call.This.ToString()
		maxLength := call.Argument(0).ToNumber()
		args := []goja.Value{maxLength}
		fills := true
		if fill := call.Argument(1); !goja.IsUndefined(fill) {
			f := g.toString(fill)
			args = append(args, f)
			fills = stringLength(f) > 0
		}
		if size := toLength(maxLength); fills && size > stringLength(s) && size > float64(g.caps.stringLength) {
			g.overCap("String.prototype."+name+" would build a string of", size, g.caps.stringLength, "characters", stringCapDivisor)
		}
		return callOrig(orig, s, args...)
	}
}

// guardJSONParse is JSON.parse(text, reviver) with the text's nesting checked first.
func (g *builtinGuards) guardJSONParse(orig goja.Callable, call goja.FunctionCall) goja.Value {
	text := g.toString(call.Argument(0))
	if d := jsonDepth(text.String()); d > MaxDataDepth {
		msg := fmt.Sprintf("JSON.parse was given text that nests deeper than %d levels", MaxDataDepth)
		g.h.fail(&Failure{Kind: KindLimit, Message: msg})
		panic(g.h.runtime().NewTypeError(msg))
	}
	args := []goja.Value{text}
	if len(call.Arguments) > 1 {
		args = append(args, call.Arguments[1])
	}
	v, err := orig(call.This, args...)
	if err != nil {
		if msg, ok := jsonDiagnosis(text); ok {
			panic(newSyntaxError(g.h.runtime(), msg)) // in Node's words, not Go's decoder's
		}
		must(err)
	}
	return v
}

// checkArrayArgs guards Array(n) and new Array(n). Lengths that are not valid array lengths
// go through, for the original to reject with a RangeError.
func (g *builtinGuards) checkArrayArgs(args []goja.Value) []goja.Value {
	if len(args) == 1 && goja.IsNumber(args[0]) {
		n := args[0].ToFloat()
		if n > float64(g.caps.arrayLength) && n <= maxArrayLength && n == math.Trunc(n) {
			g.overCap("new Array would make an array of", n, g.caps.arrayLength, "elements", arrayCapDivisor)
		}
	}
	return args
}

// checkBufferArgs guards new ArrayBuffer(length).
func (g *builtinGuards) checkBufferArgs(args []goja.Value) []goja.Value {
	if len(args) == 0 {
		return args
	}
	n := args[0].ToNumber()
	if size := n.ToFloat(); size > float64(g.caps.bufferBytes) {
		g.overCap("new ArrayBuffer would allocate", size, g.caps.bufferBytes, "bytes", bufferCapDivisor)
	}
	out := append([]goja.Value{n}, args[1:]...)
	return out
}

// checkTypedArrayArgs guards new <TypedArray>(length), new <TypedArray>(arrayLike) and new
// <TypedArray>(buffer, byteOffset, length): the bytes allocated (an array-like's length is
// read; a typed array or ArrayBuffer source reads as its own size) and the elements made,
// also of a view of an existing buffer, which allocates nothing but has as many elements to
// expand (Object.keys, spread, Array.from) as a new typed array. Numbers are converted once.
func (g *builtinGuards) checkTypedArrayArgs(name string, elemSize float64) func([]goja.Value) []goja.Value {
	check := func(length float64) {
		if size := length * elemSize; size > float64(g.caps.bufferBytes) {
			g.overCap("new "+name+" would allocate", size, g.caps.bufferBytes, "bytes", bufferCapDivisor)
		}
		if length > float64(g.caps.arrayLength) {
			g.overCap("new "+name+" would make a typed array of", length, g.caps.arrayLength, "elements", arrayCapDivisor)
		}
	}
	return func(args []goja.Value) []goja.Value {
		if len(args) == 0 || isNullish(args[0]) {
			return args
		}
		o, ok := args[0].(*goja.Object)
		if !ok {
			n := args[0].ToNumber()
			check(toLength(n))
			return append([]goja.Value{n}, args[1:]...)
		}
		buf, isBuffer := o.Export().(goja.ArrayBuffer)
		if o.ExportType() != arrayBufferType || !isBuffer {
			check(lengthOf(o))
			return args
		}
		// A view: its length is given, or what the buffer holds past the offset.
		out := []goja.Value{o}
		offset := 0.0
		if len(args) > 1 {
			n := args[1].ToNumber()
			out = append(out, n)
			offset = toLength(n)
		}
		length := math.Max(0, (float64(len(buf.Bytes()))-offset)/elemSize)
		if len(args) > 2 && !goja.IsUndefined(args[2]) {
			n := args[2].ToNumber()
			out = append(out, n)
			length = toLength(n)
		} else if len(args) > 2 {
			out = append(out, args[2])
		}
		if length > float64(g.caps.arrayLength) {
			g.overCap("new "+name+" would make a typed array of", length, g.caps.arrayLength, "elements", arrayCapDivisor)
		}
		return append(out, args[min(len(args), 3):]...)
	}
}

// intOf is ToIntegerOrInfinity of a value already known to be a number, saturated to int64.
func intOf(v goja.Value) int64 {
	f := v.ToFloat()
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// isArray reports whether an object is a JavaScript array (a proxy of one is not: callers
// treat proxies as the array-likes they behave as).
func isArray(o *goja.Object) bool { return o.ClassName() == "Array" }

// arrayLike reads an array-like's length once and fails the run when walking it would pass
// the cap; it returns the object a built-in may walk safely: an array itself (its length is
// an own data property no program can make lie), anything else pinned (see pin).
func (g *builtinGuards) arrayLike(o *goja.Object, what string) (*goja.Object, float64) {
	length := lengthOf(o)
	if length > float64(g.caps.arrayLength) {
		noun := " would walk an array-like of"
		if isArray(o) {
			noun = " would walk an array of"
		}
		g.overCap(what+noun, length, g.caps.arrayLength, "elements", arrayCapDivisor)
	}
	if isArray(o) {
		return o, length
	}
	return g.pin(o, length, nil), length
}

// receiver is arrayLike for a built-in's this value; a nullish one is left to the original,
// which throws the TypeError.
func (g *builtinGuards) receiver(this goja.Value, what string) (goja.Value, float64) {
	if isNullish(this) {
		return this, 0
	}
	o, length := g.arrayLike(this.ToObject(g.h.runtime()), what)
	return o, length
}

// pin returns a proxy of o that answers length (and, when spreadable is set,
// Symbol.isConcatSpreadable) with the values already read and checked, and forwards
// everything else to o.
func (g *builtinGuards) pin(o *goja.Object, length float64, spreadable goja.Value) *goja.Object {
	pinned := g.h.runtime().ToValue(length)
	traps := &goja.ProxyTrapConfig{
		Get: func(target *goja.Object, property string, _ goja.Value) goja.Value {
			if property == "length" {
				return pinned
			}
			return target.Get(property)
		},
	}
	if spreadable != nil {
		traps.GetSym = func(target *goja.Object, property *goja.Symbol, _ goja.Value) goja.Value {
			if property == goja.SymIsConcatSpreadable {
				return spreadable
			}
			return target.GetSymbol(property)
		}
	}
	return g.h.runtime().ToValue(g.h.runtime().NewProxy(o, traps)).(*goja.Object)
}

// stopCheck ends a native step of a stopped run: guard-side callbacks call it, so that the
// native loop calling them (JSON.stringify, flatMap, replace) does not run on after the run's
// timeout. The run is interrupted already: no catch of the program sees this.
func (g *builtinGuards) stopCheck() {
	if g.h.stopping() {
		panic(g.h.runtime().NewTypeError("the run was stopped"))
	}
}

// guardWalk is an Array.prototype method that walks its receiver up to its length.
func (g *builtinGuards) guardWalk(method string) guardFunc {
	what := "Array.prototype." + method
	return func(orig goja.Callable, call goja.FunctionCall) goja.Value {
		this, _ := g.receiver(call.This, what)
		return callOrig(orig, this, call.Arguments...)
	}
}

// guardIterators guards Array.prototype.values, which is also [Symbol.iterator]: an iterator
// over an array-like walks it to its length, and the built-ins that iterate (spread,
// Array.from, new Set, Promise.all, …) do so natively. (keys and entries are walkers.)
func (g *builtinGuards) guardIterators(arrayProto *goja.Object) error {
	return errors.Join(
		g.guardMethod(arrayProto, "values", 0, g.guardWalk("values")),
		arrayProto.DefineDataPropertySymbol(goja.SymIterator, arrayProto.Get("values"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
}

// guardArgList is a built-in that spreads the array-like argument at index into an argument
// list (Function.prototype.apply, Reflect.apply, Reflect.construct): goja allocates the list
// for the whole length at once.
func (g *builtinGuards) guardArgList(what string, index int) guardFunc {
	return func(orig goja.Callable, call goja.FunctionCall) goja.Value {
		args := call.Arguments
		if index < len(args) {
			if o, ok := args[index].(*goja.Object); ok {
				pinned, _ := g.arrayLike(o, what)
				args = append([]goja.Value(nil), args...)
				args[index] = pinned
			}
		}
		return callOrig(orig, call.This, args...)
	}
}

// guardArrayFrom is Array.from(items, mapFn, thisArg): the result has an element for each of
// the source's, whether it is walked to its length or iterated (a string); called on another
// constructor (Array.from.call(Object, …)) it makes no array, and no Array guard sees it.
func (g *builtinGuards) guardArrayFrom(orig goja.Callable, call goja.FunctionCall) goja.Value {
	items := call.Argument(0)
	var length float64
	switch v := items.(type) {
	case *goja.Object:
		length = lengthOf(v) // a typed array's is at most the cap: its constructor is guarded
	case goja.String:
		length = float64(v.Length())
	}
	if length > float64(g.caps.arrayLength) {
		g.overCap("Array.from would make an array of", length, g.caps.arrayLength, "elements", arrayCapDivisor)
	}
	return callOrig(orig, call.This, call.Arguments...)
}

// guardFill is Array.prototype.fill(value, start, end): filling a sparse array makes it dense.
func (g *builtinGuards) guardFill(orig goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		return callOrig(orig, call.This, call.Arguments...)
	}
	o := call.This.ToObject(g.h.runtime())
	length := lengthOf(o)
	if !isArray(o) {
		o = g.pin(o, length, nil)
	}
	start := call.Argument(1).ToNumber()
	args := []goja.Value{call.Argument(0), start}
	end := length
	if e := call.Argument(2); !goja.IsUndefined(e) {
		n := e.ToNumber()
		args = append(args, n)
		end = relIndex(n, length)
	}
	if size := end - relIndex(start, length); size > float64(g.caps.arrayLength) {
		g.overCap("Array.prototype.fill would fill", size, g.caps.arrayLength, "elements", arrayCapDivisor)
	}
	return callOrig(orig, o, args...)
}

// guardJoin is Array.prototype.join(separator), which Array.prototype.toString, String(array)
// and template literals reach too. The guard joins itself, counting the result as it goes
// (every element's text, a nested array's own join included, and every separator), so a
// join of many long strings fails at the cap instead of building gigabytes; it walks no
// array-like past the cap, and joins an array that contains itself to "" where it recurs,
// as goja does.
func (g *builtinGuards) guardJoin(_ goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		panic(g.h.runtime().NewTypeError("Array.prototype.join called on null or undefined"))
	}
	o := call.This.ToObject(g.h.runtime())
	for _, j := range g.state.joining {
		if j == o {
			return g.h.runtime().ToValue("")
		}
	}
	g.state.joining = append(g.state.joining, o)
	defer func() { g.state.joining = g.state.joining[:len(g.state.joining)-1] }()

	elements, length := g.arrayLike(o, "Array.prototype.join")
	var sep goja.String
	sepLength := 1.0
	if s := call.Argument(0); !goja.IsUndefined(s) {
		sep = g.toString(s)
		sepLength = float64(sep.Length())
	}
	limit := float64(g.caps.stringLength)
	if size := (length - 1) * sepLength; size > limit {
		g.overCap("Array.prototype.join would build a string of", size, g.caps.stringLength, "characters", stringCapDivisor)
	}
	var b goja.StringBuilder
	size := 0.0
	for i := int64(0); i < int64(length); i++ {
		if i > 0 {
			if sep == nil {
				b.WriteRune(',')
			} else {
				b.WriteString(sep)
			}
			size += sepLength
		}
		v := elements.Get(itoa(i))
		if isNullish(v) {
			continue
		}
		s := g.toString(v)
		if size += float64(s.Length()); size > limit {
			g.overCap("Array.prototype.join would build a string of more than", limit, g.caps.stringLength, "characters", stringCapDivisor)
		}
		b.WriteString(s)
	}
	return b.String()
}

// typedWidths are the longest texts of one typed-array element by element size: "-128",
// "-32768", and for 4 and 8 bytes a float's shortest form ("-2.2250738585072014e-308"); a
// locale's text may group digits, so toLocaleString counts more.
var typedWidths = map[float64]float64{1: 4, 2: 6, 4: 24, 8: 24}

const localeWidth = 40

// guardTypedJoin is TypedArray.prototype.join(separator) or toLocaleString(): the length and
// the element size are the typed array's own (read through the intrinsic getters, which no
// program can make lie).
func (g *builtinGuards) guardTypedJoin(method string) guardFunc {
	what := "TypedArray.prototype." + method
	return func(orig goja.Callable, call goja.FunctionCall) goja.Value {
		o, ok := call.This.(*goja.Object)
		if !ok {
			return callOrig(orig, call.This, call.Arguments...)
		}
		length, ok := g.typedLength(o)
		if !ok || length == 0 {
			return callOrig(orig, call.This, call.Arguments...)
		}
		bytes, _ := g.typedByteLength(o)
		width := typedWidths[bytes/length]
		if method == "toLocaleString" {
			width = localeWidth
		}
		args := call.Arguments
		sepLength := 1.0
		if method == "join" && len(args) > 0 && !goja.IsUndefined(args[0]) {
			sep := g.toString(args[0])
			args = []goja.Value{sep}
			sepLength = float64(sep.Length())
		}
		if size := length*width + (length-1)*sepLength; size > float64(g.caps.stringLength) {
			g.overCap(what+" could build a string of", size, g.caps.stringLength, "characters", stringCapDivisor)
		}
		return callOrig(orig, call.This, args...)
	}
}

// guardArrayConcat is Array.prototype.concat(...items): the result has the elements of the
// receiver and of every spreadable item (an array, or an object whose
// Symbol.isConcatSpreadable is true), walked to their lengths.
func (g *builtinGuards) guardArrayConcat(orig goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		return callOrig(orig, call.This, call.Arguments...)
	}
	total := 0.0
	spread := func(v goja.Value) goja.Value {
		o, ok := v.(*goja.Object)
		if !ok {
			total++
			return v
		}
		if isArray(o) {
			total += lengthOf(o)
			return o
		}
		flag := o.GetSymbol(goja.SymIsConcatSpreadable)
		if flag == nil || !flag.ToBoolean() {
			total++
			return o
		}
		length := lengthOf(o)
		total += length
		return g.pin(o, length, g.h.runtime().ToValue(true))
	}
	this := spread(call.This.ToObject(g.h.runtime()))
	args := make([]goja.Value, len(call.Arguments))
	for i, a := range call.Arguments {
		args[i] = spread(a)
	}
	if total > float64(g.caps.arrayLength) {
		g.overCap("Array.prototype.concat would make an array of", total, g.caps.arrayLength, "elements", arrayCapDivisor)
	}
	return callOrig(orig, this, args...)
}

// guardFlat is Array.prototype.flat(depth): the guard visits what flat will, first, and fails
// when the elements visited (holes included) pass the cap or the arrays nest deeper than
// MaxDataDepth within the depth asked for (an array that contains itself, flattened to depth
// Infinity, recurses without end, in Go).
func (g *builtinGuards) guardFlat(orig goja.Callable, call goja.FunctionCall) goja.Value {
	this, length := g.receiver(call.This, "Array.prototype.flat")
	if isNullish(this) {
		return callOrig(orig, this, call.Arguments...)
	}
	depth := int64(1)
	var args []goja.Value
	if d := call.Argument(0); !goja.IsUndefined(d) {
		n := d.ToNumber()
		args = []goja.Value{n}
		depth = intOf(n)
	}
	visited := 0.0
	var visit func(o *goja.Object, length float64, depth int64, level int)
	visit = func(o *goja.Object, length float64, depth int64, level int) {
		if level > MaxDataDepth {
			g.h.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("Array.prototype.flat would flatten arrays nested deeper than %d levels (an array that contains itself?)", MaxDataDepth)})
			panic(g.h.runtime().NewTypeError("nested too deep"))
		}
		if visited += length; visited > float64(g.caps.arrayLength) {
			g.overCap("Array.prototype.flat would visit more than", float64(g.caps.arrayLength), g.caps.arrayLength, "elements", arrayCapDivisor)
		}
		if depth <= 0 {
			return
		}
		for i := int64(0); i < int64(length); i++ {
			if e, ok := o.Get(itoa(i)).(*goja.Object); ok && g.isArrayValue(e) {
				visit(e, lengthOf(e), depth-1, level+1)
			}
		}
	}
	visit(this.(*goja.Object), length, depth, 0)
	return callOrig(orig, this, args...)
}

// guardFlatMap is Array.prototype.flatMap(callback, thisArg): flatMap walks every array the
// callback returns to its length, so the guard's callback counts them as they come.
func (g *builtinGuards) guardFlatMap(orig goja.Callable, call goja.FunctionCall) goja.Value {
	this, length := g.receiver(call.This, "Array.prototype.flatMap")
	fn, ok := goja.AssertFunction(call.Argument(0))
	if isNullish(this) || !ok {
		return callOrig(orig, this, call.Arguments...)
	}
	visited := length
	counted := g.h.function("flatMap callback", func(c goja.FunctionCall) goja.Value {
		g.stopCheck()
		v, err := fn(c.This, c.Arguments...)
		must(err)
		if o, ok := v.(*goja.Object); ok && g.isArrayValue(o) {
			n := lengthOf(o)
			if visited += n; visited > float64(g.caps.arrayLength) {
				g.overCap("Array.prototype.flatMap would visit more than", float64(g.caps.arrayLength), g.caps.arrayLength, "elements", arrayCapDivisor)
			}
			if !isArray(o) {
				return g.pin(o, n, nil)
			}
		}
		return v
	})
	return callOrig(orig, this, append([]goja.Value{counted}, call.Arguments[1:]...)...)
}

// guardStringConcat is String.prototype.concat(...strings).
func (g *builtinGuards) guardStringConcat(orig goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		return callOrig(orig, call.This, call.Arguments...)
	}
	s := g.toString(call.This)
	size := float64(s.Length())
	args := make([]goja.Value, len(call.Arguments))
	for i, a := range call.Arguments {
		str := g.toString(a)
		args[i] = str
		size += float64(str.Length())
	}
	if size > float64(g.caps.stringLength) {
		g.overCap("String.prototype.concat would build a string of", size, g.caps.stringLength, "characters", stringCapDivisor)
	}
	return callOrig(orig, s, args...)
}

// guardReplace is String.prototype.replace or replaceAll(pattern, replacement). The result
// is the string with each occurrence replaced: the guard counts a string pattern's
// occurrences (a regular expression's matches, when the bound of one per position passes
// the cap), bounds a replacement string's expansion ($& and the like copy parts of the
// string), and counts what a replacement function returns as it returns it.
func (g *builtinGuards) guardReplace(method string, all bool) guardFunc {
	what := "String.prototype." + method
	return func(orig goja.Callable, call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return callOrig(orig, call.This, call.Arguments...)
		}
		s := g.toString(call.This)
		n := float64(s.Length())
		limit := float64(g.caps.stringLength)
		pattern := call.Argument(0)
		replacement := call.Argument(1)
		if fn, ok := goja.AssertFunction(replacement); ok {
			size := n
			counted := g.h.function(method+" callback", func(c goja.FunctionCall) goja.Value {
				g.stopCheck()
				v, err := fn(c.This, c.Arguments...)
				must(err)
				str := g.toString(v)
				if size += float64(str.Length()); size > limit {
					g.overCap(what+" would build a string of more than", limit, g.caps.stringLength, "characters", stringCapDivisor)
				}
				return str
			})
			return callOrig(orig, s, pattern, counted)
		}
		repl := g.toString(replacement)
		perMatch := float64(repl.Length())
		re, isRegExp := pattern.(*goja.Object)
		isRegExp = isRegExp && re.ClassName() == "RegExp"
		if text := repl.String(); strings.Contains(text, "$") {
			// $` and $' copy up to the whole string; with a regular expression, so may $& and
			// the groups; with a string pattern, $& is the pattern.
			copies := strings.Count(text, "$`") + strings.Count(text, "$'")
			if isRegExp {
				copies = strings.Count(text, "$")
			} else {
				perMatch += float64(strings.Count(text, "$&")) * float64(g.toString(pattern).Length())
			}
			perMatch += float64(copies) * n
		}
		var matches float64
		if !isRegExp {
			p := g.toString(pattern)
			pattern = p
			matches = 1
			if all {
				matches = float64(strings.Count(s.String(), p.String()))
			}
		} else {
			matches = 1
			if strings.Contains(re.Get("flags").String(), "g") {
				matches = n + 1
			}
		}
		size := func() float64 { return n + matches*perMatch }
		if size() > limit && isRegExp && matches > 1 {
			// Count the matches: a regular expression matches at far fewer places than the bound.
			found, err := g.stringMatch()(s, pattern)
			must(err)
			matches = 0
			if o, ok := found.(*goja.Object); ok {
				matches = lengthOf(o)
			}
		}
		if size() > limit {
			g.overCap(what+" would build a string of", size(), g.caps.stringLength, "characters", stringCapDivisor)
		}
		return callOrig(orig, s, pattern, repl)
	}
}

// guardSplit is String.prototype.split(separator, limit) with a string separator: the result
// has an element per piece.
func (g *builtinGuards) guardSplit(orig goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		return callOrig(orig, call.This, call.Arguments...)
	}
	sepArg := call.Argument(0)
	if o, ok := sepArg.(*goja.Object); ok && !isNullish(o.GetSymbol(goja.SymSplit)) {
		return callOrig(orig, call.This, call.Arguments...) // a RegExp: at most one piece per character
	}
	s := g.toString(call.This)
	args := []goja.Value{sepArg}
	maxPieces := math.Inf(1)
	if l := call.Argument(1); !goja.IsUndefined(l) {
		n := l.ToNumber()
		args = append(args, n)
		maxPieces = float64(uint32(intOf(n)))
	}
	if goja.IsUndefined(sepArg) {
		return callOrig(orig, s, args...)
	}
	sep := g.toString(sepArg)
	args[0] = sep
	var pieces float64
	if sep.Length() == 0 {
		pieces = float64(s.Length())
	} else {
		pieces = float64(strings.Count(s.String(), sep.String()) + 1)
	}
	if pieces = math.Min(pieces, maxPieces); pieces > float64(g.caps.arrayLength) {
		g.overCap("String.prototype.split would make an array of", pieces, g.caps.arrayLength, "elements", arrayCapDivisor)
	}
	return callOrig(orig, s, args...)
}

// guardStringRaw is String.raw(template, ...substitutions): it walks template.raw to its
// length.
func (g *builtinGuards) guardStringRaw(orig goja.Callable, call goja.FunctionCall) goja.Value {
	t, ok := call.Argument(0).(*goja.Object)
	if !ok {
		return callOrig(orig, call.This, call.Arguments...)
	}
	raw, ok := t.Get("raw").(*goja.Object)
	if !ok {
		return callOrig(orig, call.This, call.Arguments...)
	}
	pinnedRaw, _ := g.arrayLike(raw, "String.raw")
	template := g.h.runtime().NewProxy(t, &goja.ProxyTrapConfig{Get: func(target *goja.Object, property string, _ goja.Value) goja.Value {
		if property == "raw" {
			return pinnedRaw
		}
		return target.Get(property)
	}})
	return callOrig(orig, call.This, append([]goja.Value{g.h.runtime().ToValue(template)}, call.Arguments[1:]...)...)
}

// guardBigIntBits is BigInt.asUintN or asIntN(bits, bigint): goja allocates 2**bits.
func (g *builtinGuards) guardBigIntBits(what string) guardFunc {
	return func(orig goja.Callable, call goja.FunctionCall) goja.Value {
		bits := call.Argument(0).ToNumber()
		if n := toLength(bits); n > float64(g.caps.bufferBytes)*8 {
			g.overCap(what+" would compute with a number of", n, g.caps.bufferBytes*8, "bits", bufferCapDivisor)
		}
		return callOrig(orig, call.This, append([]goja.Value{bits}, call.Arguments[1:]...)...)
	}
}

// guardJSONStringify is JSON.stringify(value, replacer, space). goja serializes in one native
// step; the guard's replacer (which wraps a replacer function, and stands in for none) sees
// every value first: it fails the run when an array would be walked past the cap, or the
// text of the values visited (strings, keys, numbers, punctuation; escapes and indentation
// uncounted) passes the string cap, and stops the step when the run is stopped. An array
// replacer (a list of keys) is left as it is.
func (g *builtinGuards) guardJSONStringify(orig goja.Callable, call goja.FunctionCall) goja.Value {
	replacer := call.Argument(1)
	if o, ok := replacer.(*goja.Object); ok && isArray(o) {
		return callOrig(orig, call.This, call.Arguments...)
	}
	user, hasUser := goja.AssertFunction(replacer)
	limit := float64(g.caps.stringLength)
	size, values := 0.0, 0.0
	var path jsonPath
	checking := g.h.function("replacer", func(c goja.FunctionCall) goja.Value {
		g.stopCheck()
		key, v := c.Argument(0), c.Argument(1)
		if hasUser {
			var err error
			v, err = user(c.This, key, v)
			must(err)
		}
		path.visit(c.This, key, v)
		if values++; values > float64(g.caps.arrayLength) {
			g.overCap("JSON.stringify would visit more than", float64(g.caps.arrayLength), g.caps.arrayLength, "values", arrayCapDivisor)
		}
		if holder, ok := c.This.(*goja.Object); ok && isArray(holder) {
			size++ // a comma
		} else {
			size += stringLength(key) + 4 // "key": and a comma
		}
		switch x := v.(type) {
		case goja.String:
			size += float64(x.Length()) + 2
		case *goja.Object:
			size += 2
			if isArray(x) {
				if n := lengthOf(x); n > float64(g.caps.arrayLength) {
					g.overCap("JSON.stringify would walk an array of", n, g.caps.arrayLength, "elements", arrayCapDivisor)
				}
			}
		default:
			size += textWidth(v)
		}
		if size > limit {
			g.overCap("JSON.stringify would build a string of more than", limit, g.caps.stringLength, "characters", stringCapDivisor)
		}
		return v
	})
	args := []goja.Value{call.Argument(0), checking}
	if len(call.Arguments) > 2 {
		args = append(args, call.Arguments[2])
	}
	v, err := orig(call.This, args...)
	if err != nil {
		if msg, ok := path.circular(g.h.runtime(), err); ok {
			panic(g.h.runtime().NewTypeError(msg))
		}
		panic(err)
	}
	return v
}

// Intrinsics the guards use, taken from the runtime before the program runs.

// stringMatch is String.prototype.match.
func (g *builtinGuards) stringMatch() goja.Callable { return g.state.match }

// isArrayValue is Array.isArray, which sees through proxies.
func (g *builtinGuards) isArrayValue(o *goja.Object) bool {
	if isArray(o) {
		return true
	}
	if o.ExportType() != proxyType {
		return false
	}
	v, err := g.state.isArray(goja.Undefined(), o)
	must(err)
	return v.ToBoolean()
}

// typedArrayProto is %TypedArray%.prototype, whose length and byteLength getters the guards
// read typed arrays with; the guards that use them look it up when they are installed.
func (g *builtinGuards) typedArrayProto() (*goja.Object, error) {
	gi := &g.state
	if gi.typedProto != nil {
		return gi.typedProto, nil
	}
	u8, ok := g.h.runtime().GlobalObject().Get("Uint8Array").(*goja.Object)
	if !ok {
		return nil, errors.New("guard: no Uint8Array")
	}
	proto, ok := u8.Get("prototype").(*goja.Object)
	if !ok || proto.Prototype() == nil {
		return nil, errors.New("guard: no %TypedArray%.prototype")
	}
	gi.typedProto = proto.Prototype()
	describe, _ := goja.AssertFunction(g.h.runtime().GlobalObject().Get("Object").ToObject(g.h.runtime()).Get("getOwnPropertyDescriptor"))
	getter := func(name string) (goja.Callable, error) {
		d, err := describe(goja.Undefined(), gi.typedProto, g.h.runtime().ToValue(name))
		if err != nil {
			return nil, err
		}
		get, ok := goja.AssertFunction(d.ToObject(g.h.runtime()).Get("get"))
		if !ok {
			return nil, fmt.Errorf("guard: no getter of %%TypedArray%%.prototype.%s", name)
		}
		return get, nil
	}
	var err1, err2 error
	gi.typedLength, err1 = getter("length")
	gi.typedByteLength, err2 = getter("byteLength")
	return gi.typedProto, errors.Join(err1, err2)
}

// typedLength is a typed array's length; ok is false for anything else.
func (g *builtinGuards) typedLength(o *goja.Object) (float64, bool) {
	return g.typedGet(o, func() goja.Callable { return g.state.typedLength })
}

func (g *builtinGuards) typedByteLength(o *goja.Object) (float64, bool) {
	return g.typedGet(o, func() goja.Callable { return g.state.typedByteLength })
}

func (g *builtinGuards) typedGet(o *goja.Object, getter func() goja.Callable) (float64, bool) {
	if o.ClassName() != "Object" || o.ExportType() == proxyType || getter() == nil {
		return 0, false
	}
	v, err := getter()(o)
	if err != nil {
		return 0, false
	}
	return v.ToFloat(), true
}

var arrayBufferType = reflect.TypeOf(goja.ArrayBuffer{})

// builtinGuards are a run's guards on built-ins: installed against the run's platformHost
// before the program starts (set-up the run does itself), they fail the run with a limit
// (overCap) where a built-in would pass one of its memory caps.
type builtinGuards struct {
	h     platformHost
	caps  *caps      // the run's; set for each run (one set up ahead gets its caps when taken)
	state guardState // VM goroutine only
}

// guardState is what the guards keep in a run: the intrinsics they use, taken from the
// runtime when they are installed (before the program can replace them), and the arrays
// being joined.
type guardState struct {
	isArray                      goja.Callable // Array.isArray
	match                        goja.Callable // String.prototype.match
	typedProto                   *goja.Object  // %TypedArray%.prototype
	typedLength, typedByteLength goja.Callable // its getters
	joining                      []*goja.Object
}

// itoa is an index as a property key; the first ones are made once.
func itoa(i int64) string {
	if i < int64(len(indexKeys)) {
		return indexKeys[i]
	}
	return strconv.FormatInt(i, 10)
}

var indexKeys = func() []string {
	keys := make([]string, 1<<12)
	for i := range keys {
		keys[i] = strconv.Itoa(i)
	}
	return keys
}()

// textWidth is the length of a primitive's text, without building it for a number: an
// integer's digits, or the longest a float's shortest form can be.
func textWidth(v goja.Value) float64 {
	if !goja.IsNumber(v) {
		return stringLength(v)
	}
	f := v.ToFloat()
	if f != math.Trunc(f) || math.Abs(f) >= 1e15 {
		return 24
	}
	width := 1.0
	if f < 0 {
		width, f = 2, -f
	}
	for ; f >= 10; f /= 10 {
		width++
	}
	return width
}

// toString is ToString of a value as a goja.String; a symbol throws the TypeError.
func (g *builtinGuards) toString(v goja.Value) goja.String {
	if _, ok := v.(*goja.Symbol); ok {
		panic(g.h.runtime().NewTypeError("Cannot convert a Symbol value to a string"))
	}
	s := v.ToString()
	if str, ok := s.(goja.String); ok {
		return str
	}
	return goja.StringFromUTF16(utf16.Encode([]rune(s.String())))
}
