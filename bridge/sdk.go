package bridge

import (
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/sdkgen"
)

type sdkKey struct{}

// SDK returns the SDK generator's input for a view: the tools a program can
// reach (never run_code), in order. It is built once per view.
func SDK(v *registry.View) *sdkgen.Set {
	return v.Memo(sdkKey{}, func() any {
		tools := v.SDKTools()
		in := make([]sdkgen.Tool, len(tools))
		for i, t := range tools {
			in[i] = sdkgen.Tool{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters(), Output: t.OutputSchema()}
		}
		return sdkgen.NewSet(in)
	}).(*sdkgen.Set)
}
