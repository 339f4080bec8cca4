package mcp

// Tests with the official TypeScript SDK as the peer (testdata/node). They
// skip when node or testdata/node/node_modules is missing; .ci/node-deps
// installs the modules.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/session"
)

// peerServerEnv makes the test binary, re-executed, serve MCP on stdio
// (see TestMain): "stdio" for a TypeScript client to drive, "add" as an
// upstream (serveAdd); or serve an upstream over HTTP ("add-http",
// "add-json", "add-sse": serveAddHTTP).
const peerServerEnv = "CODEMODE_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	kind := os.Getenv(peerServerEnv)
	serve := map[string]func() error{"stdio": servePeer, "add": serveAdd,
		"add-http": func() error { return serveAddHTTP(kind) }, "add-json": func() error { return serveAddHTTP(kind) },
		"add-sse": func() error { return serveAddHTTP(kind) }}[kind]
	if serve != nil {
		if err := serve(); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// servePeer is `codemode mcp` as the stdio tests run it: the default
// configuration, the store CODEMODE_MCP_TEST_STORE names, test_block
// writing its markers to MARKER_DIR, and the upstreams
// CODEMODE_MCP_TEST_UPSTREAMS lists (JSON).
func servePeer() error {
	ctx := context.Background()
	cfg := config.Default()
	cfg.Store = os.Getenv("CODEMODE_MCP_TEST_STORE")
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	a, err := app.New(ctx, cfg, app.Options{Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	if err := registerMarkerBlocker(a, "default", os.Getenv("MARKER_DIR")); err != nil {
		return err
	}
	var ups *Upstreams
	if raw := os.Getenv("CODEMODE_MCP_TEST_UPSTREAMS"); raw != "" {
		var servers []config.MCPServer
		if err := json.Unmarshal([]byte(raw), &servers); err != nil {
			return fmt.Errorf("CODEMODE_MCP_TEST_UPSTREAMS: %w", err)
		}
		if ups, err = StartUpstreams(ctx, a, servers, UpstreamOptions{Logger: log}); err != nil {
			return err
		}
		defer ups.Close()
	}
	return ServeStdio(ctx, a, "default", os.Stdin, os.Stdout, Options{Logger: log, Upstreams: ups})
}

// registerMarkerBlocker registers test_block: it writes dir/started when a
// call begins and dir/cancelled when the call's context ends, so a peer in
// another process can wait for both without timing.
func registerMarkerBlocker(a *app.App, scope, dir string) error {
	if dir == "" {
		return errors.New("MARKER_DIR is required")
	}
	tool, err := registry.Define(registry.Definition{
		Name:        "test_block",
		Description: "Waits until cancelled.",
		Output:      schema.Object(nil, nil, false),
		Behavior: registry.Behavior{Execute: func(ctx context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
			if err := os.WriteFile(filepath.Join(dir, "started"), nil, 0o644); err != nil {
				return nil, err
			}
			<-ctx.Done()
			_ = os.WriteFile(filepath.Join(dir, "cancelled"), []byte(ctx.Err().Error()), 0o644)
			return nil, ctx.Err()
		}},
	})
	if err != nil {
		return err
	}
	_, err = a.Registry.Register(scope, tool)
	return err
}

// nodeDir holds the TypeScript peers.
var nodeDir = filepath.Join("testdata", "node")

// requireNode returns the node binary, or skips the test (fails it under CI)
// when Node.js or the TypeScript SDK is missing.
func requireNode(t *testing.T) string {
	t.Helper()
	return testkit.RequireNode(t, nodeDir, "@modelcontextprotocol/sdk")
}

// peerTimeout bounds one peer process: a guard against hangs, not a
// timing assertion.
const peerTimeout = 2 * time.Minute

// peerResult is a CallToolResult as the TypeScript client reports it.
type peerResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MimeType string `json:"mimeType"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Meta              struct {
		SessionID string `json:"codemode/sessionId"`
		CallID    string `json:"codemode/callId"`
		Error     *struct {
			Code, Kind, Message string
		} `json:"codemode/error"`
	} `json:"_meta"`
}

func (r peerResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// clientReport is what client.mjs prints.
type clientReport struct {
	ListChanged        int        `json:"listChanged"`
	Tools              []string   `json:"tools"`
	RunCodeDescription string     `json:"runCodeDescription"`
	Program            peerResult `json:"program"`
	Failing            peerResult `json:"failing"`
	Direct             peerResult `json:"direct"`
	ToolError          peerResult `json:"toolError"`
	Cancel             string     `json:"cancel"`
	CancelReachedTool  bool       `json:"cancelReachedTool"`
	After              peerResult `json:"after"`
}

// runClient runs client.mjs with args and returns its report.
func runClient(t *testing.T, node, markerDir string, serverEnv map[string]string, args ...string) clientReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	envJSON, err := json.Marshal(serverEnv)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs"}, args...)...)
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "MARKER_DIR="+markerDir, "SERVER_ENV="+string(envJSON))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var rep clientReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("client.mjs report: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return rep
}

// checkClientReport asserts the scenario's outcomes, and returns the
// session the calls were logged in.
func checkClientReport(t *testing.T, rep clientReport) string {
	t.Helper()
	wantTools := []string{"files_edit", "files_list", "files_read", "files_write", "kv_get", "kv_set", "math_add", "run_code", "test_block", "util_echo", "util_fail", "util_sleep", "util_swatch"}
	if !slices.Equal(rep.Tools, wantTools) {
		t.Errorf("tools\n got %v\nwant %v", rep.Tools, wantTools)
	}
	if !strings.Contains(rep.RunCodeDescription, "declare const tools") || !strings.Contains(rep.RunCodeDescription, "math_add") {
		t.Errorf("run_code's description lacks the SDK declarations:\n%s", rep.RunCodeDescription)
	}
	checkResult := func(name string, r peerResult, isError bool, structured, text string) {
		t.Helper()
		if r.IsError != isError {
			t.Errorf("%s: isError = %v, want %v: %s", name, r.IsError, isError, r.text())
		}
		if structured != "" && string(r.StructuredContent) != structured {
			t.Errorf("%s: structuredContent = %s, want %s", name, r.StructuredContent, structured)
		}
		if !strings.Contains(r.text(), text) {
			t.Errorf("%s: content %q lacks %q", name, r.text(), text)
		}
	}
	checkResult("program", rep.Program, false, `{"logs":["adding"],"result":{"sum":5}}`, "adding")
	checkResult("failing program", rep.Failing, true, "", "kaput")
	checkResult("failing program", rep.Failing, true, "", "before")
	if e := rep.Failing.Meta.Error; e == nil || e.Code != "CODE_RUN_FAILED" || e.Kind != "runtime" {
		t.Errorf("failing program: _meta error %+v, want CODE_RUN_FAILED runtime", e)
	}
	checkResult("direct call", rep.Direct, false, `{"sum":42}`, "42")
	checkResult("failing tool", rep.ToolError, true, "", "no luck")
	if !strings.HasPrefix(rep.Cancel, "rejected") || !rep.CancelReachedTool {
		t.Errorf("cancellation: %q (reached the tool: %v)", rep.Cancel, rep.CancelReachedTool)
	}
	checkResult("call after the cancellation", rep.After, false, `{"sum":2}`, "2")
	sid := rep.After.Meta.SessionID
	if sid == "" || sid != rep.Program.Meta.SessionID {
		t.Errorf("calls of one MCP session ran in sessions %q and %q", rep.Program.Meta.SessionID, sid)
	}
	return sid
}

// checkCancelledRunLogged finds the blocking run_code call in the session
// log and checks its result says the run was cancelled.
func checkCancelledRunLogged(t *testing.T, store session.Store, sessionID string) {
	t.Helper()
	events, err := store.Events(context.Background(), sessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var callID string
	for _, e := range events {
		switch e.Type {
		case session.TypeToolCall:
			var c session.ToolCall
			if err := json.Unmarshal(e.Data, &c); err != nil {
				t.Fatal(err)
			}
			if c.Name == "run_code" && strings.Contains(c.Arguments, "test_block") {
				callID = c.CallID
			}
		case session.TypeToolResult:
			var r session.ToolResult
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatal(err)
			}
			if r.CallID == callID && callID != "" {
				// The run must have failed because of the cancellation. (Its
				// kind is "cancelled", or "runtime" when the cancelled
				// sub-call's rejection settles first: a race in the
				// sandbox, reported.)
				if !r.IsError || r.Error == nil || string(r.Error.Code) != "CODE_RUN_FAILED" ||
					(r.Error.Kind != "cancelled" && !strings.Contains(r.Error.Message, "cancel")) {
					t.Errorf("the cancelled run was logged as %+v, want a CODE_RUN_FAILED cancellation", r.Error)
				}
				return
			}
		}
	}
	t.Errorf("no logged result for the cancelled run (call %q) in session %s", callID, sessionID)
}

// TestTypeScriptClientStdio drives `codemode mcp` (this test binary,
// re-executed) over stdio with the TypeScript SDK's client.
func TestTypeScriptClientStdio(t *testing.T) {
	node := requireNode(t)
	dir := t.TempDir()
	store := "sqlite://" + filepath.Join(dir, "log.db")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{peerServerEnv: "stdio", "CODEMODE_MCP_TEST_STORE": store, "MARKER_DIR": dir}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	rep := runClient(t, node, dir, env, "stdio", exe, "-test.run=^$")
	sid := checkClientReport(t, rep)
	app.RegisterStores()
	st, err := session.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkCancelledRunLogged(t, st, sid)
}

// TestTypeScriptClientHTTP drives the /mcp handler over streamable HTTP
// with the TypeScript SDK's client.
func TestTypeScriptClientHTTP(t *testing.T) {
	node := requireNode(t)
	dir := t.TempDir()
	a := newApp(t)
	if err := registerMarkerBlocker(a, "default", dir); err != nil {
		t.Fatal(err)
	}
	h := Handler(a, HandlerOptions{Logger: discard})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	rep := runClient(t, node, dir, nil, "http", srv.URL+"/mcp?scope=default")
	sid := checkClientReport(t, rep)
	checkCancelledRunLogged(t, a.Store, sid)
}

// upstreamScript is the TypeScript upstream server.
func upstreamCommand(t *testing.T, node string, args ...string) []string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(nodeDir, "upstream.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{node, script}, args...)
}

// runProgram runs a program in a scope and returns its result value, or
// fails the test.
func runProgram(t *testing.T, a *app.App, code string) json.RawMessage {
	t.Helper()
	res, err := a.Run(context.Background(), app.RunRequest{Code: code, Description: "test program", Scope: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("program failed: %+v %v", res.Error, res.Content)
	}
	var v struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatal(err)
	}
	return v.Result
}

// TestTypeScriptUpstream makes a TypeScript MCP server (stdio) a tool
// source and calls its tools from programs.
func TestTypeScriptUpstream(t *testing.T) {
	node := requireNode(t)
	dir := t.TempDir()
	a := newApp(t)
	opts := testOptions(discard)
	opts.minBackoff = 20 * time.Millisecond
	ups := startSettled(t, a, []config.MCPServer{
		{Name: "notes", Command: upstreamCommand(t, node), Scope: "default", Env: map[string]string{"MARKER_DIR": dir}},
		// A second instance with a short call timeout for the timeout case;
		// connecting has its own.
		{Name: "slow", Command: upstreamCommand(t, node), Scope: "default", Env: map[string]string{"MARKER_DIR": dir},
			Timeout: config.Duration(300 * time.Millisecond), ConnectTimeout: config.Duration(30 * time.Second)},
	}, opts)
	if !ups.Ready() {
		t.Fatalf("settle: %+v", ups.States())
	}

	t.Run("registered", func(t *testing.T) {
		v, err := a.Registry.View("default")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"notes.add", "notes.echo_text", "notes.fail", "notes.slow", "notes.pid", "notes.picture", "slow.slow"} {
			if !v.HasSDKTool(name) {
				t.Errorf("%s is not registered; tools: %v", name, v.Names())
			}
		}
	})
	t.Run("structured value", func(t *testing.T) {
		got := runProgram(t, a, `const r = await tools["notes.add"]({a: 2, b: 3}); return r`)
		if string(got) != `{"sum":5}` {
			t.Errorf("value %s", got)
		}
	})
	t.Run("content value", func(t *testing.T) {
		got := runProgram(t, a, `return await tools["notes.echo_text"]({text: "hi there"})`)
		if string(got) != `[{"type":"text","text":"hi there"}]` {
			t.Errorf("value %s", got)
		}
	})
	t.Run("image content reaches the run", func(t *testing.T) {
		res, err := a.Run(context.Background(), app.RunRequest{Code: `const c = await tools["notes.picture"]({}); return c.map(b => b.type)`, Scope: "default"})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || !strings.Contains(string(res.Value), `["text","image"]`) {
			t.Fatalf("run: %s %+v", res.Value, res.Error)
		}
		var images int
		for _, c := range res.Contexts {
			for _, b := range c.Content {
				if b.IsImage() && b.MimeType == "image/png" {
					images++
				}
			}
		}
		if images != 1 {
			t.Errorf("%d images ferried onto the run, want 1: %+v", images, res.Contexts)
		}
	})
	t.Run("isError is a ToolCallError", func(t *testing.T) {
		got := runProgram(t, a, `try { await tools["notes.fail"]({message: "nope"}); return "no error" } catch (e) { return [e.name, e.toolName, e.message] }`)
		if string(got) != `["ToolCallError","notes.fail","nope"]` {
			t.Errorf("value %s", got)
		}
	})
	t.Run("slow call times out and is cancelled upstream", func(t *testing.T) {
		got := runProgram(t, a, `try { await tools["slow.slow"]({ms: 600000, tag: "t1"}); return "no error" } catch (e) { return e.message }`)
		if !strings.Contains(string(got), "timed out") {
			t.Errorf("value %s, want a timeout", got)
		}
		testkit.Eventually(t, "the upstream to see the cancellation", func() bool {
			_, err := os.Stat(filepath.Join(dir, "aborted-t1"))
			return err == nil
		})
	})
	t.Run("a tool that requires tasks is called as one, and cancelled with its call", func(t *testing.T) {
		got := runProgram(t, a, `return (await tools["notes.slow_task"]({ms: 50}))[0].text`)
		if !strings.Contains(string(got), "worked 50 ms") {
			t.Errorf("value %s", got)
		}
		got = runProgram(t, a, `try { await tools["slow.slow_task"]({ms: 600000, tag: "t2"}); return "no error" } catch (e) { return e.message }`)
		if !strings.Contains(string(got), "timed out") {
			t.Errorf("value %s, want a timeout", got)
		}
		testkit.Eventually(t, "the upstream to see the task cancelled", func() bool {
			_, err := os.Stat(filepath.Join(dir, "task-cancelled-t2"))
			return err == nil
		})
	})
	t.Run("list_changed refreshes the SDK", func(t *testing.T) {
		before := sdkVersion(t, a)
		runProgram(t, a, `return await tools["notes.add_tool"]({name: "extra"})`)
		testkit.Eventually(t, "notes.extra to be registered", func() bool { return sdkVersion(t, a) != before })
		got := runProgram(t, a, `return await tools["notes.extra"]({})`)
		if string(got) != `{"name":"extra"}` {
			t.Errorf("value %s", got)
		}
	})
	t.Run("a killed upstream is restarted", func(t *testing.T) {
		var pid struct{ Pid int }
		if err := json.Unmarshal(runProgram(t, a, `return await tools["notes.pid"]({})`), &pid); err != nil || pid.Pid <= 0 {
			t.Fatalf("pid: %+v %v", pid, err)
		}
		proc, err := os.FindProcess(pid.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.Kill(); err != nil {
			t.Fatal(err)
		}
		// A call right after the kill fails clearly, unless the upstream is
		// back already (its restart races with the call): then it answers
		// from a new process. Calls succeed again once it is back.
		got := runProgram(t, a, `try { return await tools["notes.pid"]({}) } catch (e) { return e.message }`)
		var early struct{ Pid int }
		if json.Unmarshal(got, &early) == nil && early.Pid > 0 {
			if early.Pid == pid.Pid {
				t.Errorf("call right after the kill answered from the killed process %d", pid.Pid)
			}
		} else if !strings.Contains(string(got), "upstream notes is unavailable") {
			t.Errorf("call right after the kill: %s", got)
		}
		var after struct{ Pid int }
		testkit.Eventually(t, "the upstream to come back", func() bool {
			got := runProgram(t, a, `try { return await tools["notes.pid"]({}) } catch (e) { return {pid: 0} }`)
			return json.Unmarshal(got, &after) == nil && after.Pid > 0
		})
		if after.Pid == pid.Pid {
			t.Errorf("the upstream answers from the killed process %d", pid.Pid)
		}
		if got := runProgram(t, a, `return (await tools["notes.add"]({a: 1, b: 1})).sum`); string(got) != "2" {
			t.Errorf("after the restart: %s", got)
		}
	})
}

// TestTypeScriptUpstreamHTTP connects to a TypeScript MCP server over
// streamable HTTP.
func TestTypeScriptUpstreamHTTP(t *testing.T) {
	node := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	url := startHTTPUpstream(t, node, "--http").url
	a := newApp(t)
	ups, err := startUpstreams(ctx, a.Registry, []config.MCPServer{{Name: "remote", URL: url, Scope: "default"}}, testOptions(discard))
	if err != nil {
		t.Fatal(err)
	}
	defer ups.Close()
	if err := ups.Settle(ctx); err != nil || !ups.Ready() {
		t.Fatalf("settle: %v %+v", err, ups.States())
	}
	got := runProgram(t, a, `const [x, y] = await Promise.all([tools["remote.add"]({a: 1, b: 2}), tools["remote.add"]({a: 3, b: 4})]); return x.sum + y.sum`)
	if string(got) != "10" {
		t.Errorf("value %s", got)
	}
}

func sdkVersion(t *testing.T, a *app.App) string {
	t.Helper()
	v, err := a.Registry.View("default")
	if err != nil {
		t.Fatal(err)
	}
	return bridge.SDK(v).Version()
}

// peerEnv is the environment of the re-executed test binary serving MCP.
func peerEnv(dir string, extra map[string]string) map[string]string {
	env := map[string]string{peerServerEnv: "stdio", "CODEMODE_MCP_TEST_STORE": "memory://", "MARKER_DIR": dir}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// forwardReport is what client_forward.mjs prints.
type forwardReport struct {
	Tools map[string]struct {
		Title       string         `json:"title"`
		Annotations map[string]any `json:"annotations"`
	} `json:"tools"`
	Sampling    []string          `json:"sampling"`
	Elicitation []string          `json:"elicitation"`
	Logs        []json.RawMessage `json:"logs"`
	Progress    []struct {
		Progress, Total float64
		Message         string
	} `json:"progress"`
	RunProgress []struct {
		Progress, Total float64
		Message         string
	} `json:"runProgress"`
	Report, Ask, Run, Links, Annotated, Reference, Sample json.RawMessage
}

// TestTypeScriptClientForwarding: the official TypeScript client, through
// `codemode mcp` with real upstreams behind it, sees the upstream tools
// with their annotations, gets their progress and log messages, answers
// their sampling and elicitation requests, and receives their content whole.
func TestTypeScriptClientForwarding(t *testing.T) {
	node := requireNode(t)
	everything := requireReference(t, "everything", "stdio")
	dir := t.TempDir()
	servers, err := json.Marshal([]config.MCPServer{
		{Name: "notes", Command: upstreamCommand(t, node), Scope: "default"},
		{Name: "everything", Command: everything, Scope: "default"},
	})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	envJSON, _ := json.Marshal(peerEnv(dir, map[string]string{"CODEMODE_MCP_TEST_UPSTREAMS": string(servers)}))
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client_forward.mjs", exe, "-test.run=^$")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "SERVER_ENV="+string(envJSON))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client_forward.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var rep forwardReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	text := func(raw json.RawMessage) string {
		var r peerResult
		_ = json.Unmarshal(raw, &r)
		return r.text()
	}

	t.Run("upstream tools are listed with their annotations", func(t *testing.T) {
		for _, name := range []string{"notes.add", "notes.report", "everything.echo", "everything.get-sum", "everything.resources_read", "run_code", "math_add"} {
			if _, ok := rep.Tools[name]; !ok {
				t.Errorf("%s is not listed", name)
			}
		}
		if a := rep.Tools["notes.add"].Annotations; a["readOnlyHint"] != true {
			t.Errorf("notes.add annotations %v", a)
		}
		if a := rep.Tools["math_add"].Annotations; a["readOnlyHint"] != true || a["openWorldHint"] != false {
			t.Errorf("math_add (a demo tool) annotations %v", a)
		}
		if a := rep.Tools["kv_set"].Annotations; a["readOnlyHint"] != false {
			t.Errorf("kv_set annotations %v", a)
		}
		if rep.Tools["everything.get-sum"].Title == "" {
			t.Errorf("everything.get-sum has no title: %+v", rep.Tools["everything.get-sum"])
		}
	})
	t.Run("progress and log messages reach the client", func(t *testing.T) {
		if len(rep.Progress) != 3 || rep.Progress[2].Progress != 3 || rep.Progress[2].Total != 3 || rep.Progress[0].Message != "step 1" {
			t.Errorf("progress of a direct call %+v", rep.Progress)
		}
		if len(rep.RunProgress) != 2 || rep.RunProgress[0].Progress != 1 || rep.RunProgress[1].Progress != 2 ||
			!strings.Contains(rep.RunProgress[1].Message, "notes.report: step 2 (2/2)") {
			t.Errorf("progress of a run's sub-calls %+v", rep.RunProgress)
		}
		found := false
		for _, l := range rep.Logs {
			if strings.Contains(string(l), `"logger":"report"`) && strings.Contains(string(l), `"level":"warning"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("logs %s", rep.Logs)
		}
	})
	t.Run("sampling and elicitation are forwarded to the client", func(t *testing.T) {
		if got := text(rep.Ask); got != `{"sampled":"echo: ping","elicited":"Grace"}` {
			t.Errorf("direct: %s", rep.Ask)
		}
		if !strings.Contains(text(rep.Run), `echo: nested`) || !strings.Contains(text(rep.Run), "Grace") {
			t.Errorf("from a program: %s", rep.Run)
		}
		if got := text(rep.Sample); !strings.Contains(got, "echo: ") || !strings.Contains(got, "hello there") || strings.Contains(string(rep.Sample), "structuredContent") {
			t.Errorf("everything's sampling: %s", rep.Sample)
		}
		if !slices.Contains(rep.Sampling, "ping") || !slices.Contains(rep.Sampling, "nested") || len(rep.Elicitation) != 2 {
			t.Errorf("the client answered sampling %q, elicitation %q", rep.Sampling, rep.Elicitation)
		}
	})
	t.Run("content reaches the client whole", func(t *testing.T) {
		var links struct {
			Content []map[string]any `json:"content"`
		}
		_ = json.Unmarshal(rep.Links, &links)
		n := 0
		for _, c := range links.Content {
			if c["type"] == "resource_link" && strings.HasPrefix(fmt.Sprint(c["uri"]), "demo://") && c["name"] != nil {
				n++
			}
		}
		if n != 2 {
			t.Errorf("resource links %s", rep.Links)
		}
		if !strings.Contains(string(rep.Annotated), `"annotations":{`) || !strings.Contains(string(rep.Annotated), `"priority"`) || !strings.Contains(string(rep.Annotated), `"type":"image"`) {
			t.Errorf("annotated %s", rep.Annotated)
		}
		if !strings.Contains(string(rep.Reference), `"type":"resource"`) || !strings.Contains(string(rep.Reference), `"uri":"demo://resource/dynamic/text/2"`) {
			t.Errorf("embedded resource %s", rep.Reference)
		}
	})
}

// tasksReport is what tasks.mjs prints.
type tasksReport struct {
	Capabilities *struct {
		Requests struct {
			Tools struct {
				Call map[string]any `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	} `json:"capabilities"`
	TaskSupport string `json:"taskSupport"`
	Created     struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
		TTL    int64  `json:"ttl"`
	} `json:"created"`
	Listed   []string `json:"listed"`
	Statuses []struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"statuses"`
	Result          peerResult `json:"result"`
	Error           string     `json:"error"`
	Cancelled       string     `json:"cancelled"`
	CancelledResult string     `json:"cancelledResult"`
	OtherTool       string     `json:"otherTool"`
}

// TestTypeScriptClientTasks: the TypeScript SDK's client calls run_code as
// a task over /mcp; the program waits for an approval, which the test gives
// once the ask is logged, and the client gets the result by polling.
func TestTypeScriptClientTasks(t *testing.T) {
	node := requireNode(t)
	cfg := config.Default()
	cfg.Policies = []config.Policy{{Scope: "default", Tool: "kv_set", Decision: "ask", Reason: "writes need a person"}}
	a, err := app.New(context.Background(), cfg, app.Options{Store: session.NewMemory(), Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	h := Handler(a, HandlerOptions{Logger: discard})
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	// The approver: once the client has seen the task wait for approval,
	// it answers the asks it finds in the log.
	markers := t.TempDir()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := os.Stat(filepath.Join(markers, "waiting")); err != nil {
				continue
			}
			list, err := a.Store.ListSessions(context.Background(), session.SessionFilter{Limit: 10})
			if err != nil {
				continue
			}
			for _, s := range list.Sessions {
				pending, _ := a.Agent.Approvals(context.Background(), s.ID)
				for _, p := range pending {
					_ = a.Agent.Answer(context.Background(), s.ID, p.ID, true, "")
				}
			}
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "tasks.mjs", srv.URL+"/mcp?scope=default")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "MARKER_DIR="+markers)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tasks.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var rep tasksReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("tasks.mjs report: %v\n%s", err, stdout.String())
	}
	if rep.Capabilities == nil || rep.Capabilities.Requests.Tools.Call == nil || rep.TaskSupport != "optional" {
		t.Errorf("tasks are not announced: capabilities %+v, run_code's taskSupport %q", rep.Capabilities, rep.TaskSupport)
	}
	if rep.Created.TaskID == "" || rep.Created.Status != "working" || rep.Created.TTL != 60000 || !slices.Contains(rep.Listed, rep.Created.TaskID) {
		t.Errorf("the task created: %+v, listed %v", rep.Created, rep.Listed)
	}
	if n := len(rep.Statuses); n < 2 || rep.Statuses[n-1].Status != "completed" || rep.Statuses[0].Status != "working" ||
		!strings.Contains(rep.Statuses[n-2].Message, "waiting for approval: kv_set") {
		t.Errorf("statuses polled: %+v; want working, waiting for approval, then completed", rep.Statuses)
	}
	if rep.Error != "" || rep.Result.IsError || string(rep.Result.StructuredContent) != `{"logs":[],"result":{"before":false,"after":"v"}}` {
		t.Errorf("result %+v %s (error %q)", rep.Result, rep.Result.StructuredContent, rep.Error)
	}
	if rep.Cancelled != "cancelled" || !strings.HasPrefix(rep.CancelledResult, "rejected") {
		t.Errorf("cancelling a task: %q, then its result: %q", rep.Cancelled, rep.CancelledResult)
	}
	if !strings.Contains(rep.OtherTool, "only run_code") {
		t.Errorf("a task for another tool: %q", rep.OtherTool)
	}
}
