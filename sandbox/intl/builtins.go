package intl

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// Builtins is a set of the built-ins whose locale methods Install replaces.
type Builtins uint8

const (
	// BuiltinNumber is Number.prototype.toLocaleString.
	BuiltinNumber Builtins = 1 << iota
	// BuiltinBigInt is BigInt.prototype.toLocaleString.
	BuiltinBigInt
	// BuiltinDate is Date.prototype.toLocaleString, toLocaleDateString and toLocaleTimeString.
	BuiltinDate
	// BuiltinString is String.prototype.localeCompare, toLocaleUpperCase and toLocaleLowerCase.
	BuiltinString
	// BuiltinArray is Array.prototype.toLocaleString.
	BuiltinArray

	// AllBuiltins is every one of them.
	AllBuiltins = BuiltinNumber | BuiltinBigInt | BuiltinDate | BuiltinString | BuiltinArray
)

// BuiltinsFor returns the built-ins a program's source may call a locale method of: the
// methods it names (toLocaleString could be any receiver's), or all of them when it builds
// code at run time (eval, Function).
func BuiltinsFor(src string) Builtins {
	if strings.Contains(src, "eval") || strings.Contains(src, "Function") {
		return AllBuiltins
	}
	var b Builtins
	if strings.Contains(src, "toLocaleString") {
		b |= BuiltinNumber | BuiltinBigInt | BuiltinDate | BuiltinArray
	}
	if strings.Contains(src, "toLocaleDateString") || strings.Contains(src, "toLocaleTimeString") {
		b |= BuiltinDate
	}
	if strings.Contains(src, "localeCompare") || strings.Contains(src, "toLocaleUpperCase") || strings.Contains(src, "toLocaleLowerCase") {
		b |= BuiltinString
	}
	return b
}

// installBuiltins routes the locale-sensitive methods of the ECMAScript built-ins in set
// through Intl (ECMA-402 chapter 20). Each is one small native function; the formatters
// behind them are built on first use and cached per process. The prototypes are reached
// through values (a number's, a string's) rather than the global constructors, which
// costs less and finds the runtime's own.
func (e *env) installBuiltins(set Builtins) error {
	rt := e.rt
	if set&BuiltinNumber != 0 {
		e.method(rt.ToValue(0).ToObject(rt).Prototype(), "toLocaleString", 0, func(call goja.FunctionCall) goja.Value {
			x := e.thisNumber(call.This, "Number.prototype.toLocaleString")
			f := e.numberFormatFor(call.Argument(0), call.Argument(1), "Intl.NumberFormat", "decimal")
			return e.rt.ToValue(f.format(decimalFromFloat(x)))
		})
	}
	if set&BuiltinBigInt != 0 {
		e.method(rt.ToValue(new(big.Int)).ToObject(rt).Prototype(), "toLocaleString", 0, func(call goja.FunctionCall) goja.Value {
			x := e.thisBigInt(call.This)
			f := e.numberFormatFor(call.Argument(0), call.Argument(1), "Intl.NumberFormat", "decimal")
			return e.rt.ToValue(f.format(x))
		})
	}
	if set&BuiltinString != 0 {
		str := rt.ToValue("").ToObject(rt).Prototype()
		e.method(str, "localeCompare", 1, e.localeCompare)
		e.method(str, "toLocaleUpperCase", 0, e.localeCase(true))
		e.method(str, "toLocaleLowerCase", 0, e.localeCase(false))
	}
	if set&BuiltinArray != 0 {
		if err := e.replaceMethod(rt.NewArray().Prototype(), "toLocaleString", 0, e.arrayToLocaleString); err != nil {
			return err
		}
	}
	if set&BuiltinDate != 0 {
		ctor, ok := rt.GlobalObject().Get("Date").(*goja.Object)
		if !ok {
			return errNoBuiltin("Date")
		}
		date, ok := ctor.Get("prototype").(*goja.Object)
		if !ok {
			return errNoBuiltin("Date")
		}
		for _, m := range []struct{ name, required, defaults string }{
			{"toLocaleString", "any", "all"},
			{"toLocaleDateString", "date", "date"},
			{"toLocaleTimeString", "time", "time"},
		} {
			m := m
			e.method(date, m.name, 0, func(call goja.FunctionCall) goja.Value {
				t, ok := e.thisTime(call.This)
				if !ok {
					return e.rt.ToValue("Invalid Date")
				}
				f := e.dateFormatFor(call.Argument(0), call.Argument(1), m.required, m.defaults)
				return e.rt.ToValue(f.format(t))
			})
		}
	}
	return nil
}

// replaceMethod is method for a built-in an embedder may already have replaced with a
// writable but non-configurable property (the sandbox's guards do): then it is assigned.
func (e *env) replaceMethod(o *goja.Object, name string, length int, f func(goja.FunctionCall) goja.Value) error {
	fn := e.fn(name, length, f)
	if err := o.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err == nil {
		return nil
	}
	if err := o.Set(name, fn); err != nil {
		return fmt.Errorf("intl: replace %s: %w", name, err)
	}
	return nil
}

// thisTime is ECMA-262 thisTimeValue; ok is false for an invalid date.
func (e *env) thisTime(v goja.Value) (float64, bool) {
	o, isObj := v.(*goja.Object)
	if !isObj || o.ClassName() != "Date" {
		e.throwType("this is not a Date object.")
	}
	t := o.ToNumber().ToFloat()
	if math.IsNaN(t) {
		return 0, false
	}
	return t, true
}

type errNoBuiltin string

func (e errNoBuiltin) Error() string { return "intl: the runtime has no " + string(e) + ".prototype" }

// thisNumber is ECMA-262 thisNumberValue.
func (e *env) thisNumber(v goja.Value, method string) float64 {
	if goja.IsNumber(v) {
		return v.ToFloat()
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Number" {
		return o.ToFloat()
	}
	e.throwType("%s requires that 'this' be a Number", method)
	return 0
}

func (e *env) thisBigInt(v goja.Value) decimal {
	var b goja.Value = v
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "BigInt" {
		b = o.Export().(goja.Value)
	}
	if goja.IsBigInt(b) {
		return e.toIntlMathematicalValue(b)
	}
	e.throwType("BigInt.prototype.toLocaleString requires that 'this' be a BigInt")
	return decimal{}
}

// maxLocaleArray bounds the arrays Array.prototype.toLocaleString walks, and
// maxLocaleString the string it builds: beyond them a RangeError, as the sandbox's own
// join guard fails runs that build giant strings.
const (
	maxLocaleArray  = 1 << 24
	maxLocaleString = 1 << 25
)

func (e *env) maxLocaleString() int {
	if n := e.opts.MaxStringLength; n > 0 && n < maxLocaleString {
		return n
	}
	return maxLocaleString
}

// arrayToLocaleString is Array.prototype.toLocaleString (ECMA-402 19.5.1): each element's
// toLocaleString(locales, options), joined by ",". A cycle contributes "".
func (e *env) arrayToLocaleString(call goja.FunctionCall) goja.Value {
	this := call.This
	if this == nil || goja.IsUndefined(this) || goja.IsNull(this) {
		e.throwType("Array.prototype.toLocaleString called on null or undefined")
	}
	o := this.ToObject(e.rt)
	if e.joining[o] {
		return e.rt.ToValue("")
	}
	if e.joining == nil {
		e.joining = map[*goja.Object]bool{}
	}
	e.joining[o] = true
	defer delete(e.joining, o)
	n := toLength(o.Get("length"))
	if n > maxLocaleArray || n > int64(e.maxLocaleString()) {
		e.throwRange("Array too long for toLocaleString (%d elements, at most %d)", n, maxLocaleArray)
	}
	var b strings.Builder
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		v := o.Get(strconv.FormatInt(i, 10))
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			continue
		}
		elem := v.ToObject(e.rt)
		f, ok := goja.AssertFunction(elem.Get("toLocaleString"))
		if !ok {
			e.throwType("toLocaleString is not a function")
		}
		r, err := f(v, call.Argument(0), call.Argument(1))
		if err != nil {
			panic(err)
		}
		b.WriteString(e.toString(r))
		if b.Len() > e.maxLocaleString() {
			e.throwRange("Array.prototype.toLocaleString result too long")
		}
	}
	return e.rt.ToValue(b.String())
}

// localeCase is String.prototype.toLocaleUpperCase / toLocaleLowerCase: Unicode case
// mapping with the language's special rules (Turkish and Azeri dotted i, Lithuanian),
// from golang.org/x/text/cases.
func (e *env) localeCase(upper bool) func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		this := call.This
		if this == nil || goja.IsUndefined(this) || goja.IsNull(this) {
			e.throwType("String.prototype.toLocale%sCase called on null or undefined", map[bool]string{true: "Upper", false: "Lower"}[upper])
		}
		s := e.toString(this)
		tags := e.canonicalizeLocaleList(call.Argument(0))
		lang := e.defaultLocale().lang
		if len(tags) > 0 {
			lang = tags[0].lang
		}
		tag := language.Und
		switch lang {
		case "tr", "az", "lt":
			tag = language.Make(lang)
		}
		if upper {
			return e.rt.ToValue(cases.Upper(tag).String(s))
		}
		return e.rt.ToValue(cases.Lower(tag).String(s))
	}
}
