// Command githubmcp is a test peer: an MCP server on stdio whose tools are the first n
// operations of GitHub's REST description (githubapi.ToolsN), with their parameters as
// inputSchema and their 2xx JSON response as outputSchema, as the catalog measurements of
// BENCHMARKS.md use it. A call answers an empty structured value when the tool has no output
// schema, and fails otherwise (the measurements only list tools). Usage: githubmcp [-n 2500].
package main

import (
	"context"
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
	flag.Parse()
	tools, err := githubapi.ToolsN(*n)
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
