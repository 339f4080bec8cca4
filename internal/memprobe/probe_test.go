package memprobe

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/internal/githubapi"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"context"
	rt "github.com/codemode/codemode/runtime"
)

func heap() uint64 { var m runtime.MemStats; runtime.GC(); runtime.GC(); runtime.ReadMemStats(&m); return m.HeapAlloc }

func TestProbe(t *testing.T) {
	tools, err := githubapi.ToolsN(2500)
	if err != nil { t.Skip(err) }
	size := 0
	for _, tl := range tools { size += len(tl.Parameters) + len(tl.Output) + len(tl.Description) }
	h0 := heap()
	reg := registry.New()
	reg.CreateScope("s", registry.Global, registry.ModeCode)
	r := rt.New(reg, rt.Options{})
	b := bridge.Install(r, bridge.Options{})
	start := time.Now()
	reg.Batch(func() {
	for _, tl := range tools {
		out := tl.Output
		if len(out) == 0 { out = json.RawMessage(`{}`) }
		tool, err := registry.Raw(registry.RawDefinition{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters, Output: out, EnforceParameters: true,
			Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, nil }}})
		if err != nil { t.Fatal(err) }
		reg.Register("s", tool)
	}})
	t.Logf("registered in %v; defs %d MB", time.Since(start), size>>20)
	h1 := heap()
	v, _ := reg.View("s")
	start = time.Now()
	p := b.Prompt(v)
	t.Logf("prompt %d bytes in %v", len(p), time.Since(start))
	bridge.Catalog(v)
	h2 := heap()
	t.Logf("heap: registry %d MB, +sdk/catalog %d MB", (h1-h0)>>20, (h2-h1)>>20)
	runtime.KeepAlive(v)
}

func BenchmarkPrompt(b *testing.B) {
	tools, err := githubapi.ToolsN(2500)
	if err != nil { b.Skip(err) }
	reg := registry.New()
	reg.CreateScope("s", registry.Global, registry.ModeCode)
	r := rt.New(reg, rt.Options{})
	br := bridge.Install(r, bridge.Options{})
	reg.Batch(func() {
	for _, tl := range tools {
		out := tl.Output
		if len(out) == 0 { out = json.RawMessage(`{}`) }
		tool, _ := registry.Raw(registry.RawDefinition{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters, Output: out, EnforceParameters: true,
			Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, nil }}})
		reg.Register("s", tool)
	}})
	for b.Loop() {
		v, _ := reg.View("s")
		br.Prompt(v)
		reg.Annotate("s", func(string) bool { return false }, "x") // a new view next time
	}
}
