package intl

import (
	"math"

	"github.com/dop251/goja"
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
