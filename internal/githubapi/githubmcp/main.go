// Command githubmcp is a test peer: an MCP server on stdio whose tools are the first n
// operations of GitHub's REST description (githubapi.ToolsN), with their parameters as
// inputSchema and their 2xx JSON response as outputSchema, as the catalog measurements of
// BENCHMARKS.md use it. A call answers an empty structured value when the tool has no output
// schema, and fails otherwise (the measurements only list tools).
//
// Usage: githubmcp [-n 2500] [-outputs=false] [-cache FILE].
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/internal/githubapi"
)

func main() {
	n := flag.Int("n", 2500, "how many operations to serve")
	outputs := flag.Bool("outputs", true, "send each operation's response schema as outputSchema")
	cache := flag.String("cache", "", "keep the converted operations in this JSON file, so that later starts skip converting (as a real server would)")
	flag.Parse()
	tools, err := load(*n, *cache)
	if err != nil {
		log.Fatal(err)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "github", Version: "1"}, nil)
	for _, t := range tools {
		tool := &sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters}
		if *outputs && len(t.Output) > 0 {
			tool.OutputSchema = t.Output
		}
		name := t.Name
		srv.AddTool(tool, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "called " + name}}}, nil
		})
	}
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// load returns the first n operations, from cache when it holds them.
func load(n int, cache string) ([]githubapi.Tool, error) {
	var tools []githubapi.Tool
	if cache != "" {
		if b, err := os.ReadFile(cache); err == nil && json.Unmarshal(b, &tools) == nil && len(tools) == n {
			return tools, nil
		}
	}
	tools, err := githubapi.ToolsN(n)
	if err != nil || cache == "" {
		return tools, err
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, err
	}
	return tools, os.WriteFile(cache, b, 0o644)
}
