package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sqlite"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunExamples(t *testing.T) {
	code, out, errs := runCLI(t, "", "run", "../../examples/scripts/chain.ts")
	if code != 0 || out != "2 + 3 = 5; + 10 = 15\n{\n  \"sum\": 15\n}\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errs)
	}
	// Standard input, JSON output with the run result's shape.
	code, out, _ = runCLI(t, "return await tools.util_echo({value: 'hi'})", "run", "-", "--json")
	var res struct {
		SessionID string          `json:"session_id"`
		CallID    string          `json:"call_id"`
		IsError   bool            `json:"is_error"`
		Value     json.RawMessage `json:"value"`
		Calls     []struct {
			SubCallID string `json:"sub_call_id"`
			Name      string `json:"name"`
		} `json:"calls"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.IsError || len(res.Calls) != 1 ||
		res.Calls[0].SubCallID != res.CallID+":code:1" || compact(res.Value) != `{"logs":[],"result":{"value":"hi"}}` {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestRunExitCodes(t *testing.T) {
	code, _, errs := runCLI(t, `throw new Error("nope")`, "run", "-")
	if code != 1 || !strings.Contains(errs, "run_code failed (runtime)") || !strings.Contains(errs, "nope") {
		t.Fatalf("failed run: exit %d, %s", code, errs)
	}
	for _, args := range [][]string{
		{"run"}, {"run", "a", "b"}, {"run", "/no/such/file.js"}, {"run", "-", "--scope", "ghost"},
		{"run", "--bogus", "-"}, {"sdk", "--format", "xml"}, {"tools", "--scope", "ghost"}, {"nope"}, {},
		{"run", "-", "--config", "/no/such/config.yaml"}, {"replay"},
	} {
		if code, _, errs := runCLI(t, "return 1", args...); code != 2 || strings.Count(strings.TrimSpace(errs), "\n") > 12 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}

func TestSDKAndTools(t *testing.T) {
	code, ts, _ := runCLI(t, "", "sdk")
	if code != 0 || !strings.Contains(ts, "type ToolArgsMap") || !strings.Contains(ts, "math_add") || strings.Contains(ts, "run_code(") || strings.Contains(ts, `"run_code"`) {
		t.Fatalf("sdk ts: exit %d", code)
	}
	for f, want := range map[string]string{"js": "var tools;\n", "prompt": "Limits: 30 s, 1000 calls"} {
		if code, out, _ := runCLI(t, "", "sdk", "--format", f); code != 0 || !strings.Contains(out, "math_add(args") || !strings.Contains(out, want) {
			t.Errorf("sdk --format %s: exit %d, output lacks %q", f, code, want)
		}
	}
	code, out, _ := runCLI(t, "", "tools", "--json")
	var list struct {
		Scope string `json:"scope"`
		Mode  string `json:"mode"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || list.Scope != "default" || list.Mode != "both" || len(list.Tools) != 12 {
		t.Fatalf("tools --json: exit %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "", "tools"); code != 0 || !strings.Contains(out, "run_code") || !strings.Contains(out, "files_edit") {
		t.Fatalf("tools: %s", out)
	}
	if code, out, _ := runCLI(t, "", "version"); code != 0 || !strings.HasPrefix(out, "codemode ") {
		t.Fatalf("version: %s", out)
	}
}

func TestConfigScopesReachTheCLI(t *testing.T) {
	cfg := testkit.WriteFile(t, "c.yaml", "scopes:\n  agent: {parent: default, mode: code}\n  ro: {parent: default, restrict: {deny: [kv_set]}}\n")
	if code, out, _ := runCLI(t, "", "tools", "--scope", "agent", "--config", cfg); code != 0 || !strings.Contains(out, "mode code") {
		t.Fatalf("agent scope: %s", out)
	}
	if code, out, _ := runCLI(t, "", "sdk", "--scope", "ro", "--config", cfg); code != 0 || strings.Contains(out, "kv_set") || !strings.Contains(out, "kv_get") {
		t.Fatalf("restricted sdk: exit %d", code)
	}
	code, out, _ := runCLI(t, `return Object.keys(tools).includes("kv_set")`, "run", "-", "--scope", "ro", "--config", cfg)
	if code != 0 || strings.TrimSpace(out) != "false" {
		t.Fatalf("restricted run: %q", out)
	}
	cfg = testkit.WriteFile(t, "c.yaml", "limits: {timeout: soon}\n")
	if code, _, errs := runCLI(t, "", "tools", "--config", cfg); code != 2 || !strings.Contains(errs, "limits.timeout") {
		t.Fatalf("bad config: exit %d %s", code, errs)
	}
}

func TestReplayPrintsTimeline(t *testing.T) {
	dir := t.TempDir()
	store := "sqlite://" + filepath.Join(dir, "log.db")
	sid := recordRun(t, config.Default(), store)
	code, out, errs := runCLI(t, "", "replay", sid, "--store", store)
	if code != 0 || !strings.Contains(out, "run_code") || !strings.Contains(out, "math_add") {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, _ := runCLI(t, "", "replay", "no-such-session", "--store", store); code != 1 {
		t.Fatalf("unknown session: exit %d", code)
	}
}

// replay reads a log longer than a page a page at a time, and prints what
// it would print from the whole log: the timeline, and with --json every
// event once, in order.
func TestReplayPagesThroughTheLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "log.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSession(ctx, session.Session{ID: "s", Scope: "default"}); err != nil {
		t.Fatal(err)
	}
	const runs = 2*replayPage/4 + 100 // four events a run: the log spans three pages
	for i := range runs {
		id := fmt.Sprintf("c%d", i)
		var batch []session.Event
		for _, p := range []struct {
			typ     string
			payload any
		}{
			{session.TypeToolCall, session.ToolCall{Turn: 1, Step: i + 1, CallID: id, Name: "run_code", Arguments: `{"code":"…"}`}},
			{session.TypeCodeDispatchStart, session.CodeDispatchStart{RootCallID: id, ParentCallID: id, SubCallID: id + ":code:1", Name: "math_add", Arguments: json.RawMessage(`{"a":1,"b":2}`)}},
			{session.TypeCodeDispatch, session.CodeDispatch{CodeDispatchStart: session.CodeDispatchStart{RootCallID: id, ParentCallID: id, SubCallID: id + ":code:1", Name: "math_add", Arguments: json.RawMessage(`{"a":1,"b":2}`)}}},
			{session.TypeToolResult, session.ToolResult{CallID: id}},
		} {
			e, err := session.NewEvent(p.typ, p.payload)
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, e)
		}
		if _, err := st.Append(ctx, "s", batch...); err != nil {
			t.Fatal(err)
		}
	}
	events, err := st.Events(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	var want bytes.Buffer
	if err := session.WriteTimeline(&want, events); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "replay", "s", "--store", "sqlite://"+path)
	if code != 0 || out != want.String() {
		t.Fatalf("replay: exit %d, %d bytes against %d from the whole log\n%s", code, len(out), want.Len(), errs)
	}
	code, out, errs = runCLI(t, "", "replay", "s", "--json", "--store", "sqlite://"+path)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != len(events) {
		t.Fatalf("replay --json: exit %d, %d lines for %d events\n%s", code, len(lines), len(events), errs)
	}
	for i, line := range lines {
		var e struct{ Seq int64 }
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Seq != events[i].Seq {
			t.Fatalf("line %d: seq %d (%v), want %d", i, e.Seq, err, events[i].Seq)
		}
	}
}

func runRequest(code string) app.RunRequest { return app.RunRequest{Code: code, Description: "test"} }

// recordRun runs one program that calls math_add against store and returns
// the id of the session it logged.
func recordRun(t *testing.T, cfg config.Config, store string) string {
	t.Helper()
	a, err := loadApp(context.Background(), cfg, store, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), runRequest("await tools.math_add({a: 1, b: 2}); return 1"))
	a.Close()
	if err != nil {
		t.Fatal(err)
	}
	return res.SessionID
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// The preview names the tools a scope's guards withhold, and why.
func TestToolsAndSDKNameWithheldTools(t *testing.T) {
	cfg := testkit.WriteFile(t, "codemode.yaml", "store: memory://\nscopes:\n  ro: {parent: default}\nguards:\n  - {scope: ro, tool: 'util_*', reason: owner veto}\n")
	code, out, _ := runCLI(t, "", "tools", "--config", cfg, "--scope", "ro")
	if code != 0 || !strings.Contains(out, "withheld (every call would be refused):\n  util_echo") || !strings.Contains(out, "guard: owner veto") {
		t.Fatalf("tools: exit %d\n%s", code, out)
	}
	code, ts, errOut := runCLI(t, "", "sdk", "--config", cfg, "--scope", "ro")
	if code != 0 || strings.Contains(ts, "util_echo") || !strings.Contains(errOut, "util_echo") {
		t.Fatalf("sdk: exit %d; util_echo in the SDK or not named beside it:\n%s", code, errOut)
	}
}
