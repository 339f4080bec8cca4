package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/session"
)

// Protocol versions the Go tests drive the server with: the handshake
// every SDK speaks today, and the go-sdk's newest (sessionless) protocol.
const (
	legacyProtocol = "2025-11-25"
	latestProtocol = "" // the go-sdk client's default
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// newApp builds an app with an in-memory store and the demo tools in
// "default" (mode both), plus "coder" (code) and "plain" (native) below it.
func newApp(t testing.TB) *app.App {
	t.Helper()
	cfg := config.Default()
	cfg.Scopes = map[string]config.ScopeConfig{
		"coder": {Parent: "default", Mode: "code"},
		"plain": {Parent: "default", Mode: "native"},
	}
	a, err := app.New(context.Background(), cfg, app.Options{Store: session.NewMemory(), Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// newServer serves a scope of a over MCP for the test's lifetime.
func newServer(t testing.TB, a *app.App, scope string) *Server {
	t.Helper()
	s, err := NewServer(a, scope, Options{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// clientOptions adjust connect.
type clientOptions struct {
	protocol    string
	listChanged func()
}

// connect opens a go-sdk client session to s over in-memory transports.
func connect(t testing.TB, s *Server, o clientOptions) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st); err != nil {
		t.Fatal(err)
	}
	opts := &sdk.ClientOptions{Logger: discard}
	if o.listChanged != nil {
		opts.ToolListChangedHandler = func(context.Context, *sdk.ToolListChangedRequest) { o.listChanged() }
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: o.protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// toolNames lists a session's tools by name.
func toolNames(t testing.TB, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(res.Tools))
	for i, tool := range res.Tools {
		names[i] = tool.Name
	}
	return names
}

// call calls a tool with JSON arguments.
func call(t testing.TB, cs *sdk.ClientSession, name, args string) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// text joins a result's text blocks.
func text(res *sdk.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			if s != "" {
				s += "\n"
			}
			s += tc.Text
		}
	}
	return s
}

// errorCode is the codemode/error code in a result's _meta ("" when none).
func errorCode(res *sdk.CallToolResult) string {
	m, _ := res.Meta[metaPrefix+"error"].(map[string]any)
	code, _ := m["code"].(string)
	return code
}

// blocker is a tool whose calls wait for cancellation, reporting when they
// start and how they end.
type blocker struct {
	started   chan struct{}
	cancelled chan error
}

func registerBlocker(t testing.TB, a *app.App, scope string) *blocker {
	t.Helper()
	b := &blocker{started: make(chan struct{}, 8), cancelled: make(chan error, 8)}
	tool := registry.MustDefine(registry.Definition{
		Name:        "test_block",
		Description: "Waits until cancelled.",
		Output:      schema.Object(nil, nil, false),
		Behavior: registry.Behavior{
			IsConcurrencySafe: func(frozen.Value) bool { return true },
			Execute: func(ctx context.Context, _ registry.Exec, _ frozen.Value) (any, error) {
				b.started <- struct{}{}
				select {
				case <-ctx.Done():
					b.cancelled <- ctx.Err()
					return nil, ctx.Err()
				case <-time.After(time.Minute):
					return map[string]any{}, nil
				}
			},
		},
	})
	remove, err := a.Registry.Register(scope, tool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	return b
}

// registerRaw registers a raw tool returning value under an output schema.
func registerRaw(t testing.TB, a *app.App, scope, name, output string, value any) (remove func()) {
	t.Helper()
	tool, err := registry.Raw(registry.RawDefinition{
		Name:        name,
		Description: "A raw test tool.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"anything":true}}`),
		Output:      json.RawMessage(output),
		Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
			return value, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	remove, err = a.Registry.Register(scope, tool)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	return remove
}

// signal is a channel-backed counter for notifications.
type signal struct {
	mu sync.Mutex
	n  int
	ch chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{}, 64)} }

func (s *signal) fire() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	s.ch <- struct{}{}
}

// wait waits for the next notification, failing the test after a generous
// bound (a hang guard, not a timing assertion).
func (s *signal) wait(t testing.TB, what string) {
	t.Helper()
	select {
	case <-s.ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
	}
}

// recordNotices returns a context whose notices are recorded, and a func
// that returns those recorded so far.
func recordNotices() (ctx context.Context, recorded func() []registry.Notice) {
	var mu sync.Mutex
	var notices []registry.Notice
	ctx = registry.WithNotifier(context.Background(), registry.NotifierFunc(func(_ context.Context, n registry.Notice) {
		mu.Lock()
		notices = append(notices, n)
		mu.Unlock()
	}))
	return ctx, func() []registry.Notice {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(notices)
	}
}
