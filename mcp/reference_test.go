package mcp

// Tests with real MCP servers as upstreams: the reference servers
// (@modelcontextprotocol/server-everything, server-filesystem and
// server-memory) and upstream.mjs, built on the official TypeScript SDK. They
// skip when node or the packages are missing (and fail under CI);
// .ci/node-deps installs them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
)

// requireReference returns the command that starts a reference server
// (everything, filesystem or memory) on stdio, or skips.
func requireReference(t *testing.T, name string, args ...string) []string {
	t.Helper()
	node := requireNode(t)
	script := filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "server-"+name, "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		skip := t.Skip
		if os.Getenv("CI") != "" {
			skip = t.Fatal
		}
		skip("the reference server " + name + " is not installed: run .ci/node-deps")
	}
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{node, abs}, args...)
}

// startReady starts upstreams for a and waits until each has connected.
func startReady(t *testing.T, a *app.App, log *slog.Logger, servers ...config.MCPServer) *Upstreams {
	t.Helper()
	opts := testOptions(log)
	opts.minBackoff = 20 * time.Millisecond
	ups, err := startUpstreams(context.Background(), a.Registry, servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ups.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	defer cancel()
	if err := ups.Settle(ctx); err != nil || !ups.Ready() {
		t.Fatalf("upstreams not ready: %v %+v", err, ups.States())
	}
	return ups
}

// run runs a program in the default scope and returns its result, or fails.
func run(t *testing.T, a *app.App, code string) json.RawMessage {
	t.Helper()
	return runProgram(t, a, code)
}

// decodeJSON decodes raw into a value of type T, or fails.
func decodeJSON[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func TestReferenceEverything(t *testing.T) {
	cmd := requireReference(t, "everything", "stdio")
	a := newApp(t)
	ups := startReady(t, a, discard, config.MCPServer{Name: "everything", Command: cmd, Scope: "default"})
	st := ups.States()[0]
	v, err := a.Registry.View("default")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("tools, including those that need client capabilities", func(t *testing.T) {
		for _, name := range []string{"everything.echo", "everything.get-sum", "everything.get-annotated-message",
			"everything.get-resource-links", "everything.get-resource-reference", "everything.get-structured-content",
			"everything.trigger-long-running-operation", "everything.trigger-sampling-request", "everything.trigger-elicitation-request",
			"everything.resources_list", "everything.resources_read", "everything.resources_templates_list",
			"everything.prompts_list", "everything.prompts_get"} {
			if !v.HasSDKTool(name) {
				t.Errorf("%s is not registered; tools: %v", name, v.Names())
			}
		}
		if st.State != StateReady || st.Server == nil || !slices.Contains(st.Server.Capabilities, "resources") || !slices.Contains(st.Server.Capabilities, "prompts") {
			t.Errorf("state %+v (server %+v)", st, st.Server)
		}
		// A tool that needs task-augmented calls is offered, and called as a task.
		if !v.HasSDKTool("everything.simulate-research-query") {
			t.Errorf("simulate-research-query (taskSupport required) is not offered: %+v", st.Rejected)
		}
	})

	t.Run("a tool that requires tasks is called as one", func(t *testing.T) {
		out := run(t, a, `const r = await tools["everything.simulate-research-query"]({ topic: "green tea" }); return r`)
		if !strings.Contains(string(out), "Research Report: green tea") || !strings.Contains(string(out), "Stage 4: Generating report") {
			t.Fatalf("result %s", out)
		}
	})

	t.Run("hints come from the annotations", func(t *testing.T) {
		for name, tool := range map[string]string{"everything.get-sum": "", "everything.echo": ""} {
			_ = tool
			got, ok := v.Get(name)
			if !ok {
				t.Fatalf("%s missing", name)
			}
			if h := got.Hints(); h.Title == "" {
				t.Errorf("%s: hints %+v lack the title", name, h)
			}
		}
	})

	t.Run("echo and sum", func(t *testing.T) {
		got := run(t, a, `const e = await tools["everything.echo"]({message: "hi"}); const s = await tools["everything.get-sum"]({a: 2, b: 40}); return [e[0].text, s]`)
		if !strings.Contains(string(got), "hi") || !strings.Contains(string(got), "42") {
			t.Errorf("value %s", got)
		}
	})

	t.Run("arguments are validated before the call", func(t *testing.T) {
		res := a.Runtime.Execute(context.Background(), runtime.Request{CallID: "bad", Name: "everything.get-sum", Arguments: `{"a":"two","b":1}`, Scope: "default"})
		if res.Code() != registry.CodeInvalidArgs || !strings.Contains(res.Error().Message, "/a") {
			t.Errorf("bad argument: %q %+v", res.Code(), res.Error())
		}
	})

	t.Run("annotations and resource links reach the program as data", func(t *testing.T) {
		got := run(t, a, `
			const m = await tools["everything.get-annotated-message"]({messageType: "error", includeImage: true})
			const l = await tools["everything.get-resource-links"]({count: 2})
			const r = await tools["everything.get-resource-reference"]({resourceType: "Text", resourceId: 3})
			return {
				annotated: m.filter(b => b.annotations).map(b => [b.type, b.annotations.priority, b.annotations.audience]),
				links: l.filter(b => b.type === "resource_link").map(b => b.uri),
				resource: r.filter(b => b.type === "resource").map(b => [b.resource.uri, typeof b.resource.text]),
			}`)
		out := decodeJSON[struct {
			Annotated [][]any    `json:"annotated"`
			Links     []string   `json:"links"`
			Resource  [][]string `json:"resource"`
		}](t, got)
		if len(out.Annotated) == 0 || len(out.Links) != 2 || !strings.HasPrefix(out.Links[0], "demo://") ||
			len(out.Resource) != 1 || out.Resource[0][1] != "string" {
			t.Errorf("value %s", got)
		}
	})

	t.Run("structured content is the value, its content the rendering", func(t *testing.T) {
		res := a.Runtime.Execute(context.Background(), runtime.Request{CallID: "sc", Name: "everything.get-structured-content", Arguments: `{"location":"Chicago"}`, Scope: "default"})
		if res.IsError() {
			t.Fatalf("%+v", res.Error())
		}
		var val map[string]any
		if err := res.Value().Unmarshal(&val); err != nil || val["temperature"] == nil {
			t.Errorf("value %s", res.Value())
		}
		if c := res.Content(); len(c) == 0 || c[0].Type != "text" {
			t.Errorf("content %+v", c)
		}
	})

	t.Run("resources and prompts", func(t *testing.T) {
		got := run(t, a, `
			const list = await tools["everything.resources_list"]({})
			const first = list.resources[0]
			const read = await tools["everything.resources_read"]({uri: first.uri})
			const templates = await tools["everything.resources_templates_list"]({})
			const prompts = await tools["everything.prompts_list"]({})
			const p = await tools["everything.prompts_get"]({name: "args-prompt", arguments: {city: "Paris"}})
			return {uri: first.uri, read: read.contents[0].uri, templates: templates.resourceTemplates.length,
				prompts: prompts.prompts.map(p => p.name), message: p.messages[0].content.text}`)
		out := decodeJSON[struct {
			URI, Read string
			Templates int
			Prompts   []string
			Message   string
		}](t, got)
		if out.URI == "" || out.Read != out.URI || out.Templates == 0 || !slices.Contains(out.Prompts, "args-prompt") || !strings.Contains(out.Message, "Paris") {
			t.Errorf("value %s", got)
		}
	})

	t.Run("progress becomes notices of the call", func(t *testing.T) {
		ctx, recorded := recordNotices()
		res := a.Runtime.Execute(ctx, runtime.Request{CallID: "long", Name: "everything.trigger-long-running-operation", Arguments: `{"duration":0.3,"steps":3}`, Scope: "default"})
		if res.IsError() {
			t.Fatalf("%+v", res.Error())
		}
		notices := recorded()
		if len(notices) != 3 {
			t.Fatalf("notices %+v, want 3 progress notices", notices)
		}
		for i, n := range notices {
			if n.Kind != registry.NoticeProgress || n.Progress != float64(i+1) || n.Total != 3 || n.CallID != "long" || n.Tool != "everything.trigger-long-running-operation" {
				t.Errorf("notice %d: %+v", i, n)
			}
		}
	})

	t.Run("sampling without an MCP client is refused clearly", func(t *testing.T) {
		res := a.Runtime.Execute(context.Background(), runtime.Request{CallID: "s", Name: "everything.trigger-sampling-request", Arguments: `{"prompt":"hi","maxTokens":5}`, Scope: "default"})
		if !res.IsError() || !strings.Contains(res.Error().Message, "not made by an MCP client") {
			t.Errorf("sampling with no client: %+v %v", res.Error(), res.Content())
		}
	})

	t.Run("sampling and elicitation reach the peer", func(t *testing.T) {
		peer := &fakePeer{reply: "sampled!", name: "ann"}
		ctx := WithPeer(context.Background(), peer)
		res := a.Runtime.Execute(ctx, runtime.Request{CallID: "s2", Name: "everything.trigger-sampling-request", Arguments: `{"prompt":"hi","maxTokens":5}`, Scope: "default"})
		if res.IsError() || !strings.Contains(fmt.Sprint(res.Content()), "sampled!") {
			t.Errorf("sampling: %+v %+v", res.Error(), res.Content())
		}
		res = a.Runtime.Execute(ctx, runtime.Request{CallID: "e2", Name: "everything.trigger-elicitation-request", Arguments: `{}`, Scope: "default"})
		if res.IsError() || !strings.Contains(fmt.Sprint(res.Content()), "decline") || peer.elicited != 1 {
			t.Errorf("elicitation: %+v %+v", res.Error(), res.Content())
		}
	})
}

// fakePeer answers sampling with reply, and elicitation of a form with
// only a "name" by accepting it with name (declining any other form).
type fakePeer struct {
	reply, name       string
	sampled, elicited int
}

func (p *fakePeer) CreateMessage(_ context.Context, _ *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error) {
	p.sampled++
	return &sdk.CreateMessageResult{Model: "fake", Role: "assistant", Content: &sdk.TextContent{Text: p.reply}}, nil
}

func (p *fakePeer) Elicit(_ context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	p.elicited++
	s, _ := params.RequestedSchema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	if _, ok := props["name"]; ok && len(props) == 1 {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": p.name}}, nil
	}
	return &sdk.ElicitResult{Action: "decline"}, nil
}

func TestReferenceFilesystem(t *testing.T) {
	dir := t.TempDir()
	cmd := requireReference(t, "filesystem", dir)
	a := newApp(t)
	startReady(t, a, discard, config.MCPServer{Name: "fs", Command: cmd, Scope: "default"})
	v, _ := a.Registry.View("default")
	if rt, ok := v.Get("fs.read_text_file"); !ok || !rt.Hints().ReadOnly {
		t.Errorf("fs.read_text_file: registered %v, hints %+v", ok, rt)
	}
	if wt, ok := v.Get("fs.write_file"); !ok || wt.Hints().ReadOnly {
		t.Errorf("fs.write_file must not be read-only")
	}
	path := filepath.Join(dir, "note.txt")
	got := run(t, a, fmt.Sprintf(`
		await tools["fs.write_file"]({path: %q, content: "first line\nsecond line"})
		const r = await tools["fs.read_text_file"]({path: %q, head: 1})
		const l = await tools["fs.list_directory"]({path: %q})
		return {read: r.content ?? r, list: l.content ?? l}`, path, path, dir))
	if !strings.Contains(string(got), "first line") || strings.Contains(string(got), "second line\"") || !strings.Contains(string(got), "note.txt") {
		t.Errorf("value %s", got)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "first line\nsecond line" {
		t.Errorf("the file holds %q, %v", b, err)
	}
	// Outside its roots the server refuses; the program sees a ToolCallError.
	got = run(t, a, `try { await tools["fs.read_text_file"]({path: "/etc/hostname"}); return "read" } catch (e) { return [e.name, e.toolName] }`)
	if string(got) != `["ToolCallError","fs.read_text_file"]` {
		t.Errorf("outside the roots: %s", got)
	}
}

func TestReferenceMemory(t *testing.T) {
	cmd := requireReference(t, "memory")
	a := newApp(t)
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	startReady(t, a, discard, config.MCPServer{Name: "memory", Command: cmd, Scope: "default", Env: map[string]string{"MEMORY_FILE_PATH": file}})
	got := run(t, a, `
		await tools["memory.create_entities"]({entities: [{name: "Ada", entityType: "person", observations: ["wrote the first program"]}]})
		await tools["memory.create_relations"]({relations: [{from: "Ada", to: "Ada", relationType: "knows"}]})
		const g = await tools["memory.read_graph"]({})
		return g`)
	if !strings.Contains(string(got), "Ada") || !strings.Contains(string(got), "wrote the first program") {
		t.Errorf("value %s", got)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "Ada") {
		t.Errorf("the memory file holds %q, %v", b, err)
	}
}

// TestStrayStdoutUpstream: a stdio upstream that prints debug lines to
// stdout keeps working; the lines are logged and skipped.
func TestStrayStdoutUpstream(t *testing.T) {
	node := requireNode(t)
	a := newApp(t)
	var logs testkit.Logs
	ups := startReady(t, a, logs.Logger(), config.MCPServer{Name: "notes", Command: upstreamCommand(t, node), Scope: "default"})
	for i := range 3 {
		got := run(t, a, fmt.Sprintf(`return (await tools["notes.chatty"]({text: "t%d"}))[0].text`, i))
		if string(got) != fmt.Sprintf(`"t%d"`, i) {
			t.Fatalf("call %d: %s", i, got)
		}
	}
	if st := ups.States()[0]; st.State != StateReady || st.Restarts != 0 {
		t.Errorf("state %+v", st)
	}
	if n := strings.Count(logs.String(), "not JSON-RPC"); n != 3 || !strings.Contains(logs.String(), "debug: about to echo t2") {
		t.Errorf("%d stray lines logged:\n%s", n, logs.String())
	}
}

// httpUpstream runs upstream.mjs with HTTP flags until the test ends or
// kill is called; it returns the URL.
type httpUpstream struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{}
}

func startHTTPUpstream(t *testing.T, node string, args ...string) *httpUpstream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), peerTimeout)
	argv := upstreamCommand(t, node, args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "MARKER_DIR="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &httpUpstream{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); cancel(); close(h.done) }()
	t.Cleanup(h.kill)
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("upstream.mjs %v: %v\n%s", args, err, stderr.String())
	}
	go func() { _, _ = r.WriteTo(discardWriter{}) }()
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("upstream.mjs said %q", line)
	}
	h.url = url
	return h
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

func (h *httpUpstream) kill() {
	_ = h.cmd.Process.Kill()
	<-h.done
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// TestHTTPUpstreamKilledAndRevived: an HTTP upstream that dies is noticed,
// calls fail clearly while it is gone, and the first call after it comes
// back (a new process, which knows nothing of the old session) succeeds.
func TestHTTPUpstreamKilledAndRevived(t *testing.T) {
	node := requireNode(t)
	port := freePort(t)
	srv := startHTTPUpstream(t, node, "--http", "--port", port)
	a := newApp(t)
	var logs testkit.Logs
	ups := startReady(t, a, logs.Logger(), config.MCPServer{Name: "remote", URL: srv.url, Scope: "default"})
	if got := run(t, a, `return (await tools["remote.add"]({a: 1, b: 2})).sum`); string(got) != "3" {
		t.Fatalf("before: %s", got)
	}

	t.Run("restarted between calls: the next call gets a new session", func(t *testing.T) {
		srv.kill()
		srv = startHTTPUpstream(t, node, "--http", "--port", port)
		if got := run(t, a, `return (await tools["remote.add"]({a: 2, b: 2})).sum`); string(got) != "4" {
			t.Fatalf("after the restart: %s", got)
		}
		if strings.Contains(logs.String(), "session not found") && ups.States()[0].State != StateReady {
			t.Errorf("state after the restart %+v", ups.States()[0])
		}
	})

	t.Run("dead: calls fail clearly, then work when it is back", func(t *testing.T) {
		srv.kill()
		got := run(t, a, `try { await tools["remote.add"]({a: 1, b: 1}); return "ok" } catch (e) { return e.message }`)
		if !strings.Contains(string(got), "upstream remote is unavailable") || !strings.Contains(string(got), "refused") {
			t.Errorf("while dead: %s", got)
		}
		if st := ups.States()[0]; st.State == StateReady {
			t.Errorf("state while dead %+v", st)
		}
		srv = startHTTPUpstream(t, node, "--http", "--port", port)
		testkit.Eventually(t, "the upstream to be ready again", func() bool { return ups.States()[0].State == StateReady })
		if got := run(t, a, `return (await tools["remote.add"]({a: 5, b: 5})).sum`); string(got) != "10" {
			t.Errorf("when back: %s", got)
		}
		if st := ups.States()[0]; st.Restarts < 2 {
			t.Errorf("restarts %+v", st)
		}
	})
}

// TestHTTPUpstreamHealthCheck: a dead HTTP upstream is noticed by its
// health check, without any call.
func TestHTTPUpstreamHealthCheck(t *testing.T) {
	node := requireNode(t)
	srv := startHTTPUpstream(t, node, "--http")
	a := newApp(t)
	opts := testOptions(discard)
	opts.healthInterval = 50 * time.Millisecond
	ups := startSettled(t, a, []config.MCPServer{{Name: "remote", URL: srv.url, Scope: "default"}}, opts)
	if !ups.Ready() {
		t.Fatalf("%+v", ups.States())
	}
	srv.kill()
	testkit.Eventually(t, "the health check to notice", func() bool { return ups.States()[0].State != StateReady })
}

func TestHTTPUpstreamHeadersAndBearer(t *testing.T) {
	node := requireNode(t)
	srv := startHTTPUpstream(t, node, "--http", "--bearer", "s3cret", "--header", "X-Team:blue")
	t.Setenv("CODEMODE_TEST_TOKEN", "s3cret")
	t.Setenv("CODEMODE_TEST_TEAM", "blue")
	a := newApp(t)
	startReady(t, a, discard, config.MCPServer{Name: "remote", URL: srv.url, Scope: "default",
		Headers: map[string]string{"X-Team": "${CODEMODE_TEST_TEAM}"}, Auth: &config.MCPAuth{Bearer: "${CODEMODE_TEST_TOKEN}"}})
	if got := run(t, a, `return (await tools["remote.add"]({a: 1, b: 2})).sum`); string(got) != "3" {
		t.Fatalf("value %s", got)
	}

	t.Run("a refused token is a state, not retried", func(t *testing.T) {
		a := newApp(t)
		var logs testkit.Logs
		opts := testOptions(logs.Logger())
		ups := startSettled(t, a, []config.MCPServer{{Name: "remote", URL: srv.url, Scope: "default",
			Headers: map[string]string{"X-Team": "blue"}, Auth: &config.MCPAuth{Bearer: "wrong"}}}, opts)
		st := ups.States()[0]
		if st.State != StateUnauthorized || st.NextRetry != nil || !strings.Contains(st.LastError, "401") {
			t.Fatalf("state %+v", st)
		}
		time.Sleep(100 * time.Millisecond) // many backoff periods of 1ms: no retry may happen
		if st := ups.States()[0]; st.Attempts != 1 {
			t.Errorf("a refused upstream was retried: %+v", st)
		}
		if strings.Count(logs.String(), "not retrying") != 1 {
			t.Errorf("logs:\n%s", logs.String())
		}
	})

	t.Run("an unset variable is an error at start", func(t *testing.T) {
		_, err := startUpstreams(context.Background(), newApp(t).Registry, []config.MCPServer{{Name: "remote", URL: srv.url,
			Auth: &config.MCPAuth{Bearer: "${CODEMODE_TEST_NOT_SET}"}}}, testOptions(discard))
		if err == nil || !strings.Contains(err.Error(), "CODEMODE_TEST_NOT_SET") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestSSEFallback: a server that only speaks the legacy HTTP+SSE transport
// refuses the streamable POST with a 4xx, and codemode falls back.
func TestSSEFallback(t *testing.T) {
	node := requireNode(t)
	srv := startHTTPUpstream(t, node, "--sse")
	a := newApp(t)
	ups := startReady(t, a, discard, config.MCPServer{Name: "legacy", URL: srv.url, Scope: "default"})
	if st := ups.States()[0]; st.Transport != config.TransportSSE {
		t.Errorf("transport %q, want sse", st.Transport)
	}
	if got := run(t, a, `const [x, y] = await Promise.all([tools["legacy.add"]({a: 1, b: 2}), tools["legacy.add"]({a: 3, b: 4})]); return x.sum + y.sum`); string(got) != "10" {
		t.Errorf("value %s", got)
	}
}

// TestUpstreamNoticesAndPeer: an upstream's progress and log messages
// during a call become the call's notices; its sampling and elicitation
// requests reach the call's peer, and are refused clearly without one.
func TestUpstreamNoticesAndPeer(t *testing.T) {
	node := requireNode(t)
	a := newApp(t)
	startReady(t, a, discard, config.MCPServer{Name: "notes", Command: upstreamCommand(t, node), Scope: "default"})
	ctx, recorded := recordNotices()
	res := a.Runtime.Execute(ctx, runtime.Request{CallID: "r1", Name: "notes.report", Arguments: `{"steps":3}`, Scope: "default"})
	if res.IsError() || res.Value().String() != `{"steps":3}` {
		t.Fatalf("%s %+v", res.Value(), res.Error())
	}
	var progress []float64
	var logLines []string
	for _, n := range recorded() {
		switch n.Kind {
		case registry.NoticeProgress:
			progress = append(progress, n.Progress)
			if n.Message == "" || n.Total != 3 {
				t.Errorf("progress notice %+v", n)
			}
		case registry.NoticeLog:
			logLines = append(logLines, n.Level+" "+n.Logger+" "+string(n.Data))
		}
	}
	if !slices.Equal(progress, []float64{1, 2, 3}) || len(logLines) != 1 || logLines[0] != `warning report {"starting":3}` {
		t.Errorf("progress %v, logs %q", progress, logLines)
	}

	res = a.Runtime.Execute(context.Background(), runtime.Request{CallID: "a1", Name: "notes.ask", Arguments: `{"prompt":"hi"}`, Scope: "default"})
	if res.IsError() || !strings.Contains(res.Content()[0].Text, "not made by an MCP client") {
		t.Errorf("without a peer: %+v %v", res.Error(), res.Content())
	}
	peer := &fakePeer{reply: "hello back", name: "Ann"}
	res = a.Runtime.Execute(WithPeer(context.Background(), peer), runtime.Request{CallID: "a2", Name: "notes.ask", Arguments: `{"prompt":"hi"}`, Scope: "default"})
	if res.IsError() || res.Content()[0].Text != `{"sampled":"hello back","elicited":"Ann"}` {
		t.Errorf("with a peer: %+v %v", res.Error(), res.Content())
	}
}
