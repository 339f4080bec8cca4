package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	cmhttp "github.com/codemode/codemode/http"
	"github.com/codemode/codemode/mcp"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// TestModelToolsMatchEverySurface: for one scope, the Go API
// (App.ModelTools), GET /v1/tools and MCP tools/list give a model the same
// tools with the same descriptions, run_code's being the SDK prompt with an
// embedder's typed tool declared in it.
func TestModelToolsMatchEverySurface(t *testing.T) {
	type in struct {
		City string `json:"city" jsonschema:"city name"`
	}
	type out struct {
		Celsius float64 `json:"celsius"`
	}
	weather := registry.MustTyped("weather", "Current temperature of a city.", func(context.Context, registry.Exec, in) (out, error) {
		return out{Celsius: 21}, nil
	}, &registry.Behavior{Hints: registry.Hints{ReadOnly: true}})
	cfg := config.Default()
	cfg.Isolation = "inproc"
	logger := slog.New(slog.DiscardHandler)
	a, err := app.New(context.Background(), cfg, app.Options{Store: session.NewMemory(), Logger: logger, Tools: []*registry.Tool{weather}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	scope := config.DefaultScope

	goTools, err := a.ModelTools(scope)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, tool := range goTools {
		want[tool.Name] = tool.Description
	}
	if _, ok := want["weather"]; !ok || !strings.Contains(want[registry.RunCode], "weather(args: {") {
		t.Fatalf("Go tools lack weather or its declaration in run_code: %v", want[registry.RunCode])
	}

	srv, err := cmhttp.New(a, cmhttp.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/tools?scope="+scope, nil))
	body, _ := io.ReadAll(rec.Body)
	var list struct {
		Tools []registry.ModelSchema `json:"tools"`
	}
	if err := json.Unmarshal(body, &list); err != nil || rec.Code != 200 {
		t.Fatalf("GET /v1/tools: %d %s", rec.Code, body)
	}
	compare(t, "GET /v1/tools", want, func(yield func(string, string)) {
		for _, tool := range list.Tools {
			yield(tool.Name, tool.Description)
		}
	})

	ms, err := mcp.NewServer(a, scope, mcp.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	ct, st := sdk.NewInMemoryTransports()
	if _, err := ms.Connect(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "MCP tools/list", want, func(yield func(string, string)) {
		for _, tool := range res.Tools {
			yield(tool.Name, tool.Description)
		}
	})
}

func compare(t *testing.T, surface string, want map[string]string, each func(func(name, desc string))) {
	t.Helper()
	seen := 0
	each(func(name, desc string) {
		seen++
		if w, ok := want[name]; !ok {
			t.Errorf("%s offers %s, the Go API does not", surface, name)
		} else if desc != w {
			t.Errorf("%s: %s's description differs from the Go API's:\n%s\n---\n%s", surface, name, desc, w)
		}
	})
	if seen != len(want) {
		t.Errorf("%s offers %d tools, the Go API %d", surface, seen, len(want))
	}
}
