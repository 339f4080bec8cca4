package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/examples/tools"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
)

func parse(t *testing.T, yml string) config.Config {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader("isolation: inproc\nstore: memory://\n" + yml))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestGlobsMustMatchATool(t *testing.T) {
	const scopes = "scopes:\n  ro: {parent: default, restrict: {deny: [kv_set]}}\n  empty: {parent: default, restrict: {allow: [math_add]}}\n"
	bad := []struct{ yml, want string }{
		{"policies:\n  - {tool: 'fils_*', decision: ask}", `policies[0].tool: "fils_*" matches no tool in any scope; nearest: files_edit, files_list, files_read`},
		{"policies:\n  - {scope: default, tool: kv_sett, decision: deny}", `policies[0].tool: "kv_sett" matches no tool in scope default (and its descendants); nearest: kv_set`},
		{"guards:\n  - {scope: empty, tool: 'util_*'}", `guards[0].tool: "util_*" matches no tool in scope empty`},
		{"guards:\n  - {scope: ro, tool: kv_set}", `guards[0].tool: "kv_set" matches no tool in scope ro`},
	}
	for _, tc := range bad {
		_, err := app.New(context.Background(), parse(t, scopes+tc.yml), app.Options{})
		var ce *config.Error
		if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\ngot  %v\nwant a config error with %s", tc.yml, err, tc.want)
		}
	}
	good := []string{
		"policies:\n  - {tool: 'files_*', decision: ask}",
		// A policy of a parent binds tools only its descendants have.
		"policies:\n  - {scope: default, tool: math_add, decision: deny}",
		"guards:\n  - {scope: ro, tool: 'util_*'}",
		// Tools of an upstream arrive when it connects.
		"mcp_servers:\n  - {name: notes, command: [notes-server]}\npolicies:\n  - {tool: 'notes.*', decision: ask}\n  - {tool: notes.write, decision: deny}",
	}
	for _, yml := range good {
		a, err := app.New(context.Background(), parse(t, scopes+yml), app.Options{})
		if err != nil {
			t.Errorf("%s: %v", yml, err)
			continue
		}
		a.Close()
	}
}

func TestStoreDirectoriesAndErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := parse(t, "")
	cfg.Store = "sqlite://" + filepath.Join(dir, "a", "b", "codemode.db")
	a, err := app.New(context.Background(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := os.Stat(filepath.Join(dir, "a", "b", "codemode.db")); err != nil {
		t.Fatal(err)
	}
	// A file where the directory should be: one line naming the path and the fix.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Store = "sqlite://" + filepath.Join(blocker, "codemode.db")
	_, err = app.New(context.Background(), cfg, app.Options{})
	var se *app.StoreError
	if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), blocker) || !strings.Contains(err.Error(), "CODEMODE_STORE or --store") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v", err)
	}
	if got := app.RedactURL("postgres://u:secret@h/db"); strings.Contains(got, "secret") {
		t.Fatal(got)
	}
}

// A configured guard vetoes every call of the tools it names, so they are withheld from the
// scope's view (not listed, typed or offered) and the view says why; a call that names one
// is still vetoed with the guard's reason.
func TestGuardedToolsAreWithheld(t *testing.T) {
	a, err := app.New(context.Background(), parse(t, "scopes:\n  readonly: {parent: default, mode: native}\nguards:\n  - {scope: readonly, tool: 'util_*', reason: owner veto}\n"), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	v, err := a.Registry.View("readonly")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range v.Names() {
		if strings.HasPrefix(n, "util_") {
			t.Errorf("%s is listed", n)
		}
	}
	held := v.Withheld()
	if len(held) == 0 || !strings.HasPrefix(held[0].Name, "util_") || held[0].Reason != "guard: owner veto" {
		t.Fatalf("withheld = %+v", held)
	}
	r := a.Runtime.Execute(context.Background(), runtime.Request{CallID: "c1", Name: held[0].Name, Arguments: `{}`, Scope: "readonly"})
	if !r.IsError() || r.Code() != registry.CodeDenied || !strings.Contains(r.Error().Message, "owner veto") {
		t.Fatalf("a call of a withheld tool: %+v", r.Error())
	}
	// The parent scope is not affected.
	if dv, _ := a.Registry.View("default"); !dv.HasSDKTool(held[0].Name) {
		t.Errorf("default lost %s", held[0].Name)
	}
}

// limits.max_sub_call_args_bytes reaches the sandbox: a program whose calls
// pass more argument bytes than it allows ends with a limit failure, after
// the calls within it.
func TestSubCallArgsBytesIsConfigured(t *testing.T) {
	a, err := app.New(context.Background(), parse(t, "limits: {max_sub_call_args_bytes: 1KiB}\n"), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Run(context.Background(), app.RunRequest{Code: `
		for (let i = 0; i < 5; i++) await tools.util_echo({value: "x".repeat(400)})
		return "passed"`})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.Error == nil || res.Error.Kind != "limit" || !strings.Contains(res.Error.Message, "more than 1024 bytes of arguments") {
		t.Fatalf("a run past max_sub_call_args_bytes: %+v", res.Error)
	}
}

// TestDefaultsAreTheOwners: a configuration that sets nothing gives the
// sandbox and the demo pack exactly what they apply to zero options, so
// that configuring a default and leaving it out are the same.
func TestDefaultsAreTheOwners(t *testing.T) {
	d := config.Default()
	if got, want := app.Limits(d.Limits).WithDefaults(), (sandbox.Options{}).WithDefaults(); got != want {
		t.Errorf("the default limits give the sandbox %+v, its own defaults are %+v", got, want)
	}
	if got, want := app.DemoQuotas(d.DemoState), tools.DefaultQuotas(); got != want {
		t.Errorf("the default demo_state gives quotas %+v, the pack's own are %+v", got, want)
	}
}

// The sandbox's limits configured by default are the sandbox's own defaults:
// Default writes the owner's constants, and Limits carries each to its
// option. A limit Limits maps needs no row here.
func TestDefaultLimitsAreTheSandboxs(t *testing.T) {
	got := app.Limits(config.Default().Limits)
	if want := (sandbox.Options{}).WithDefaults(); !reflect.DeepEqual(got.WithDefaults(), want) {
		t.Errorf("the default limits' options differ from the sandbox's defaults:\n got %+v\nwant %+v", got.WithDefaults(), want)
	}
}
