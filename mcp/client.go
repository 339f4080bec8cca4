package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// Defaults of the upstream side.
const (
	// DefaultUpstreamTimeout bounds one upstream call (and one connection
	// attempt) when MCPServer.Timeout is zero.
	DefaultUpstreamTimeout = 60 * time.Second
	// upstreamProtocol is the protocol version offered to upstream servers:
	// the newest one with the initialize handshake, which every SDK speaks.
	upstreamProtocol = "2025-11-25"
	// minHandshakeTimeout is the least time a connection attempt, or a
	// tools/list, is given, whatever the call timeout: starting a server can
	// take longer than one of its calls.
	minHandshakeTimeout = 30 * time.Second
	// stableAfter is how long a connection must have lasted for the
	// reconnect backoff to start again from its minimum.
	stableAfter = 30 * time.Second
)

// upstreamOptions tune the upstream side; the zero value is what
// StartUpstreams uses.
type upstreamOptions struct {
	Logger     *slog.Logger
	Version    string
	MinBackoff time.Duration // first reconnect delay; default 250ms
	MaxBackoff time.Duration // the delay doubles up to this; default 30s
	// dial, when set, replaces starting the command or connecting to the URL.
	dial func(ctx context.Context, s config.MCPServer) (sdk.Transport, error)
}

// StartUpstreams makes the configured MCP servers tool sources. For each
// entry it starts the stdio server (Command, with Env added to this
// process's environment) or connects to the streamable-HTTP URL, lists its
// tools, and registers each in the entry's scope ("" means default) as
// "<name>.<tool>": its inputSchema verbatim (not enforced: a raw
// registration), and its outputSchema when it has one, in which case the
// binding's value is the call's structuredContent; without one the value is
// the call's content as an array of blocks. Calls carry the caller's
// cancellation to the upstream (notifications/cancelled) and are bounded by
// the entry's Timeout (default DefaultUpstreamTimeout; TOOL_TIMEOUT). An
// upstream isError result is a TOOL_FAILED failure whose message is the
// result's text, which programs see as a ToolCallError.
//
// An upstream that crashes or disconnects is restarted or reconnected with
// exponential backoff; meanwhile its tools stay registered and fail at once
// with "upstream <name> is unavailable: <reason>". Its
// notifications/tools/list_changed makes codemode list again and register
// what changed, which changes the scope's view (and so the SDK and its
// ETag); a reconnection that finds the same tools changes nothing.
//
// StartUpstreams returns once every server has been tried once (a server
// that could not be reached is logged and retried in the background). The
// upstreams run until stop is called or ctx ends; stop unregisters their
// tools, closes the connections and waits for stdio servers to exit. It
// fails, starting nothing, for an entry whose scope does not exist or that
// names neither a command nor a URL.
func StartUpstreams(ctx context.Context, a *app.App, servers []config.MCPServer, logger *slog.Logger) (stop func(), err error) {
	return startUpstreams(ctx, a.Registry, servers, upstreamOptions{Logger: logger})
}

func startUpstreams(ctx context.Context, reg *registry.Registry, servers []config.MCPServer, opts upstreamOptions) (stop func(), err error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 250 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(30*time.Second, opts.MinBackoff)
	}
	ups := make([]*upstream, 0, len(servers))
	for i, s := range servers {
		scope := s.Scope
		if scope == "" {
			scope = config.DefaultScope
		}
		switch {
		case s.Name == "":
			return nil, fmt.Errorf("mcp_servers[%d]: a name is required", i)
		case !reg.HasScope(scope):
			return nil, fmt.Errorf("mcp_servers[%d] (%s): unknown scope %q", i, s.Name, scope)
		case (len(s.Command) == 0) == (s.URL == "") && opts.dial == nil:
			return nil, fmt.Errorf("mcp_servers[%d] (%s): give exactly one of command and url", i, s.Name)
		}
		timeout := s.Timeout.Std()
		if timeout <= 0 {
			timeout = DefaultUpstreamTimeout
		}
		ups = append(ups, &upstream{
			cfg: s, scope: scope, timeout: timeout, reg: reg, opts: opts,
			log:     opts.Logger.With("upstream", s.Name),
			refresh: make(chan struct{}, 1),
			tools:   map[string]*registration{},
			down:    errors.New("not connected yet"),
		})
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	tried := make(chan struct{}, len(ups))
	for _, u := range ups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u.run(runCtx, func() { tried <- struct{}{} })
		}()
	}
	stopCtx := context.AfterFunc(ctx, cancel)
	var once sync.Once
	stop = func() {
		once.Do(func() {
			stopCtx()
			cancel()
			wg.Wait()
			for _, u := range ups {
				u.unregisterAll()
			}
		})
	}
	for range ups {
		select {
		case <-tried:
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		}
	}
	return stop, nil
}

// upstream is one configured MCP server and the tools it contributes.
type upstream struct {
	cfg     config.MCPServer
	scope   string
	timeout time.Duration
	reg     *registry.Registry
	opts    upstreamOptions
	log     *slog.Logger
	refresh chan struct{} // signalled by notifications/tools/list_changed

	mu      sync.Mutex
	session *sdk.ClientSession // nil while unavailable; guarded by mu
	down    error              // why it is unavailable; guarded by mu

	// tools are the registrations, by upstream tool name. Only the run
	// goroutine touches them (and stop, after it ended).
	tools map[string]*registration
}

type registration struct {
	fingerprint string
	unregister  func()
}

// run connects, serves and reconnects until ctx ends. tried is called once,
// after the first attempt.
func (u *upstream) run(ctx context.Context, tried func()) {
	backoff := u.opts.MinBackoff
	for first := true; ; first = false {
		cs, err := u.connect(ctx)
		if err == nil {
			// The session is current before the tools appear, so no call
			// can find a tool registered but its upstream not connected.
			u.setSession(cs)
			if err = u.refreshTools(ctx, cs); err != nil {
				cs.Close()
			}
		}
		if first {
			tried()
		}
		if ctx.Err() != nil {
			if err == nil {
				cs.Close()
			}
			u.setDown(nil, errors.New("stopped"))
			return
		}
		if err == nil {
			u.log.Info("upstream MCP server connected", "tools", len(u.tools))
			started := time.Now()
			err = u.serve(ctx, cs)
			u.setDown(cs, err)
			if ctx.Err() != nil {
				return
			}
			if time.Since(started) >= stableAfter {
				backoff = u.opts.MinBackoff
			}
		} else {
			u.setDown(nil, err)
		}
		u.log.Warn("upstream MCP server unavailable; retrying", "error", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, u.opts.MaxBackoff)
	}
}

// serve waits for the session to end, listing again whenever the server
// says its tools changed. It returns why the session ended.
func (u *upstream) serve(ctx context.Context, cs *sdk.ClientSession) error {
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	for {
		select {
		case <-ctx.Done():
			cs.Close()
			<-done
			return ctx.Err()
		case err := <-done:
			if err == nil {
				err = errors.New("the connection closed")
			}
			return err
		case <-u.refresh:
			if err := u.refreshTools(ctx, cs); err != nil {
				cs.Close()
				<-done
				return fmt.Errorf("list tools: %w", err)
			}
		}
	}
}

// connect starts or dials the server and completes the MCP handshake.
func (u *upstream) connect(ctx context.Context) (*sdk.ClientSession, error) {
	t, err := u.transport(ctx)
	if err != nil {
		return nil, err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: ServerName, Version: u.opts.Version}, &sdk.ClientOptions{
		Logger:       quiet(u.log),
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case u.refresh <- struct{}{}:
			default: // a refresh is already due
			}
		},
	})
	cctx, cancel := context.WithTimeout(ctx, max(u.timeout, minHandshakeTimeout))
	defer cancel()
	cs, err := client.Connect(cctx, t, &sdk.ClientSessionOptions{ProtocolVersion: upstreamProtocol})
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return cs, nil
}

func (u *upstream) transport(ctx context.Context) (sdk.Transport, error) {
	if u.opts.dial != nil {
		return u.opts.dial(ctx, u.cfg)
	}
	if u.cfg.URL != "" {
		return &sdk.StreamableClientTransport{Endpoint: u.cfg.URL}, nil
	}
	cmd := exec.Command(u.cfg.Command[0], u.cfg.Command[1:]...)
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(u.cfg.Env))
	for k := range u.cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+u.cfg.Env[k])
	}
	cmd.Stderr = &lineLogger{log: u.log}
	cmd.WaitDelay = 2 * time.Second // a grandchild holding stderr must not block Wait
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
}

// refreshTools lists the server's tools and brings the registrations in
// line: new and changed tools are (re)registered, vanished ones removed,
// unchanged ones left alone. A tool the registry refuses (a schema it
// cannot compile, a name taken) is logged and skipped.
func (u *upstream) refreshTools(ctx context.Context, cs *sdk.ClientSession) error {
	lctx, cancel := context.WithTimeout(ctx, max(u.timeout, minHandshakeTimeout))
	defer cancel()
	var tools []*sdk.Tool
	for t, err := range cs.Tools(lctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
	}
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		def, fp, err := u.definition(t)
		if err != nil {
			u.log.Warn("upstream tool skipped", "tool", t.Name, "error", err)
			u.unregister(t.Name)
			continue
		}
		if r, ok := u.tools[t.Name]; ok && r.fingerprint == fp {
			continue
		}
		tool, err := registry.Raw(def)
		if err != nil {
			u.log.Warn("upstream tool skipped", "tool", t.Name, "error", err)
			u.unregister(t.Name)
			continue
		}
		u.unregister(t.Name)
		remove, err := u.reg.Register(u.scope, tool)
		if err != nil {
			u.log.Warn("upstream tool skipped", "tool", t.Name, "error", err)
			continue
		}
		u.tools[t.Name] = &registration{fingerprint: fp, unregister: remove}
	}
	for name := range u.tools {
		if !seen[name] {
			u.unregister(name)
		}
	}
	return nil
}

func (u *upstream) unregister(name string) {
	if r, ok := u.tools[name]; ok {
		r.unregister()
		delete(u.tools, name)
	}
}

func (u *upstream) unregisterAll() {
	for name := range u.tools {
		u.unregister(name)
	}
}

// definition is the registry definition of an upstream tool and a
// fingerprint of everything it is built from.
func (u *upstream) definition(t *sdk.Tool) (registry.RawDefinition, string, error) {
	name := u.cfg.Name + "." + t.Name
	params, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		params = []byte(`{"type":"object"}`)
	}
	structured := t.OutputSchema != nil
	output := []byte(contentArraySchema)
	if structured {
		if output, err = json.Marshal(t.OutputSchema); err != nil {
			return registry.RawDefinition{}, "", fmt.Errorf("output schema: %w", err)
		}
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	fp, err := json.Marshal([]any{desc, json.RawMessage(params), json.RawMessage(output), structured, readOnly})
	if err != nil {
		return registry.RawDefinition{}, "", err
	}
	def := registry.RawDefinition{
		Name:        name,
		Description: desc,
		Parameters:  params,
		Output:      output,
		Behavior: registry.Behavior{
			Execute: u.execute(name, t.Name, structured),
			Timeout: u.timeout,
		},
	}
	if !structured {
		def.Render = renderContentValue
	}
	if readOnly {
		// A read-only tool has no effects to order, so its calls may overlap.
		def.IsConcurrencySafe = func(frozen.Value) bool { return true }
	}
	return def, string(fp), nil
}

// execute is the body of an upstream tool: one tools/call on the current
// session, under the caller's context.
func (u *upstream) execute(name, tool string, structured bool) registry.ExecuteFunc {
	return func(ctx context.Context, _ registry.Exec, args frozen.Value) (any, error) {
		if args.Kind() != "object" {
			return nil, registry.Errorf(registry.CodeInvalidArgs, "%s takes a JSON object of arguments, got %s", name, args.Kind())
		}
		cs, down := u.current()
		if cs == nil {
			return nil, u.unavailable(down)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: json.RawMessage(args.Bytes())})
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w", name, context.Cause(ctx))
			}
			var rpcErr *jsonrpc.Error
			switch {
			case errors.As(err, &rpcErr):
				return nil, registry.Errorf(registry.CodeToolFailed, "%s: %s", name, rpcErr.Message)
			case transportFailure(err):
				u.broken(cs, err)
				return nil, u.unavailable(err)
			}
			// Anything else (a result that does not decode) is this call's
			// failure; a dead connection is noticed by run all the same.
			return nil, registry.Errorf(registry.CodeToolFailed, "%s: %v", name, err)
		}
		if res.IsError {
			return nil, &registry.Error{Code: registry.CodeToolFailed, Message: errorText(res.Content, name)}
		}
		if !structured {
			return contentValue(res.Content), nil
		}
		if res.StructuredContent == nil {
			return nil, registry.Errorf(registry.CodeInvalidToolOutput, "%s declares an output schema but returned no structuredContent", name)
		}
		return res.StructuredContent, nil
	}
}

// transportFailure reports whether a call failed because the connection
// did (as opposed to a reply that does not decode).
func transportFailure(err error) bool {
	var netErr *net.OpError
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &netErr)
}

func (u *upstream) unavailable(why error) error {
	return registry.Errorf(registry.CodeToolFailed, "upstream %s is unavailable: %v", u.cfg.Name, why)
}

func (u *upstream) current() (*sdk.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.session, u.down
}

func (u *upstream) setSession(cs *sdk.ClientSession) {
	u.mu.Lock()
	u.session, u.down = cs, nil
	u.mu.Unlock()
}

// setDown marks the upstream unavailable for a reason. With cs set, only
// while cs is still the current session.
func (u *upstream) setDown(cs *sdk.ClientSession, why error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if cs != nil && u.session != cs && u.session != nil {
		return
	}
	u.session, u.down = nil, why
}

// broken reacts to a transport failure seen by a call: the session is
// dropped at once (later calls fail fast) and closed, which makes run
// reconnect.
func (u *upstream) broken(cs *sdk.ClientSession, err error) {
	u.mu.Lock()
	if u.session != cs {
		u.mu.Unlock()
		return
	}
	u.session, u.down = nil, err
	u.mu.Unlock()
	u.log.Warn("upstream MCP call failed; reconnecting", "error", err)
	go cs.Close()
}

// lineLogger logs what a stdio server writes to its stderr, a line at a
// time. exec copies stderr from one goroutine, so it needs no lock.
type lineLogger struct {
	log *slog.Logger
	buf []byte
}

// maxLine bounds a buffered stderr line; longer lines are logged in parts.
const maxLine = 8 << 10

func (l *lineLogger) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i, skip := bytes.IndexByte(l.buf, '\n'), 1
		if i < 0 {
			if len(l.buf) < maxLine {
				return len(p), nil
			}
			i, skip = maxLine, 0
		}
		if line := bytes.TrimRight(l.buf[:i], "\r"); len(line) > 0 {
			l.log.Info("upstream stderr", "line", string(line))
		}
		l.buf = l.buf[i+skip:]
	}
}
