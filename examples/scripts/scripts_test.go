// Package scripts holds example run_code programs; this test runs each one
// against the demo tools and compares its output with a golden file.
package scripts

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/session"
)

var update = flag.Bool("update", false, "rewrite the golden files")

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
			got := golden(t, res)
			path := filepath.Join("testdata", strings.TrimSuffix(f, filepath.Ext(f))+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("output of %s:\n%s\nwant:\n%s", f, got, want)
			}
		})
	}
}

// golden is the stable part of a run result: the value, the nested calls
// (names, arguments, outcomes) and the contexts, without ids and times.
func golden(t *testing.T, res app.RunResult) string {
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
