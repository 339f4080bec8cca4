package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/mcp"
	"github.com/codemode/codemode/session"
)

// TestIdempotencyKeyReachesUpstreams: every tools/call to an upstream
// carries the call's idempotency key in _meta: derived from the session
// and the sub-call's id, different for each call.
func TestIdempotencyKeyReachesUpstreams(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := config.Default()
	cfg.Isolation = "inproc"
	a, err := app.New(ctx, cfg, app.Options{Store: session.NewMemory(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := sdk.NewServer(&sdk.Implementation{Name: "keys", Version: "1"}, nil)
	type out struct {
		Key string `json:"key"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "key"}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, out, error) {
		key, _ := req.Params.Meta[mcp.IdempotencyKeyMeta].(string)
		return nil, out{Key: key}, nil
	})
	ups, err := mcp.StartUpstreams(ctx, a, []config.MCPServer{{Name: "keys", Scope: "default"}},
		mcp.UpstreamOptions{Logger: quiet, Servers: map[string]*sdk.Server{"keys": srv}})
	if err != nil {
		t.Fatal(err)
	}
	defer ups.Close()
	if err := ups.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(ctx, app.RunRequest{Code: `return [(await tools["keys.key"]({})).key, (await tools["keys.key"]({})).key]`})
	if err != nil || res.IsError {
		t.Fatalf("run: %v %+v", err, res.Error)
	}
	var v struct{ Result []string }
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatal(err)
	}
	for i, got := range v.Result {
		sum := sha256.Sum256([]byte(res.SessionID + "\x00" + res.CallID + ":code:" + string(rune('1'+i))))
		if want := "cm1-" + hex.EncodeToString(sum[:16]); got != want {
			t.Errorf("call %d: key %q, want %q", i+1, got, want)
		}
	}
}
