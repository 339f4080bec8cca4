package sandbox

import (
	"github.com/dop251/goja"
	nodeurl "github.com/dop251/goja_nodejs/url"
)

// installWebAPIs defines URL and URLSearchParams, from goja_nodejs's url
// module, as lazy globals: the module is built the first time a program
// touches either name, so runs that never use them pay nothing. The module
// is required directly — no require() registry, no file-system loader. Its
// wrapped Go values expose no methods with effects (only String on URL).
func (r *run) installWebAPIs() error {
	global := r.rt.GlobalObject()
	var exports *goja.Object
	load := func() *goja.Object {
		if exports == nil {
			module := r.rt.NewObject()
			exports = r.rt.NewObject()
			if err := module.Set("exports", exports); err != nil {
				panic(err)
			}
			nodeurl.Require(r.rt, module)
		}
		return exports
	}
	for _, name := range []string{"URL", "URLSearchParams"} {
		name := name
		get := r.function(name, func(goja.FunctionCall) goja.Value {
			v := load().Get(name)
			// From now on an ordinary global: writable and configurable like Node's.
			if err := global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
				panic(err)
			}
			return v
		})
		set := r.function(name, func(call goja.FunctionCall) goja.Value {
			if err := global.DefineDataProperty(name, call.Argument(0), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
				panic(err)
			}
			return goja.Undefined()
		})
		if err := global.DefineAccessorProperty(name, get, set, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}
