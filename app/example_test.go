package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/session"
)

// ModelTools is what a model must be given for a scope, as HTTP and MCP serve it: in mode
// code, run_code alone, its description the scope's SDK prompt.
func ExampleApp_ModelTools() {
	cfg := config.Default()
	cfg.Mode = "code"
	a, err := app.New(context.Background(), cfg, app.Options{Store: session.NewMemory(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	tools, err := a.ModelTools("default")
	if err != nil {
		panic(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name, strings.Contains(t.Description, "math_add(args: {"))
	}
	// Output:
	// run_code true
}
