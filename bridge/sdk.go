package bridge

import (
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sdkgen"
)

type sdkKey struct{}

type promptKey struct{}

// Prompt is what a model reads before it writes a program for view v: the
// run_code instructions with this bridge's limits and the runtime's
// platform, then the tools' declarations while they fit the prompt budget,
// else a catalog and the discovery API (sdkgen.PromptWith). It is built
// once per view and is run_code's model-facing description wherever
// run_code is offered.
func (b *Bridge) Prompt(v *registry.View) []byte {
	return v.Memo(promptKey{}, func() any {
		l := b.opts.Limits.WithDefaults()
		return sdkgen.PromptWith(SDK(v), sdkgen.PromptOptions{
			Timeout:        l.Timeout,
			MaxCalls:       l.MaxCalls,
			MaxParallel:    b.opts.MaxParallelSubCalls,
			MaxLogBytes:    int64(l.MaxLogBytes),
			MaxResultBytes: int64(l.MaxResultBytes),
			Platform:       sandbox.PlatformSummary,
			Budget:         b.opts.PromptBudget,
			Pinned:         b.opts.Pinned[v.Scope()],
		})
	}).([]byte)
}

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

// Signature is the TypeScript signature of the view's tool name as the SDK declares it
// (`tools.name(args: {…}): Promise<…>`); ok is false for a name outside the SDK.
func Signature(v *registry.View, name string) (string, bool) {
	sig, ok := SDK(v).Signature(name) // rendered once per tool set, then looked up
	if !ok {
		return "", false
	}
	return "tools." + sig, true
}

// ModelSchemas is View.Schemas as a model must be given them: run_code's
// description is Prompt (the instructions and the tools' declarations), not
// the transport's bare description. GET /v1/tools and the MCP tools/list
// serve the same descriptions.
func (b *Bridge) ModelSchemas(v *registry.View) []registry.ModelSchema {
	schemas := v.Schemas()
	for i := range schemas {
		if schemas[i].Name == registry.RunCode {
			schemas[i].Description = string(b.Prompt(v))
		}
	}
	return schemas
}
