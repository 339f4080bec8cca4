package sandbox

import (
	"github.com/dop251/goja"

	"github.com/codemode/codemode/internal/fdlibm"
)

// The ES2023–2025 built-ins goja lacks: JavaScript preludes (prelude/*.js), with Go natives
// where they need them. The Web APIs are a module of their own (webAPIs, webapi.go).

// installPrelude runs a prelude that installs methods on built-ins when the program starts.
func installPrelude(name string) func(r *run) error {
	return func(r *run) error {
		return tryJS(r, func() { r.prelude(name) })
	}
}

// preludeGlobals defines names as lazy globals taken from what a prelude returns.
func preludeGlobals(file string, natives func(r *run) goja.Value, names ...string) func(r *run) error {
	return func(r *run) error {
		return lazyGlobals(r, names, func() *goja.Object {
			var args []goja.Value
			if natives != nil {
				args = append(args, natives(r))
			}
			return r.prelude(file, args...).(*goja.Object)
		})
	}
}

// installSymbols runs the symbols prelude (Symbol.asyncIterator and friends must exist before
// the program's first line) and defines its classes as globals.
func (r *run) installSymbols() error {
	var classes *goja.Object
	if err := tryJS(r, func() { classes = r.prelude("symbols.js").(*goja.Object) }); err != nil {
		return err
	}
	global := r.rt.GlobalObject()
	for _, name := range []string{"SuppressedError", "DisposableStack", "AsyncDisposableStack"} {
		if err := global.DefineDataProperty(name, classes.Get(name), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}

// installIterator adds the iterator helpers and the Iterator global.
func (r *run) installIterator() error {
	var exports *goja.Object
	if err := tryJS(r, func() { exports = r.prelude("iterator.js").(*goja.Object) }); err != nil {
		return err
	}
	return r.rt.GlobalObject().DefineDataProperty("Iterator", exports.Get("Iterator"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// installTrig replaces Math.sin, Math.cos and Math.tan with V8's (package fdlibm), keeping
// their names, lengths and attributes.
func (r *run) installTrig() error {
	return tryJS(r, func() {
		m, ok := r.rt.GlobalObject().Get("Math").(*goja.Object)
		if !ok {
			return
		}
		for name, f := range map[string]func(float64) float64{"sin": fdlibm.Sin, "cos": fdlibm.Cos, "tan": fdlibm.Tan} {
			must(defineMethod(r, m, name, 1, func(call goja.FunctionCall) goja.Value {
				return r.rt.ToValue(f(call.Argument(0).ToFloat()))
			}))
		}
	})
}
