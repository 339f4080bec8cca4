package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sdkgen"
)

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

// fakeUpstream is a go-sdk MCP server reached over in-memory transports.
type fakeUpstream struct {
	srv      *sdk.Server
	dials    atomic.Int32
	gate     chan struct{} // when set, dials after the first wait for it
	refuse   atomic.Bool   // dials fail as a refused connection would
	mu       sync.Mutex
	sessions []*sdk.ServerSession // guarded by mu

	blockStarted   chan struct{}
	blockCancelled chan error
}

func newFakeUpstream() *fakeUpstream {
	f := &fakeUpstream{
		srv:            sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, &sdk.ServerOptions{Logger: discard}),
		blockStarted:   make(chan struct{}, 8),
		blockCancelled: make(chan error, 8),
	}
	sdk.AddTool(f.srv, &sdk.Tool{Name: "add", Description: "Adds two numbers.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
			return nil, addOut{Sum: in.A + in.B}, nil
		})
	f.srv.AddTool(&sdk.Tool{Name: "say", Description: "Says hello with a picture.", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Name string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "hello " + in.Name},
				&sdk.ImageContent{Data: []byte("\x89PNG"), MIMEType: "image/png"},
			}}, nil
		})
	f.srv.AddTool(&sdk.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the note is locked"}}}, nil
		})
	f.srv.AddTool(&sdk.Tool{Name: "lies", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"n": "not a number"}}, nil
		})
	f.srv.AddTool(&sdk.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			f.blockStarted <- struct{}{}
			<-ctx.Done()
			f.blockCancelled <- ctx.Err()
			return nil, ctx.Err()
		})
	f.srv.AddTool(&sdk.Tool{Name: "bad_schema", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","pattern":"(?<"}}}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	return f
}

func (f *fakeUpstream) dial(ctx context.Context, _ config.MCPServer) (sdk.Transport, error) {
	if f.refuse.Load() {
		f.dials.Add(1)
		return nil, errors.New("connection refused")
	}
	if f.dials.Add(1) > 1 && f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := f.srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.sessions = append(f.sessions, ss)
	f.mu.Unlock()
	return ct, nil
}

// dropSessions closes the server side of every connection, as a crash would.
func (f *fakeUpstream) dropSessions() {
	f.mu.Lock()
	sessions := f.sessions
	f.sessions = nil
	f.mu.Unlock()
	for _, ss := range sessions {
		ss.Close()
	}
}

// testOptions are upstream options for tests: quick retries.
func testOptions(log *slog.Logger) UpstreamOptions {
	return UpstreamOptions{Logger: log, minBackoff: time.Millisecond, maxBackoff: 5 * time.Millisecond}
}

// startSettled starts upstreams for a, closes them when the test ends, and
// waits until each has connected or failed.
func startSettled(t testing.TB, a *app.App, servers []config.MCPServer, opts UpstreamOptions) *Upstreams {
	t.Helper()
	ups, err := startUpstreams(context.Background(), a.Registry, servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ups.Close() })
	if err := ups.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ups
}

// startFake makes f the upstream "up" of the default scope of a, and waits
// for its first connection.
func startFake(t *testing.T, a *app.App, f *fakeUpstream, timeout time.Duration) *Upstreams {
	t.Helper()
	opts := testOptions(discard)
	opts.dial = f.dial
	ups := startSettled(t, a, []config.MCPServer{{Name: "up", Scope: "default", Timeout: config.Duration(timeout)}}, opts)
	return ups
}

// execute calls a tool directly through the pipeline.
func execute(a *app.App, name, args string) *runtime.Result {
	return a.Runtime.Execute(context.Background(), runtime.Request{CallID: "t1", Name: name, Arguments: args, Scope: "default"})
}

func TestUpstreamRegistration(t *testing.T) {
	a := newApp(t)
	ups := startFake(t, a, newFakeUpstream(), 0)
	v, err := a.Registry.View("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"up.add", "up.say", "up.fail", "up.lies", "up.block"} {
		if !v.HasSDKTool(name) {
			t.Errorf("%s not registered: %v", name, v.Names())
		}
	}
	if v.HasSDKTool("up.bad_schema") {
		t.Error("a tool whose schema does not compile was registered")
	}
	st := ups.States()[0]
	if st.State != StateReady || st.Tools != 5 || len(st.Rejected) != 1 || st.Rejected[0].Tool != "bad_schema" || !strings.Contains(st.Rejected[0].Reason, "parameters") {
		t.Errorf("state %+v", st)
	}
	if st.Server == nil || st.Server.Name != "fake" || !slices.Contains(st.Server.Capabilities, "tools") {
		t.Errorf("server info %+v", st.Server)
	}
	add, _ := v.Get("up.add")
	if add.Description() != "Adds two numbers." || !add.ValidatesArgs() || add.Timeout() != config.DefaultMCPTimeout || !add.Hints().ReadOnly {
		t.Errorf("up.add: description %q, validates %v, timeout %v, hints %+v", add.Description(), add.ValidatesArgs(), add.Timeout(), add.Hints())
	}
	if !strings.Contains(string(add.Parameters()), `"a":{"type":"number"}`) || !strings.Contains(string(add.OutputSchema()), `"sum":{"type":"number"}`) {
		t.Errorf("up.add schemas are not the upstream's:\n%s\n%s", add.Parameters(), add.OutputSchema())
	}
	if !add.ConcurrencySafe(frozen.MustParse(`{"a":1,"b":2}`)) {
		t.Error("a readOnlyHint tool should be concurrency-safe")
	}
	say, _ := v.Get("up.say")
	if string(say.OutputSchema()) != mustCompact(t, contentArraySchema) {
		t.Errorf("up.say has no output schema upstream, so its value is content: got %s", say.OutputSchema())
	}
	if say.ConcurrencySafe(frozen.MustParse(`{}`)) {
		t.Error("a tool without readOnlyHint should be exclusive")
	}
	// The SDK shows the exotic names as bracket bindings.
	if decl := string(sdkTS(t, a)); !strings.Contains(decl, `"up.add"`) {
		t.Errorf("the SDK declarations lack up.add:\n%s", decl)
	}
}

func mustCompact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestUpstreamCalls(t *testing.T) {
	a := newApp(t)
	startFake(t, a, newFakeUpstream(), 0)
	tests := []struct {
		name, tool, args string
		code             registry.Code
		value            string // on success
		message          string // contained in the failure message
	}{
		{"structured content is the value", "up.add", `{"a":2,"b":3}`, "", `{"sum":5}`, ""},
		{"content is the value without an output schema", "up.say", `{"name":"ann"}`, "",
			`[{"type":"text","text":"hello ann"},{"type":"image","data":"iVBORw==","mimeType":"image/png"}]`, ""},
		{"isError is a tool failure", "up.fail", `{}`, registry.CodeToolFailed, "", "the note is locked"},
		{"a structured value against the schema", "up.lies", `{}`, registry.CodeInvalidToolOutput, "", "up.lies"},
		{"arguments are checked against the input schema first", "up.add", `{"a":"x"}`, registry.CodeInvalidArgs, "", "/a"},
		{"arguments must be an object", "up.add", `[1]`, registry.CodeInvalidArgs, "", "expected object"},
		{"an unknown upstream tool", "up.nothing", `{}`, registry.CodeUnknownTool, "", "up.nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := execute(a, tt.tool, tt.args)
			if res.Code() != tt.code {
				t.Fatalf("code %q, want %q: %+v %v", res.Code(), tt.code, res.Error(), res.Content())
			}
			if tt.code == "" && res.Value().String() != tt.value {
				t.Errorf("value %s, want %s", res.Value(), tt.value)
			}
			if tt.code != "" && !strings.Contains(res.Error().Message, tt.message) {
				t.Errorf("message %q lacks %q", res.Error().Message, tt.message)
			}
		})
	}
	t.Run("content renders as text and image", func(t *testing.T) {
		content := execute(a, "up.say", `{"name":"bo"}`).Content()
		if len(content) != 2 || content[0].Text != "hello bo" || !content[1].IsImage() || content[1].MimeType != "image/png" {
			t.Errorf("content %+v", content)
		}
	})
}

func TestUpstreamTimeoutAndCancellation(t *testing.T) {
	a := newApp(t)
	f := newFakeUpstream()
	startFake(t, a, f, 50*time.Millisecond)
	t.Run("timeout", func(t *testing.T) {
		res := execute(a, "up.block", `{}`)
		if res.Code() != registry.CodeToolTimeout {
			t.Fatalf("code %q, want TOOL_TIMEOUT: %+v", res.Code(), res.Error())
		}
		<-f.blockStarted
		if err := <-f.blockCancelled; !errors.Is(err, context.Canceled) {
			t.Errorf("upstream handler saw %v, want its call cancelled", err)
		}
	})
	t.Run("caller cancellation", func(t *testing.T) {
		a2 := newApp(t)
		f2 := newFakeUpstream()
		startFake(t, a2, f2, 0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *runtime.Result, 1)
		go func() {
			done <- a2.Runtime.Execute(ctx, runtime.Request{CallID: "t2", Name: "up.block", Arguments: `{}`, Scope: "default"})
		}()
		<-f2.blockStarted
		cancel()
		if err := <-f2.blockCancelled; !errors.Is(err, context.Canceled) {
			t.Errorf("upstream handler saw %v, want its call cancelled", err)
		}
		if res := <-done; res.Code() != registry.CodeAborted {
			t.Errorf("code %q, want ABORTED", res.Code())
		}
	})
}

func TestUpstreamListChanged(t *testing.T) {
	a := newApp(t)
	f := newFakeUpstream()
	startFake(t, a, f, 0)
	before := sdkVersion(t, a)
	sdk.AddTool(f.srv, &sdk.Tool{Name: "late", Description: "Added later."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, addOut, error) {
			return nil, addOut{Sum: 7}, nil
		})
	testkit.Eventually(t, "up.late to be registered", func() bool { return sdkVersion(t, a) != before })
	if res := execute(a, "up.late", `{}`); res.Value().String() != `{"sum":7}` {
		t.Fatalf("up.late: %s %+v", res.Value(), res.Error())
	}
	f.srv.RemoveTools("fail")
	testkit.Eventually(t, "up.fail to be unregistered", func() bool {
		v, _ := a.Registry.View("default")
		return !v.HasSDKTool("up.fail")
	})
}

func TestUpstreamReconnects(t *testing.T) {
	a := newApp(t)
	f := newFakeUpstream()
	ups := startFake(t, a, f, 0)
	if res := execute(a, "up.add", `{"a":1,"b":1}`); res.IsError() {
		t.Fatalf("before the crash: %+v", res.Error())
	}
	gen := generation(t, a)
	f.refuse.Store(true)
	f.dropSessions()
	// Reconnecting fails, so the upstream stays down: its tools stay
	// registered and fail clearly, with the reason.
	testkit.Eventually(t, "the upstream to fail", func() bool { return ups.States()[0].State == StateFailed })
	res := execute(a, "up.add", `{"a":1,"b":1}`)
	if res.Code() != registry.CodeToolFailed || !strings.Contains(res.Error().Message, "upstream up is unavailable") || !strings.Contains(res.Error().Message, "connection refused") {
		t.Errorf("while down: %q %q", res.Code(), res.Error().Message)
	}
	if ups.Ready() {
		t.Error("Ready while the upstream is down")
	}
	f.refuse.Store(false)
	testkit.Eventually(t, "calls to succeed again", func() bool { return !execute(a, "up.add", `{"a":1,"b":1}`).IsError() })
	// (A call may use the new session while its tools are still being
	// listed, before the state says ready.)
	testkit.Eventually(t, "the state to say ready", func() bool { return ups.States()[0].State == StateReady })
	if got := generation(t, a); got != gen {
		t.Errorf("reconnecting to the same tools changed the registry (generation %d → %d)", gen, got)
	}
	st := ups.States()[0]
	if st.State != StateReady || st.Restarts != 1 || st.LastError != "" || !ups.Ready() {
		t.Errorf("after the reconnection: %+v", st)
	}
}

// TestUpstreamCallWaitsForReconnection: a call made while a reconnection
// is under way waits for it rather than failing.
func TestUpstreamCallWaitsForReconnection(t *testing.T) {
	a := newApp(t)
	f := newFakeUpstream()
	f.gate = make(chan struct{})
	ups := startFake(t, a, f, 0)
	f.dropSessions()
	testkit.Eventually(t, "the reconnection to start", func() bool {
		st := ups.States()[0]
		return st.State == StateRestarting && f.dials.Load() >= 2
	})
	done := make(chan *runtime.Result, 1)
	go func() { done <- execute(a, "up.add", `{"a":2,"b":2}`) }()
	close(f.gate)
	if res := <-done; res.IsError() || res.Value().String() != `{"sum":4}` {
		t.Fatalf("the call across the reconnection: %s %+v", res.Value(), res.Error())
	}
}

func TestUpstreamStop(t *testing.T) {
	a := newApp(t)
	ups := startFake(t, a, newFakeUpstream(), 0)
	stop := func() { ups.Close() }
	stop()
	if st := ups.States()[0]; st.State != StateStopped {
		t.Errorf("after Close: %+v", st)
	}
	v, err := a.Registry.View("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range v.Names() {
		if strings.HasPrefix(n, "up.") {
			t.Errorf("%s still registered after stop", n)
		}
	}
	stop() // idempotent
}

func TestUpstreamUnreachableAtStart(t *testing.T) {
	a := newApp(t)
	var dials atomic.Int32
	var logs testkit.Logs
	opts := testOptions(logs.Logger())
	opts.dial = func(context.Context, config.MCPServer) (sdk.Transport, error) {
		dials.Add(1)
		return nil, errors.New("connection refused")
	}
	ups, err := startUpstreams(context.Background(), a.Registry, []config.MCPServer{{Name: "gone", Scope: "default"}}, opts)
	if err != nil {
		t.Fatalf("an unreachable server must not fail the start: %v", err)
	}
	defer ups.Close()
	testkit.Eventually(t, "retries", func() bool { return dials.Load() >= 5 })
	st := ups.States()[0]
	if st.State != StateFailed || st.LastError != "connection refused" || st.Attempts < 4 || st.NextRetry == nil {
		t.Errorf("state %+v", st)
	}
	ups.Close()
	logged := logs.String()
	if n := strings.Count(logged, "unavailable"); n != 1 {
		t.Errorf("the failure was logged %d times in %d attempts, want once:\n%s", n, dials.Load(), logged)
	}
}

func TestStartUpstreamsRejects(t *testing.T) {
	a := newApp(t)
	tests := []struct {
		name   string
		server config.MCPServer
		want   string
	}{
		{"unknown scope", config.MCPServer{Name: "x", Command: []string{"true"}, Scope: "nowhere"}, `unknown scope "nowhere"`},
		{"no command or url", config.MCPServer{Name: "x"}, "exactly one of command and url"},
		{"both", config.MCPServer{Name: "x", Command: []string{"true"}, URL: "http://127.0.0.1:1/mcp"}, "exactly one of command and url"},
		{"no name", config.MCPServer{Command: []string{"true"}}, "a name is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := StartUpstreams(context.Background(), a, []config.MCPServer{tt.server}, UpstreamOptions{Logger: discard})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestUpstreamCommandThatExits(t *testing.T) {
	a := newApp(t)
	var logs testkit.Logs
	log := logs.Logger()
	opts := testOptions(log)
	opts.minBackoff = time.Hour
	ups, err := startUpstreams(context.Background(), a.Registry,
		[]config.MCPServer{{Name: "broken", Scope: "default", Command: []string{"sh", "-c", "echo starting up >&2; exit 3"}}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := ups.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := ups.States()[0]; st.State != StateFailed || !strings.Contains(st.LastError, "exit status 3") {
		t.Errorf("state %+v", st)
	}
	ups.Close()
	logged := logs.String()
	for _, want := range []string{"upstream=broken", "starting up", "unavailable"} {
		if !strings.Contains(logged, want) {
			t.Errorf("logs lack %q:\n%s", want, logged)
		}
	}
}

func TestLineLogger(t *testing.T) {
	var buf bytes.Buffer
	l := &lineLogger{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey {
			return slog.Attr{}
		}
		return a
	}}))}
	for _, chunk := range []string{"one\ntw", "o\r\n\nthree", strings.Repeat("x", maxLine+2)} {
		if n, err := l.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	want := "line=one\nline=two\nline=three" + strings.Repeat("x", maxLine-5) + "\n"
	if buf.String() != want {
		t.Errorf("logged\n%q\nwant\n%q", buf.String(), want)
	}
	if string(l.buf) != "xxxxxxx" {
		t.Errorf("buffered %q", l.buf)
	}
}

func sdkTS(t *testing.T, a *app.App) []byte {
	t.Helper()
	v, err := a.Registry.View("default")
	if err != nil {
		t.Fatal(err)
	}
	return sdkgen.TypeScript(bridge.SDK(v))
}

func generation(t *testing.T, a *app.App) uint64 {
	t.Helper()
	v, err := a.Registry.View("default")
	if err != nil {
		t.Fatal(err)
	}
	return v.Generation()
}
