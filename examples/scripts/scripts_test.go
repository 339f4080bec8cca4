// Package scripts holds example run_code programs; this test runs each one
// against the demo tools and compares its output with a golden file.
package scripts

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/golden"
	"github.com/codemode/codemode/session"
)

func TestExampleScripts(t *testing.T) {
	files, err := filepath.Glob("*.[jt]s")
	if err != nil || len(files) < 8 {
		t.Fatalf("want at least 8 example scripts, found %v (%v)", files, err)
	}
	cfg := config.Default()
	a, err := app.New(context.Background(), cfg, app.Options{Store: session.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			code, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background(), app.RunRequest{Code: string(code), Description: f})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("%s failed: %+v", f, res.Error)
			}
			path := filepath.Join("testdata", strings.TrimSuffix(f, filepath.Ext(f))+".golden")
			golden.Check(t, path, []byte(stable(t, res)))
		})
	}
}

// stable is the stable part of a run result: the value, the nested calls
// (names, arguments, outcomes) and the contexts, without ids and times.
func stable(t *testing.T, res app.RunResult) string {
	type call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		IsError   bool            `json:"is_error"`
	}
	out := struct {
		Value    json.RawMessage `json:"value"`
		Content  any             `json:"content"`
		Calls    []call          `json:"calls"`
		Contexts any             `json:"contexts"`
	}{Value: res.Value, Content: res.Content, Contexts: res.Contexts}
	for _, c := range res.Calls {
		out.Calls = append(out.Calls, call{c.Name, c.Arguments, c.IsError})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}
