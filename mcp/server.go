package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
)

// ServerName is the serverInfo.name codemode reports to MCP clients.
const ServerName = "codemode"

// Options configure a Server. The zero value works.
type Options struct {
	// Logger receives the server's log lines. Default: the App's logger.
	Logger *slog.Logger
	// Version is reported as serverInfo.version. Default "dev".
	Version string

	// Upstreams, when set, are awaited before the first tools/list answers
	// (each for at most its connect_timeout), so that a client that lists
	// once at start sees their tools.
	Upstreams *Upstreams

	// sessionID mints MCP session ids (the HTTP handler binds them to a
	// scope); nil keeps the SDK's default.
	sessionID func() string
	// pollAfter, when positive, closes the SSE stream of a tools/call over
	// streamable HTTP that still runs after this long (see
	// HandlerOptions.StreamPollAfter).
	pollAfter time.Duration
	// admission, when set, is claimed by every tools/call (see
	// HTTPHandler.SetAdmission).
	admission Admission
	// sessions, when set, bounds the sessions open at once: an initialize
	// beyond it is refused and its session closed.
	sessions *sessionCap
}

// Server is codemode as an MCP server for one scope. Its tool list is the
// scope's model tools (View.ModelTools: the native tools, run_code only in
// code mode, both in both), kept in step with the registry: every change
// that alters the list sends notifications/tools/list_changed. Every
// tools/call, listed or not, runs as a one-call step of the agent loop in
// the codemode session bound to the MCP session (created on its first call),
// so it passes the whole pipeline and is logged; calls of one MCP session
// run one at a time, in arrival order, as steps of a session do. The
// request's context is the run's: a client's notifications/cancelled stops
// it.
//
// A Server serves any number of MCP sessions at once (Run, Connect, or the
// HTTP Handler). Close stops following the registry.
type Server struct {
	app       *app.App
	scope     string
	log       *slog.Logger
	mcp       *sdk.Server
	stop      func() // removes the registry listener
	upstreams *Upstreams
	pollAfter time.Duration
	admission Admission
	sessions  *sessionCap

	syncMu sync.Mutex           // serializes sync
	synced bool                 // the first sync is done; guarded by syncMu
	listMu sync.RWMutex         // guards listed
	listed map[string]listEntry // the tools the clients were last shown, by name

	mu       sync.Mutex
	bindings map[*sdk.ServerSession]*binding // guarded by mu
}

// listEntry is one listed tool.
type listEntry struct {
	tool        *sdk.Tool
	fingerprint string // a hash of its JSON, to tell changed tools from unchanged ones
	wrapped     bool   // its outputSchema is the {"value"} envelope
	contentOnly bool   // listed without an outputSchema: its value is its content
}

// binding ties one MCP session to its codemode session.
type binding struct {
	mu        sync.Mutex
	sessionID string // the codemode session; "" until the first call; guarded by mu
	calls     int    // calls made, for call ids; guarded by mu
}

// NewServer returns the MCP server for a scope of the app. It fails for a
// scope the registry does not know (app.ErrUnknownScope).
func NewServer(a *app.App, scope string, opts Options) (*Server, error) {
	if scope == "" {
		scope = config.DefaultScope
	}
	if !a.Registry.HasScope(scope) {
		return nil, fmt.Errorf("%w %q", app.ErrUnknownScope, scope)
	}
	log := opts.Logger
	if log == nil {
		log = a.Logger
	}
	if log == nil {
		log = slog.Default()
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := &Server{app: a, scope: scope, log: log.With("mcp_scope", scope), upstreams: opts.Upstreams, pollAfter: opts.pollAfter, admission: opts.admission, sessions: opts.sessions, listed: map[string]listEntry{}, bindings: map[*sdk.ServerSession]*binding{}}
	s.mcp = sdk.NewServer(&sdk.Implementation{Name: ServerName, Version: version}, &sdk.ServerOptions{
		Logger:       quiet(s.log),
		GetSessionID: opts.sessionID,
		// Advertise tools (and their list_changed) even while the list is empty.
		Capabilities:       &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
		InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) { s.bind(req.Session) },
	})
	// Calls of tools the client was not shown (an unknown name, a native
	// tool in code mode) still go through the pipeline, which answers them
	// as UNKNOWN_TOOL results that name the way back.
	s.mcp.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if ss, ok := req.GetSession().(*sdk.ServerSession); ok && s.sessions != nil {
				if method == "initialize" {
					tenant := ""
					if extra := req.GetExtra(); extra != nil && extra.Header != nil {
						tenant = extra.Header.Get(tenantHeader)
					}
					if err := s.sessions.take(ss, tenant); err != nil {
						go ss.Close() // not while its own request is being handled
						return nil, tooManySessions(err)
					}
				}
				defer s.sessions.busy(ss)()
			}
			if r, ok := req.(*sdk.CallToolRequest); ok && method == "tools/call" && r.Params != nil && !s.isListed(r.Params.Name) {
				res, err := s.call(ctx, r)
				if err != nil {
					return nil, err // not a typed nil in the interface
				}
				return res, nil
			}
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			if s.upstreams != nil {
				// Bounded by each upstream's connect_timeout; a client that
				// gives up first just ends the wait.
				_ = s.upstreams.Settle(ctx)
			}
			res, err := next(ctx, method, req)
			if list, ok := res.(*sdk.ListToolsResult); ok && err == nil {
				first := true
				if r, ok := req.(*sdk.ListToolsRequest); ok && r.Params != nil && r.Params.Cursor != "" {
					first = false
				}
				s.runCodeFirst(list, first)
			}
			return res, err
		}
	})
	s.sync()
	s.stop = a.Registry.OnChange(s.sync)
	return s, nil
}

// Scope is the scope the server serves.
func (s *Server) Scope() string { return s.scope }

// MCP is the underlying go-sdk server (for transports this package does
// not wrap). Do not add or remove tools on it: the registry owns the list.
func (s *Server) MCP() *sdk.Server { return s.mcp }

// Run serves one MCP session over t until the client disconnects or ctx
// ends. A client that closes the connection is a clean end (nil).
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	err := s.mcp.Run(ctx, t)
	if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil
	}
	return err
}

// Connect starts one MCP session over t and returns at once; the session
// lives until either side closes it.
func (s *Server) Connect(ctx context.Context, t sdk.Transport) (*sdk.ServerSession, error) {
	return s.mcp.Connect(ctx, t, nil)
}

// Close stops following the registry; sessions already connected keep
// their last tool list and can still call tools.
func (s *Server) Close() error {
	s.stop()
	return nil
}

// listKey memoizes a view's MCP tool list on the view.
type listKey struct{}

// toolList is the MCP tool list of a view, built once per view: run_code's
// description is the scope's SDK prompt (instructions and declarations).
func (s *Server) toolList(v *registry.View) []listEntry {
	return v.Memo(listKey{}, func() any {
		tools := v.ModelTools()
		out := make([]listEntry, 0, len(tools))
		for _, t := range tools {
			desc := t.Description()
			if t.Name() == registry.RunCode {
				desc = string(s.app.Bridge.Prompt(v))
			}
			tool, wrapped, contentOnly := listedTool(t, desc)
			fp, err := json.Marshal(tool)
			if err != nil { // cannot happen: every field is JSON
				fp = []byte(t.Name())
			}
			sum := sha256.Sum256(fp) // a hash: the text would double the list's memory
			out = append(out, listEntry{tool: tool, fingerprint: string(sum[:]), wrapped: wrapped, contentOnly: contentOnly})
		}
		return out
	}).([]listEntry)
}

// sync brings the go-sdk server's tool list in line with the scope's view.
// Only changed tools are re-added, so registry changes elsewhere send no
// notification; the go-sdk debounces the notifications of one sync into
// one notifications/tools/list_changed.
func (s *Server) sync() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	var want []listEntry
	if v, err := s.app.Registry.View(s.scope); err == nil {
		want = s.toolList(v)
	}
	s.listMu.RLock()
	old := s.listed
	s.listMu.RUnlock()
	next := make(map[string]listEntry, len(want))
	changed := 0
	for _, e := range want {
		if prev, ok := old[e.tool.Name]; ok && prev.fingerprint == e.fingerprint {
			next[e.tool.Name] = prev
			continue
		}
		if err := s.addTool(e.tool); err != nil {
			s.log.Error("tool cannot be listed over MCP", "tool", e.tool.Name, "error", err)
			continue
		}
		next[e.tool.Name] = e
		changed++
	}
	var gone []string
	for name := range old {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	// Publish the new list before removals notify, and after additions: a
	// call racing a change reaches the pipeline either way.
	s.listMu.Lock()
	s.listed = next
	s.listMu.Unlock()
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	if (changed > 0 || len(gone) > 0) && s.synced {
		// One line per change of the list, however many sessions it
		// notifies (the go-sdk's own per-session lines are not logged).
		s.log.Info("MCP tool list changed; notifying sessions", "tools", len(next), "added_or_changed", changed, "removed", len(gone), "sessions", s.sessionCount())
	}
	s.synced = true
}

func (s *Server) sessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bindings)
}

// addTool adds a tool to the go-sdk server, turning its panics (a schema it
// refuses) into an error.
func (s *Server) addTool(t *sdk.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s", registry.SafeString(r))
		}
	}()
	s.mcp.AddTool(t, s.call)
	return nil
}

// runCodeFirst puts run_code at the head of the first page of a tools/list answer and takes
// it off every other page: the go-sdk pages tools in name order, so among a thousand tools
// run_code would sit on a page a one-page client never reads.
func (s *Server) runCodeFirst(list *sdk.ListToolsResult, firstPage bool) {
	e, ok := s.listing(registry.RunCode)
	if !ok {
		return
	}
	list.Tools = slices.DeleteFunc(list.Tools, func(t *sdk.Tool) bool { return t.Name == registry.RunCode })
	if firstPage {
		list.Tools = slices.Insert(list.Tools, 0, e.tool)
	}
}

func (s *Server) isListed(name string) bool {
	s.listMu.RLock()
	defer s.listMu.RUnlock()
	_, ok := s.listed[name]
	return ok
}

func (s *Server) listing(name string) (listEntry, bool) {
	s.listMu.RLock()
	defer s.listMu.RUnlock()
	e, ok := s.listed[name]
	return e, ok
}

// bind returns the binding of an MCP session, creating it (and a watcher
// that forgets it when the session ends) on first use.
func (s *Server) bind(ss *sdk.ServerSession) *binding {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.bindings[ss]; ok {
		return b
	}
	b := &binding{}
	s.bindings[ss] = b
	go func() {
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.bindings, ss)
		s.mu.Unlock()
	}()
	return b
}

// session returns the codemode session of a binding, creating it on the
// first call, and the next call id in it.
func (s *Server) session(ctx context.Context, b *binding, mcpSessionID string) (sessionID, callID string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sessionID == "" {
		sess, err := s.app.NewSession(ctx, s.scope)
		if err != nil {
			return "", "", fmt.Errorf("create the codemode session: %w", err)
		}
		b.sessionID = sess.ID
		s.log.Info("MCP session bound to a codemode session", "mcp_session", mcpSessionID, "session", sess.ID)
	}
	b.calls++
	return b.sessionID, "mcp-" + strconv.Itoa(b.calls), nil
}

// call runs one tools/call as a one-call step of the agent loop, under its
// request's admission.
func (s *Server) call(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	if req.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call needs params"}
	}
	if s.admission != nil {
		var header http.Header
		if req.Extra != nil {
			header = req.Extra.Header
		}
		done, ok := s.admission(header)
		if !ok {
			return cancelledBeforeStart(), nil
		}
		defer done()
	}
	return s.run(ctx, req, nil)
}

// run runs an admitted tools/call as a one-call step of the agent loop.
// started, when set, learns the call's codemode session and call id before
// it runs (a task's).
func (s *Server) run(ctx context.Context, req *sdk.CallToolRequest, started func(sessionID, callID string)) (*sdk.CallToolResult, error) {
	name := req.Params.Name
	args := string(req.Params.Arguments)
	if t := bytes.TrimSpace(req.Params.Arguments); len(t) == 0 || string(t) == "null" {
		args = "{}"
	}
	sessionID, callID, err := s.session(ctx, s.bind(req.Session), req.Session.ID())
	if err != nil {
		if ctx.Err() != nil {
			return cancelledBeforeStart(), nil
		}
		return nil, err
	}
	if started != nil {
		started(sessionID, callID)
	}
	if stop := s.pollStream(req); stop != nil {
		defer stop()
	}
	ctx = WithPeer(ctx, sessionPeer{ss: req.Session, reqCtx: ctx})
	ctx = registry.WithNotifier(ctx, newClientNotifier(req.Session, req.Params.GetProgressToken(), callID))
	step, err := s.app.Agent.Step(ctx, sessionID, []agent.ToolCall{{ID: callID, Name: name, Arguments: args}})
	if len(step.Results) == 0 {
		switch {
		case err == nil:
			return nil, errors.New("the agent returned no result")
		case errors.Is(err, agent.ErrInvalidCalls):
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		case ctx.Err() != nil:
			return cancelledBeforeStart(), nil
		}
		return nil, err
	}
	if err != nil {
		s.log.Error("tool call ran but its log is incomplete", "session", sessionID, "call", callID, "error", err)
	}
	e, listed := s.listing(name)
	return callResult(step.Results[0].Result, resultInfo{sessionID: sessionID, listed: listed && !e.contentOnly, wrapped: e.wrapped}), nil
}

// pollRetry is the reconnection delay sent when a long call's stream is
// closed.
const pollRetry = time.Second

// pollStream arranges for the SSE stream of a long tools/call to be closed
// after pollAfter with a retry field (SEP-1699, protocol 2025-11-25): the
// client reconnects with Last-Event-ID and the event store replays what it
// missed, the result included, so no proxy's idle timeout can lose it. It
// returns what stops the timer, or nil when it does not apply.
func (s *Server) pollStream(req *sdk.CallToolRequest) (stop func()) {
	extra := req.Extra
	if s.pollAfter <= 0 || extra == nil || extra.CloseSSEStream == nil || req.Session == nil {
		return nil
	}
	ip := req.Session.InitializeParams()
	if ip == nil || ip.ProtocolVersion < "2025-11-25" || ip.ProtocolVersion >= "2026-07-28" {
		return nil // older clients cannot resume, newer ones have no streams to resume
	}
	t := time.AfterFunc(s.pollAfter, func() { extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: pollRetry}) })
	return func() { t.Stop() }
}

// cancelledBeforeStart answers a call whose client gave up before it could
// be logged.
func cancelledBeforeStart() *sdk.CallToolResult {
	return &sdk.CallToolResult{
		IsError: true,
		Content: []sdk.Content{&sdk.TextContent{Text: "the call was cancelled before it started"}},
		Meta: sdk.Meta{metaPrefix + "error": map[string]any{
			"code": string(registry.CodeAbortedBeforeDispatch), "message": "the call was cancelled before it started",
		}},
	}
}

// ServeStdio serves one MCP session for a scope on in and out (the
// process's stdin and stdout for `codemode mcp`) until the client closes
// in or ctx ends; both ends are clean (nil).
func ServeStdio(ctx context.Context, a *app.App, scope string, in io.Reader, out io.Writer, opts Options) error {
	s, err := NewServer(a, scope, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	err = s.Run(ctx, &cancelTransport{Transport: &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// quiet passes on only warnings and errors: the go-sdk logs every
// connection and session at info level, which is noise beside ours.
func quiet(l *slog.Logger) *slog.Logger { return slog.New(minLevel{l.Handler()}) }

type minLevel struct{ slog.Handler }

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler { return minLevel{h.Handler.WithAttrs(as)} }

func (h minLevel) WithGroup(name string) slog.Handler { return minLevel{h.Handler.WithGroup(name)} }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
