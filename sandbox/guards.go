package sandbox

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/dop251/goja"
)

// Built-in guards.
//
// A few ECMAScript built-ins allocate their whole result in one native step: goja cannot
// interrupt them, and past what the operating system grants, Go ends the whole process with a
// fatal "out of memory" ('x'.repeat(2**40), new ArrayBuffer(2**40) and new
// Array(2**32-1).sort() each do, in one line). A run's fresh runtime gets guarded versions of
// them that check the size first, in proportion to Options.Memory. Going past a cap fails the
// run with kind "limit" and cannot be caught: like MaxCalls, a program that caught the error
// and tried again would only spin until its timeout, and the model that wrote it learns more
// from a limit failure naming the built-in and the cap than from a RangeError.
//
// Guarded: String.prototype.repeat, padStart and padEnd (the string built); Array.prototype.join
// (the array's length and the separators' total length) and fill (the range filled); the Array
// constructor called or constructed with one numeric length, and with it Array.from and the
// species creation of map, filter and slice; the ArrayBuffer and typed-array constructors (the
// bytes allocated); JSON.parse (the text's nesting: goja parses recursively and very deep text
// overflows the Go stack, which no recover catches). The guards convert their arguments once
// and hand the converted values on, so a valueOf or toString runs once, as without them.
//
// Installing every guard costs about as much as the rest of a trivial run (each built-in must
// be materialized in the fresh runtime), so a program gets the guards for the built-ins its
// source names (all of them when it builds code at run time with eval or Function): the
// guards are there for the accidents a model's program makes, at no cost to programs that do
// not use those built-ins. A program that reaches a built-in under a computed name gets the
// original, as it gets everything else the guards do not cover: string concatenation (goja
// has no hook for +; the heap watchdog catches a string doubled in a loop), an array made huge
// by assigning its length, JSON.stringify of very deeply nested data (quadratic in goja),
// eval of deeply nested text. In process those end at the run's timeout or take the process
// down; in a worker process its stack and memory caps end them. Hostile programs belong in
// worker processes.

// caps bound what one call of a guarded built-in may allocate. See Options.Memory.
type caps struct {
	memory       int64
	stringLength int64 // UTF-16 code units
	arrayLength  int64 // elements
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

// guardSet says which built-ins a program's runtime guards, one bit per built-in.
type guardSet uint32

const (
	guardRepeat guardSet = 1 << iota
	guardPadStart
	guardPadEnd
	guardJoin
	guardFill
	guardJSONParse
	guardArray
	guardArrayBuffer
	guardTypedArrays // the first of len(typedArrays) bits, one per constructor
	guardAll         = guardTypedArrays<<len(typedArrays) - 1
)

var (
	// codeAtRunTime matches source that builds code at run time, which can name anything.
	codeAtRunTime = regexp.MustCompile(`\beval\b|Function\b`)
	// arrayCreation matches source that makes arrays with the Array constructor.
	arrayCreation = regexp.MustCompile(`\bArray\s*(\(|\.\s*(from|of|apply|call)\b)|\bextends\s+Array\b`)
	methodGuards  = []struct {
		name string
		bit  guardSet
	}{
		{"repeat", guardRepeat}, {"padStart", guardPadStart}, {"padEnd", guardPadEnd},
		{"join", guardJoin}, {"fill", guardFill}, {"JSON", guardJSONParse}, {"ArrayBuffer", guardArrayBuffer},
	}
)

// guardsFor chooses a program's guards from the source goja runs.
func guardsFor(src string) guardSet {
	if codeAtRunTime.MatchString(src) {
		return guardAll
	}
	var g guardSet
	for _, m := range methodGuards {
		if strings.Contains(src, m.name) {
			g |= m.bit
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
	return g
}

// installGuards replaces the built-ins of set in the run's runtime with guarded versions. It
// runs before the program, so the originals it wraps are the runtime's own.
func (r *run) installGuards(set guardSet) error {
	if set == 0 {
		return nil
	}
	rt := r.rt
	global := rt.GlobalObject()
	var errs []error
	add := func(bit guardSet, install func() error) {
		if set&bit != 0 {
			errs = append(errs, install())
		}
	}
	if set&(guardRepeat|guardPadStart|guardPadEnd) != 0 {
		stringProto := rt.ToValue("").ToObject(rt).Prototype()
		add(guardRepeat, func() error { return r.guardMethod(stringProto, "repeat", 1, r.guardRepeat) })
		add(guardPadStart, func() error { return r.guardMethod(stringProto, "padStart", 2, r.guardPad("padStart")) })
		add(guardPadEnd, func() error { return r.guardMethod(stringProto, "padEnd", 2, r.guardPad("padEnd")) })
	}
	if set&(guardJoin|guardFill) != 0 {
		_, arrayProto := r.intrinsics()
		add(guardJoin, func() error { return r.guardMethod(arrayProto, "join", 1, r.guardJoin) })
		add(guardFill, func() error { return r.guardMethod(arrayProto, "fill", 1, r.guardFill) })
	}
	add(guardJSONParse, func() error {
		json, ok := global.Get("JSON").(*goja.Object)
		if !ok {
			return fmt.Errorf("guard JSON.parse: no JSON object")
		}
		return r.guardMethod(json, "parse", 2, r.guardJSONParse)
	})
	add(guardArray, func() error { return r.guardConstructor(global, "Array", true, r.checkArrayArgs) })
	add(guardArrayBuffer, func() error { return r.guardConstructor(global, "ArrayBuffer", false, r.checkBufferArgs) })
	for i, ta := range typedArrays {
		add(guardTypedArrays<<i, func() error {
			return r.guardConstructor(global, ta.name, false, r.checkTypedArrayArgs(ta.name, ta.size))
		})
	}
	return errors.Join(errs...)
}

// guardFunc is the body of a guarded method: it checks and converts the arguments and calls
// the original.
type guardFunc func(orig goja.Callable, call goja.FunctionCall) goja.Value

// guardMethod replaces holder[name] with a native function of the same name and length that
// runs guard around the original.
func (r *run) guardMethod(holder *goja.Object, name string, length int, guard guardFunc) error {
	orig, ok := goja.AssertFunction(holder.Get(name))
	if !ok {
		return fmt.Errorf("guard %s: not a function", name)
	}
	f := r.function(name, func(call goja.FunctionCall) goja.Value { return guard(orig, call) }).(*goja.Object)
	if err := f.DefineDataProperty("length", r.rt.ToValue(length), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return holder.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// guardConstructor replaces holder[name], a constructor, with a guarded one that passes the
// arguments through check first, and points the prototype's constructor property at it too,
// so that instances (and species lookups) lead back to the guarded constructor rather than
// the original. A callable constructor (Array) is wrapped in a proxy, which keeps its statics;
// a construct-only one (ArrayBuffer, the typed arrays), which goja's proxies would make
// neither callable nor usable with instanceof, is replaced by a native constructor that takes
// over its prototype, its own statics and its [[Prototype]] (and, being a goja native
// constructor, also constructs when called without new, where the original throws).
func (r *run) guardConstructor(holder *goja.Object, name string, callable bool, check func([]goja.Value) []goja.Value) error {
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
		guarded = r.rt.ToValue(r.rt.NewProxy(ctor, &goja.ProxyTrapConfig{
			Construct: func(_ *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
				defer r.recoverNative(name)
				o, err := construct(newTarget, check(args)...)
				must(err)
				return o
			},
			Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value {
				defer r.recoverNative(name)
				v, err := call(this, check(args)...)
				must(err)
				return v
			},
		}))
	} else {
		var f *goja.Object
		f = r.rt.ToValue(func(c goja.ConstructorCall) *goja.Object {
			defer r.recoverNative(name)
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
			f.DefineDataProperty("name", r.rt.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE),
			f.DefineDataProperty("length", ctor.Get("length"), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE),
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
	if err := proto.DefineDataProperty("constructor", guarded, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return err
	}
	return holder.DefineDataProperty(name, guarded, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// overCap fails the run with kind "limit" and unwinds the VM. The failure interrupts the
// runtime, so the program runs no further instruction: no catch or finally block of it sees
// the error.
func (r *run) overCap(what string, size float64, limit int64, unit string, divisor int64) {
	msg := fmt.Sprintf("%s %s; the limit is %d %s (1/%d of the run's %s memory limit)",
		what, formatCount(size, unit), limit, unit, divisor, formatBytes(r.caps.memory))
	r.fail(&Failure{Kind: KindLimit, Message: msg})
	panic(r.rt.NewTypeError(msg))
}

func formatCount(n float64, unit string) string {
	if n >= 1<<62 {
		return "more than 2^62 " + unit
	}
	return fmt.Sprintf("%d %s", int64(n), unit)
}

// formatBytes renders a byte count in the largest binary unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
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
func (r *run) guardRepeat(orig goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		return callOrig(orig, call.This, call.Arguments...) // throws the TypeError
	}
	s := call.This.ToString()
	count := call.Argument(0).ToNumber()
	if n := math.Trunc(count.ToFloat()); n >= 1 && !math.IsInf(n, 1) {
		if size := stringLength(s) * n; size > float64(r.caps.stringLength) {
			r.overCap("String.prototype.repeat would build a string of", size, r.caps.stringLength, "characters", stringCapDivisor)
		}
	}
	return callOrig(orig, s, count)
}

// guardPad is String.prototype.padStart or padEnd(maxLength, fillString).
func (r *run) guardPad(name string) guardFunc {
	return func(orig goja.Callable, call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return callOrig(orig, call.This, call.Arguments...)
		}
		s := call.This.ToString()
		maxLength := call.Argument(0).ToNumber()
		args := []goja.Value{maxLength}
		fills := true
		if fill := call.Argument(1); !goja.IsUndefined(fill) {
			f := fill.ToString()
			args = append(args, f)
			fills = stringLength(f) > 0
		}
		if size := toLength(maxLength); fills && size > stringLength(s) && size > float64(r.caps.stringLength) {
			r.overCap("String.prototype."+name+" would build a string of", size, r.caps.stringLength, "characters", stringCapDivisor)
		}
		return callOrig(orig, s, args...)
	}
}

// guardJoin is Array.prototype.join(separator), also reached through Array.prototype.toString.
// goja's join walks every index up to the length in native code, holes included, so a sparse
// array with a huge length hangs it for seconds even when it builds nothing.
func (r *run) guardJoin(orig goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		return callOrig(orig, call.This, call.Arguments...)
	}
	o := call.This.ToObject(r.rt)
	length := lengthOf(o)
	if length > float64(r.caps.arrayLength) {
		r.overCap("Array.prototype.join would walk an array of", length, r.caps.arrayLength, "elements", arrayCapDivisor)
	}
	var args []goja.Value
	sepLength := 1.0
	if sep := call.Argument(0); !goja.IsUndefined(sep) {
		s := sep.ToString()
		args = append(args, s)
		sepLength = stringLength(s)
	}
	if size := (length - 1) * sepLength; size > float64(r.caps.stringLength) {
		r.overCap("Array.prototype.join would build a string of", size, r.caps.stringLength, "characters", stringCapDivisor)
	}
	return callOrig(orig, o, args...)
}

// guardFill is Array.prototype.fill(value, start, end): filling a sparse array makes it dense.
func (r *run) guardFill(orig goja.Callable, call goja.FunctionCall) goja.Value {
	if isNullish(call.This) {
		return callOrig(orig, call.This, call.Arguments...)
	}
	o := call.This.ToObject(r.rt)
	length := lengthOf(o)
	start := call.Argument(1).ToNumber()
	args := []goja.Value{call.Argument(0), start}
	end := length
	if e := call.Argument(2); !goja.IsUndefined(e) {
		n := e.ToNumber()
		args = append(args, n)
		end = relIndex(n, length)
	}
	if size := end - relIndex(start, length); size > float64(r.caps.arrayLength) {
		r.overCap("Array.prototype.fill would fill", size, r.caps.arrayLength, "elements", arrayCapDivisor)
	}
	return callOrig(orig, o, args...)
}

// guardJSONParse is JSON.parse(text, reviver) with the text's nesting checked first.
func (r *run) guardJSONParse(orig goja.Callable, call goja.FunctionCall) goja.Value {
	text := call.Argument(0).ToString()
	if d := jsonDepth(text.String()); d > MaxDataDepth {
		msg := fmt.Sprintf("JSON.parse was given text that nests deeper than %d levels", MaxDataDepth)
		r.fail(&Failure{Kind: KindLimit, Message: msg})
		panic(r.rt.NewTypeError(msg))
	}
	args := []goja.Value{text}
	if len(call.Arguments) > 1 {
		args = append(args, call.Arguments[1])
	}
	return callOrig(orig, call.This, args...)
}

// checkArrayArgs guards Array(n) and new Array(n). Lengths that are not valid array lengths
// go through, for the original to reject with a RangeError.
func (r *run) checkArrayArgs(args []goja.Value) []goja.Value {
	if len(args) == 1 && goja.IsNumber(args[0]) {
		n := args[0].ToFloat()
		if n > float64(r.caps.arrayLength) && n <= maxArrayLength && n == math.Trunc(n) {
			r.overCap("new Array would make an array of", n, r.caps.arrayLength, "elements", arrayCapDivisor)
		}
	}
	return args
}

// checkBufferArgs guards new ArrayBuffer(length).
func (r *run) checkBufferArgs(args []goja.Value) []goja.Value {
	if len(args) == 0 {
		return args
	}
	n := args[0].ToNumber()
	if size := n.ToFloat(); size > float64(r.caps.bufferBytes) {
		r.overCap("new ArrayBuffer would allocate", size, r.caps.bufferBytes, "bytes", bufferCapDivisor)
	}
	out := append([]goja.Value{n}, args[1:]...)
	return out
}

// checkTypedArrayArgs guards new <TypedArray>(length) and new <TypedArray>(arrayLike): an
// array-like's length is read (a typed array or ArrayBuffer reads as its own size), and a
// number is converted once.
func (r *run) checkTypedArrayArgs(name string, elemSize float64) func([]goja.Value) []goja.Value {
	return func(args []goja.Value) []goja.Value {
		if len(args) == 0 || isNullish(args[0]) {
			return args
		}
		if o, ok := args[0].(*goja.Object); ok {
			if o.ClassName() == "ArrayBuffer" {
				return args // a view of an existing buffer allocates nothing
			}
			if size := lengthOf(o) * elemSize; size > float64(r.caps.bufferBytes) {
				r.overCap("new "+name+" would allocate", size, r.caps.bufferBytes, "bytes", bufferCapDivisor)
			}
			return args
		}
		n := args[0].ToNumber()
		if size := toLength(n) * elemSize; size > float64(r.caps.bufferBytes) {
			r.overCap("new "+name+" would allocate", size, r.caps.bufferBytes, "bytes", bufferCapDivisor)
		}
		return append([]goja.Value{n}, args[1:]...)
	}
}
