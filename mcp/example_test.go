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

// An MCP server of the same process (here one made with the go-sdk) becomes a tool source
// without a subprocess: its tools join the scope as "<name>.<tool>" and programs call them
// through the same pipeline, policies and log as any other tool.
func ExampleStartUpstreams_inProcess() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.New(ctx, config.Default(), app.Options{Store: session.NewMemory(), Logger: quiet})
	if err != nil {
		panic(err)
	}
	defer a.Close()

	notes := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1"}, nil)
	type in struct {
		Text string `json:"text" jsonschema:"what to note"`
	}
	type out struct {
		Saved int `json:"saved"`
	}
	sdk.AddTool(notes, &sdk.Tool{Name: "add", Description: "Adds a note."}, func(_ context.Context, _ *sdk.CallToolRequest, n in) (*sdk.CallToolResult, out, error) {
		return nil, out{Saved: len(n.Text)}, nil
	})

	ups, err := mcp.StartUpstreams(ctx, a, []config.MCPServer{{Name: "notes", Scope: "default"}},
		mcp.UpstreamOptions{Logger: quiet, Servers: map[string]*sdk.Server{"notes": notes}})
	if err != nil {
		panic(err)
	}
	defer ups.Close()
	if err := ups.Settle(ctx); err != nil {
		panic(err)
	}
	res, err := a.Run(ctx, app.RunRequest{Code: `return await tools["notes.add"]({ text: "hello" })`})
	if err != nil {
		panic(err)
	}
	value, _ := json.Marshal(res.Value)
	fmt.Println(ups.States()[0].Transport, ups.States()[0].State, string(value))
	// Output:
	// in-process ready {"logs":[],"result":{"saved":5}}
}
