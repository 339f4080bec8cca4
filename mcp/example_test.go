package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/mcp"
	"github.com/codemode/codemode/session"
)

// A host connected to a code-mode scope is offered run_code alone, and
// reaches the tools through programs.
func ExampleNewServer() {
	ctx := context.Background()
	cfg := config.Default()
	cfg.Mode = "code"
	a, err := app.New(ctx, cfg, app.Options{Store: session.NewMemory(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	srv, err := mcp.NewServer(a, "default", mcp.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, serverEnd); err != nil {
		panic(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, clientEnd, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		panic(err)
	}
	for _, t := range tools.Tools {
		fmt.Println("tool:", t.Name)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_code", Arguments: map[string]any{
		"code":        "const r = await tools.math_add({a: 2, b: 3}); return r.sum",
		"description": "adds two numbers",
	}})
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(res.StructuredContent)
	fmt.Println("isError:", res.IsError)
	fmt.Println("structuredContent:", string(out))
	// Output:
	// tool: run_code
	// isError: false
	// structuredContent: {"logs":[],"result":5}
}
