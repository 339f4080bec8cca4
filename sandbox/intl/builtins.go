package intl

import (
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// installBuiltins routes the locale-sensitive methods of the ECMAScript built-ins through
// Intl (ECMA-402 chapter 20). Each is one small native function; the formatters behind
// them are built on first use and cached per process.
func (e *env) installBuiltins() error {
	global := e.rt.GlobalObject()
	protoOf := func(name string) (*goja.Object, error) {
		c, ok := global.Get(name).(*goja.Object)
		if !ok {
			return nil, errNoBuiltin(name)
		}
		p, ok := c.Get("prototype").(*goja.Object)
		if !ok {
			return nil, errNoBuiltin(name)
		}
		return p, nil
	}
	number, err := protoOf("Number")
	if err != nil {
		return err
	}
	e.method(number, "toLocaleString", 0, func(call goja.FunctionCall) goja.Value {
		x := e.thisNumber(call.This, "Number.prototype.toLocaleString")
		f := e.numberFormatFor(call.Argument(0), call.Argument(1), "Intl.NumberFormat", "decimal")
		return e.rt.ToValue(f.format(decimalFromFloat(x)))
	})
	if bigint, err := protoOf("BigInt"); err == nil {
		e.method(bigint, "toLocaleString", 0, func(call goja.FunctionCall) goja.Value {
			x := e.thisBigInt(call.This)
			f := e.numberFormatFor(call.Argument(0), call.Argument(1), "Intl.NumberFormat", "decimal")
			return e.rt.ToValue(f.format(x))
		})
	}
	str, err := protoOf("String")
	if err != nil {
		return err
	}
	e.method(str, "localeCompare", 1, e.localeCompare)
	e.method(str, "toLocaleUpperCase", 0, e.localeCase(true))
	e.method(str, "toLocaleLowerCase", 0, e.localeCase(false))
	array, err := protoOf("Array")
	if err != nil {
		return err
	}
	e.method(array, "toLocaleString", 0, e.arrayToLocaleString)
	date, err := protoOf("Date")
	if err != nil {
		return err
	}
	for _, m := range []struct{ name, required, defaults string }{
		{"toLocaleString", "any", "all"},
		{"toLocaleDateString", "date", "date"},
		{"toLocaleTimeString", "time", "time"},
	} {
		m := m
		e.method(date, m.name, 0, func(call goja.FunctionCall) goja.Value {
			t, ok := e.thisTime(call.This, "Date.prototype."+m.name)
			if !ok {
				return e.rt.ToValue("Invalid Date")
			}
			f := e.dateFormatFor(call.Argument(0), call.Argument(1), m.required, m.defaults)
			return e.rt.ToValue(f.format(t))
		})
	}
	return nil
}

// thisTime is ECMA-262 thisTimeValue; ok is false for an invalid date.
func (e *env) thisTime(v goja.Value, method string) (float64, bool) {
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
	if n > maxLocaleArray {
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
		if b.Len() > maxLocaleString {
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
