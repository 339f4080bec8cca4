package mcp

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/runtime"
)

// BenchmarkUpstreamCall measures one call of an upstream tool through the
// whole pipeline (argument validation, the upstream's tools/call over an
// in-memory transport, output validation, rendering), against its floor:
// the same tools/call made directly with the go-sdk client.
func BenchmarkUpstreamCall(b *testing.B) {
	f := newFakeUpstream()
	b.Run("floor: go-sdk client", func(b *testing.B) {
		t, err := f.dial(context.Background(), config.MCPServer{})
		if err != nil {
			b.Fatal(err)
		}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, &sdk.ClientOptions{Logger: discard}).
			Connect(context.Background(), t, &sdk.ClientSessionOptions{ProtocolVersion: upstreamProtocol})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
			if err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
	b.Run("codemode upstream tool", func(b *testing.B) {
		a := newApp(b)
		opts := testOptions(discard)
		opts.dial = f.dial
		ups := startSettled(b, a, []config.MCPServer{{Name: "up", Scope: "default"}}, opts)
		if !ups.Ready() {
			b.Fatal(ups.States())
		}
		b.ReportAllocs()
		for b.Loop() {
			res := a.Runtime.Execute(context.Background(), runtime.Request{CallID: "b", Name: "up.add", Arguments: `{"a":1,"b":2}`, Scope: "default"})
			if res.IsError() {
				b.Fatal(res.Error())
			}
		}
	})
}
