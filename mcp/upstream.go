package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/registry"
)

// Constants of the upstream side. The defaults of the mcp_servers[] keys are
// config's (config.DefaultMCPTimeout, config.Liveness.Resolved, …): config
// cannot import this package.
const (
	// upstreamProtocol is the protocol version offered to upstream servers:
	// the newest one with the initialize handshake, which every SDK speaks.
	upstreamProtocol = "2025-11-25"
	// stableAfter is how long a connection must have lasted for the
	// reconnect backoff to start again from its minimum (and for a lost
	// connection to be retried at once).
	stableAfter = 30 * time.Second
	// A call's first progressBurst progress notifications are forwarded as
	// they come; after them, at most one per progressEvery: in between only
	// the latest is kept, and sent when the next is due or the call ends.
	progressBurst = 10
	progressEvery = 100 * time.Millisecond
	// logRate and logBurst bound the log messages of one upstream that are
	// logged (and forwarded to its call): what is over is counted, and said
	// in one line when messages are let through again.
	logRate  = 20
	logBurst = 100
	// defaultHealthInterval is how often an HTTP upstream is pinged; two
	// missed pings in a row end the session, which reconnects.
	defaultHealthInterval = 15 * time.Second
)

// The states of an upstream (UpstreamState.State).
const (
	// StateConnecting: the first connection attempt is under way.
	StateConnecting = "connecting"
	// StateReady: connected; its tools are registered.
	StateReady = "ready"
	// StateUnresponsive: connected, but calls wait on it and nothing has
	// arrived from it, not even the answer to a ping, for liveness.idle +
	// liveness.ping_timeout. Back to ready as soon as anything arrives;
	// restarted (its waiting calls failed) at liveness.fail_after.
	StateUnresponsive = "unresponsive"
	// StateRestarting: a ready connection ended (the process exited, the
	// server went away, a health check failed); reconnecting. Its tools stay
	// registered and fail fast, or wait for the reconnection in progress.
	StateRestarting = "restarting"
	// StateFailed: the last attempt failed (LastError says why: a missing
	// command, a refused connection, a handshake that timed out); retried
	// with capped exponential backoff at NextRetry.
	StateFailed = "failed"
	// StateUnauthorized: the server refused the credentials (HTTP 401 or
	// 403). Not retried: fix headers or auth and restart codemode.
	StateUnauthorized = "unauthorized"
	// StateStopped: Close was called.
	StateStopped = "stopped"
)

// UpstreamOptions tune StartUpstreams. The zero value works.
type UpstreamOptions struct {
	// Logger receives one line per state change of each upstream (not one
	// per retry), and what stdio servers write to stderr. Default: the App's.
	Logger *slog.Logger
	// Version is reported as clientInfo.version. Default "dev".
	Version string

	// Servers are MCP servers of this process (an existing go-sdk server, say) to serve as tool
	// sources without a subprocess: an entry whose name is a key here, and that names neither
	// a command nor a URL, connects to that server over in-memory transports, and its tools
	// are registered, policed, logged and watched like any other upstream's.
	Servers map[string]*sdk.Server

	// Test knobs. minBackoff is the first retry delay (default 250ms),
	// doubling up to maxBackoff (default 30s); healthInterval is the ping
	// interval of HTTP upstreams (default 15s; negative: none).
	minBackoff, maxBackoff, healthInterval time.Duration
	// dial, when set, replaces starting the command or connecting to the URL.
	dial func(ctx context.Context, s config.MCPServer) (sdk.Transport, error)
}

// UpstreamState is one upstream as GET /v1/upstreams shows it.
type UpstreamState struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	// Transport is stdio, streamable-http or sse: the one connected (or
	// last tried) for a url upstream in auto mode.
	Transport string    `json:"transport"`
	State     string    `json:"state"`
	Since     time.Time `json:"since"` // when State began
	// LastError is why the upstream is not ready ("" when it is).
	LastError string `json:"last_error,omitempty"`
	// Tools counts the tools it contributes to its scope now.
	Tools int `json:"tools"`
	// Restarts counts the connections that ended and were re-established.
	Restarts int `json:"restarts"`
	// Attempts counts the failed attempts since the upstream was last ready.
	Attempts int `json:"attempts,omitempty"`
	// Calls counts the calls waiting on it now.
	Calls int `json:"calls"`
	// LastHeard is when a message last arrived on the current connection.
	LastHeard *time.Time `json:"last_heard,omitempty"`
	// Unresponsive counts the times it was found unresponsive.
	Unresponsive int `json:"unresponsive,omitempty"`
	// StalledCalls counts the calls that had no reply and no progress for
	// liveness.stall_after (each logged once).
	StalledCalls int        `json:"stalled_calls,omitempty"`
	NextRetry    *time.Time `json:"next_retry,omitempty"`
	// Server is what the server said of itself when it last connected.
	Server *ServerInfo `json:"server,omitempty"`
	// Renamed lists tools whose names were changed to be valid and unique.
	Renamed []RenamedTool `json:"renamed,omitempty"`
	// Rejected lists tools the server offered that are not registered, and why.
	Rejected []RejectedTool `json:"rejected,omitempty"`
	// ToolsLeftOut counts the tools listed beyond max_tools, not registered
	// (the first max_tools in the server's order are).
	ToolsLeftOut int `json:"tools_left_out,omitempty"`
	// ProgressDropped counts the progress notifications not forwarded: past
	// progressBurst, a call's progress is coalesced to one per
	// progressEvery (its last kept).
	ProgressDropped int64 `json:"progress_dropped,omitempty"`
	// LogsDropped counts the log messages over the rate limit (logRate
	// per second, burst logBurst), neither logged nor forwarded.
	LogsDropped int64 `json:"logs_dropped,omitempty"`
	// ListingCut says which bound (max_list_pages, max_list_bytes) stopped
	// the last tools/list before its last page; "" when it ended.
	ListingCut string `json:"listing_cut,omitempty"`
}

// ServerInfo is an upstream's initialize result, in short.
type ServerInfo struct {
	Name            string   `json:"name,omitempty"`
	Version         string   `json:"version,omitempty"`
	ProtocolVersion string   `json:"protocol_version"`
	Capabilities    []string `json:"capabilities"`
	Instructions    string   `json:"instructions,omitempty"`
}

// RenamedTool is an upstream tool registered under another name.
type RenamedTool struct {
	Tool string `json:"tool"` // the upstream's name
	As   string `json:"as"`   // the registry name
	Why  string `json:"why"`
}

// RejectedTool is an upstream tool that is not registered.
type RejectedTool struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// Upstreams are the configured MCP servers as tool sources: each connects,
// reconnects and lists in the background, on its own, and its tools join
// its scope as "<server>.<tool>" (see tools.go for the mapping). States,
// Ready and Settle report how they are doing; Close stops them.
type Upstreams struct {
	list   []*upstream
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// StartUpstreams makes the configured MCP servers tool sources and returns
// at once: every server connects in the background, bounded per attempt by
// its connect_timeout, so a silent or missing server delays nothing. It
// fails, starting nothing, for an entry whose scope does not exist, that
// names neither a command nor a URL, or whose headers or auth name an
// environment variable that is not set.
//
// An upstream that cannot be reached, or whose connection ends, is retried
// with exponential backoff from 250ms capped at 30s (at once when a
// connection that had lasted ends), except after a 401/403 (state
// unauthorized). Each state change is logged once. Meanwhile its tools stay
// registered: a call waits for an attempt in progress, and otherwise fails
// at once with "upstream <name> is unavailable: <reason>". A call that
// failed because the session was gone (the server restarted) or the
// connection was refused, before it reached the server, is retried once on
// the new session.
//
// Calls carry the caller's cancellation (notifications/cancelled) and are
// bounded by the entry's timeout (TOOL_TIMEOUT). An upstream silent while
// calls wait is pinged, reported unresponsive, and past its
// liveness.fail_after its calls fail ("upstream <name> is not answering")
// and it is restarted (liveness.go). The upstreams run until Close is
// called or ctx ends.
func StartUpstreams(ctx context.Context, a *app.App, servers []config.MCPServer, opts UpstreamOptions) (*Upstreams, error) {
	if opts.Logger == nil {
		opts.Logger = a.Logger
	}
	return startUpstreams(ctx, a.Registry, servers, opts)
}

func startUpstreams(ctx context.Context, reg *registry.Registry, servers []config.MCPServer, opts UpstreamOptions) (*Upstreams, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.minBackoff <= 0 {
		opts.minBackoff = 250 * time.Millisecond
	}
	if opts.maxBackoff < opts.minBackoff {
		opts.maxBackoff = max(30*time.Second, opts.minBackoff)
	}
	if opts.healthInterval == 0 {
		opts.healthInterval = defaultHealthInterval
	}
	ups := &Upstreams{}
	for i, s := range servers {
		u, err := newUpstream(reg, s, opts)
		if err != nil {
			return nil, fmt.Errorf("mcp_servers[%d] (%s): %w", i, s.Name, err)
		}
		ups.list = append(ups.list, u)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopOnDone := context.AfterFunc(ctx, cancel)
	ups.cancel = func() { stopOnDone(); cancel() }
	for _, u := range ups.list {
		u.life = runCtx
		ups.wg.Add(1)
		go func() {
			defer ups.wg.Done()
			u.run(runCtx)
		}()
	}
	return ups, nil
}

// Close stops every upstream: it unregisters their tools, closes the
// connections and waits for stdio servers to exit. It is safe to call more
// than once, and on a nil *Upstreams.
func (us *Upstreams) Close() error {
	if us == nil {
		return nil
	}
	us.once.Do(func() {
		us.cancel()
		us.wg.Wait()
		for _, u := range us.list {
			u.unregisterAll()
		}
	})
	return nil
}

// States reports every upstream, in configuration order.
func (us *Upstreams) States() []UpstreamState {
	if us == nil {
		return []UpstreamState{}
	}
	out := make([]UpstreamState, 0, len(us.list))
	for _, u := range us.list {
		out = append(out, u.state())
	}
	return out
}

// Ready reports whether every upstream is ready (true when none is
// configured): the readiness of a service whose tools must all be there.
func (us *Upstreams) Ready() bool {
	if us == nil {
		return true
	}
	for _, u := range us.list {
		if u.state().State != StateReady {
			return false
		}
	}
	return true
}

// Settle waits until every upstream has finished its first connection
// attempt (ready, failed or unauthorized; each attempt is bounded by its
// connect_timeout), or ctx ends. The commands that show or run a scope's
// tools once (run, sdk, tools) call it so that what they show is complete.
func (us *Upstreams) Settle(ctx context.Context) error {
	if us == nil {
		return nil
	}
	for _, u := range us.list {
		if err := u.settle(ctx); err != nil {
			return err
		}
	}
	return nil
}

// upstream is one configured MCP server and the tools it contributes.
type upstream struct {
	cfg            config.MCPServer
	scope          string
	callTimeout    time.Duration
	connectTimeout time.Duration
	reg            *registry.Registry
	opts           UpstreamOptions
	log            *slog.Logger
	http           *httpSetup    // nil for a stdio server
	refresh        chan struct{} // signalled by notifications/tools/list_changed
	kick           chan struct{} // a call saw the session die: reconnect now
	tokens         atomic.Int64  // progress tokens
	stash          contentStash
	life           context.Context // the run loop's; set before it starts

	mu        sync.Mutex
	conn      *connection          // nil while unavailable; guarded by mu
	st        UpstreamState        // guarded by mu
	changed   chan struct{}        // closed and replaced at every change; guarded by mu
	settled   bool                 // the first attempt is over; set with the state it ended in; guarded by mu
	calls     map[string]*inflight // calls in flight, by progress token; guarded by mu
	raw       map[string]rawTool   // the last raw tools/list, by name; guarded by mu
	taskTools map[string]bool      // tools called as tasks (execution.taskSupport "required"); guarded by mu
	logs      logLimit             // guarded by mu
	rawSize   int64                // its bytes; guarded by mu

	// tools are the registrations, by registry name. Only the run
	// goroutine touches them (and Close, after it ended).
	tools map[string]*registration
}

// connection is one live session with the server.
type connection struct {
	cs        *sdk.ClientSession
	raw       *watchConn // the transport's, under cs: aborting it ends a session stuck in a write
	transport string
	caps      *sdk.ServerCapabilities // never nil
	lost      atomic.Bool             // a call found the session dead
	heard     *heard                  // when a message last arrived
	live      *liveness
}

type registration struct {
	fingerprint string
	unregister  func()
}

func newUpstream(reg *registry.Registry, s config.MCPServer, opts UpstreamOptions) (*upstream, error) {
	scope := s.Scope
	if scope == "" {
		scope = config.DefaultScope
	}
	switch {
	case s.Name == "":
		return nil, errors.New("a name is required")
	case !reg.HasScope(scope):
		return nil, fmt.Errorf("unknown scope %q", scope)
	case opts.Servers[s.Name] != nil && (len(s.Command) > 0 || s.URL != ""):
		return nil, errors.New("an in-process server (UpstreamOptions.Servers) takes neither command nor url")
	case (len(s.Command) == 0) == (s.URL == "") && opts.dial == nil && opts.Servers[s.Name] == nil:
		return nil, errors.New("give exactly one of command and url")
	}
	u := &upstream{
		cfg: s, scope: scope, reg: reg, opts: opts,
		callTimeout:    s.Timeout.Std(),
		connectTimeout: s.ConnectTimeout.Std(),
		log:            opts.Logger.With("upstream", s.Name),
		refresh:        make(chan struct{}, 1),
		kick:           make(chan struct{}, 1),
		changed:        make(chan struct{}),
		calls:          map[string]*inflight{},
		tools:          map[string]*registration{},
	}
	if u.callTimeout <= 0 {
		u.callTimeout = config.DefaultMCPTimeout
	}
	if u.connectTimeout <= 0 {
		u.connectTimeout = config.DefaultMCPConnectTimeout
		if s.Timeout > 0 {
			u.connectTimeout = s.Timeout.Std()
		}
	}
	u.st = UpstreamState{Name: s.Name, Scope: scope, State: StateConnecting, Since: time.Now(), Transport: "stdio"}
	if s.URL != "" {
		h, err := newHTTPSetup(s, u.log)
		if err != nil {
			return nil, err
		}
		u.http = h
		u.st.Transport = h.transports(s)[0]
	}
	return u, nil
}

// state is a copy of the upstream's state.
func (u *upstream) state() UpstreamState {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.st
	for _, call := range u.calls {
		if u.conn != nil && call.conn == u.conn {
			st.Calls++
		}
	}
	if u.conn != nil {
		t := u.conn.heard.last()
		st.LastHeard = &t
	}
	st.Renamed = append([]RenamedTool(nil), st.Renamed...)
	st.Rejected = append([]RejectedTool(nil), st.Rejected...)
	if st.NextRetry != nil {
		t := *st.NextRetry
		st.NextRetry = &t
	}
	return st
}

// update changes the state under the lock, wakes the waiters and logs the
// change when the state or its error is new.
func (u *upstream) update(fn func(st *UpstreamState)) {
	u.mu.Lock()
	before := u.st
	fn(&u.st)
	after := u.st
	if after.State != before.State {
		u.st.Since = time.Now()
	}
	close(u.changed)
	u.changed = make(chan struct{})
	u.mu.Unlock()
	if after.State == before.State && after.LastError == before.LastError {
		return
	}
	switch after.State {
	case StateReady:
		if before.State == StateUnresponsive {
			u.log.Info("upstream MCP server answering again")
			break
		}
		u.log.Info("upstream MCP server ready", "transport", after.Transport, "tools", after.Tools, "restarts", after.Restarts)
	case StateRestarting:
		u.log.Warn("upstream MCP server connection ended; reconnecting", "error", after.LastError)
	case StateUnresponsive:
		u.log.Warn("upstream MCP server is not answering", "error", after.LastError)
	case StateFailed:
		u.log.Warn("upstream MCP server unavailable; retrying with backoff", "error", after.LastError, "attempts", after.Attempts)
	case StateUnauthorized:
		u.log.Error("upstream MCP server refused the credentials; not retrying (check its headers and auth)", "error", after.LastError)
	}
}

func (u *upstream) settle(ctx context.Context) error {
	for {
		u.mu.Lock()
		done, ch := u.settled, u.changed
		u.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// run connects, serves and reconnects until ctx ends.
func (u *upstream) run(ctx context.Context) {
	backoff := u.opts.minBackoff
	defer u.update(func(st *UpstreamState) {
		st.State, st.LastError, st.NextRetry = StateStopped, "", nil
	})
	for {
		c, err := u.connect(ctx)
		if ctx.Err() != nil {
			if c != nil {
				c.cs.Close()
			}
			return
		}
		if err != nil {
			// settled changes with the state, under the same lock: Settle's
			// caller then reads the state the attempt ended in.
			if errors.Is(err, errUnauthorized) {
				u.update(func(st *UpstreamState) {
					st.State, st.LastError, st.NextRetry = StateUnauthorized, err.Error(), nil
					st.Attempts++
					u.settled = true
				})
				<-ctx.Done()
				return
			}
			next := time.Now().Add(backoff)
			u.update(func(st *UpstreamState) {
				st.State, st.LastError, st.NextRetry = StateFailed, err.Error(), &next
				st.Attempts++
				u.settled = true
			})
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, u.opts.maxBackoff)
			continue
		}
		started := time.Now()
		err = u.serve(ctx, c)
		if ctx.Err() != nil {
			return
		}
		u.mu.Lock()
		if u.conn == c {
			u.conn = nil
		}
		u.mu.Unlock()
		// A connection that lasted, or that a call found dead (the server
		// restarted: the call waits to be retried on the next session), is
		// reconnected at once.
		stable := time.Since(started) >= stableAfter || c.lost.Load() || sessionGone(err)
		var next *time.Time
		if !stable {
			t := time.Now().Add(backoff)
			next = &t
		}
		u.update(func(st *UpstreamState) {
			if !c.lost.Load() { // lost already said why
				st.LastError = err.Error()
			}
			st.State, st.NextRetry = StateRestarting, next
			st.Restarts++
		})
		if stable {
			backoff = u.opts.minBackoff
		} else {
			// A server that dies soon after it starts is not restarted in a
			// tight loop.
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(2*backoff, u.opts.maxBackoff)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// sessionGone reports whether a session ended because the server no longer
// knows it: it restarted, and a new session will work. (The go-sdk keeps
// only the text of a connection's failure in the errors of the calls it
// fails, hence the suffix.)
func sessionGone(err error) bool {
	return err != nil && (errors.Is(err, sdk.ErrSessionMissing) || strings.HasSuffix(err.Error(), ": "+sdk.ErrSessionMissing.Error()))
}

// errLost ends a session that a call found dead (see lost).
var errLost = errors.New("the session was lost")

// serve waits for the session to end, listing again whenever the server
// says its tools changed. It returns why the session ended.
func (u *upstream) serve(ctx context.Context, c *connection) error {
	done := make(chan error, 1)
	go func() { done <- c.cs.Wait() }()
	tick := time.NewTicker(c.live.tick())
	defer tick.Stop()
	for {
		select {
		case now := <-tick.C:
			if err := u.checkLiveness(c, now); err != nil {
				u.lost(c, err)
				// The transport first: a write stuck on a server that stopped
				// reading holds the session open. A server that does not
				// answer is not given time to exit.
				c.raw.abort()
				c.cs.Close()
				<-done
				return err
			}
		case <-ctx.Done():
			c.cs.Close()
			<-done
			return ctx.Err()
		case err := <-done:
			if err == nil {
				err = errors.New("the connection closed")
			}
			return err
		case <-u.kick:
			u.mu.Lock()
			current := u.conn == c
			u.mu.Unlock()
			if !current { // a call found the session dead and dropped it
				c.cs.Close()
				<-done
				return errLost
			}
		case <-u.refresh:
			lctx, cancel := context.WithTimeout(ctx, u.connectTimeout)
			n, err := u.refreshTools(lctx, c)
			cancel()
			if err != nil {
				c.cs.Close()
				<-done
				return fmt.Errorf("list tools: %w", err)
			}
			u.update(func(st *UpstreamState) { st.Tools = n })
		}
	}
}

// connect makes one connection attempt: start or dial the server, complete
// the handshake and register its tools, all within connectTimeout.
func (u *upstream) connect(ctx context.Context) (*connection, error) {
	cctx, cancel := context.WithTimeoutCause(ctx, u.connectTimeout, fmt.Errorf("no answer within connect_timeout (%v)", u.connectTimeout))
	defer cancel()
	kinds := []string{"stdio"}
	switch {
	case u.opts.Servers[u.cfg.Name] != nil:
		kinds = []string{"in-process"}
	case u.http != nil:
		kinds = u.http.transports(u.cfg)
	}
	var firstErr error
	for i, kind := range kinds {
		attempt := &httpAttempt{}
		c, err := u.connectOnce(cctx, kind, attempt)
		if err == nil {
			if u.http != nil {
				u.http.worked(kind)
			}
			return c, nil
		}
		if cause := context.Cause(cctx); cctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w (%v)", cause, err)
		}
		status := int(attempt.status.Load())
		if status == 401 || status == 403 {
			return nil, fmt.Errorf("%w: %v", errUnauthorized, err)
		}
		if firstErr == nil {
			firstErr = err
		}
		// Fall back to the other transport only when this one was refused
		// with a 4xx, the spec's sign of a server that predates it.
		if i+1 < len(kinds) && !fallbackStatus(status) {
			break
		}
		if i+1 < len(kinds) {
			u.log.Debug("transport refused; trying the next", "transport", kind, "status", status)
		}
	}
	return nil, firstErr
}

func (u *upstream) connectOnce(ctx context.Context, kind string, attempt *httpAttempt) (*connection, error) {
	u.update(func(st *UpstreamState) { st.Transport = kind })
	var t sdk.Transport
	switch {
	case u.opts.dial != nil:
		var err error
		if t, err = u.opts.dial(ctx, u.cfg); err != nil {
			return nil, err
		}
	case u.opts.Servers[u.cfg.Name] != nil:
		ct, st := sdk.NewInMemoryTransports()
		if _, err := u.opts.Servers[u.cfg.Name].Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		t = ct
	case kind == "stdio":
		t = &stdioTransport{cmd: u.cfg.Command, env: u.cfg.Env, log: u.log, server: u.cfg.Name, limit: u.cfg.MessageBytes()}
	default:
		t = &lastingTransport{Transport: u.http.transport(kind, u.cfg.URL, attempt), life: u.life}
	}
	wt := &watchTransport{Transport: t, onTools: u.sawTools, onNotify: u.notification, needsTask: u.needsTask, heard: &heard{}}
	t = wt
	opts := u.clientOptions()
	if kind != "stdio" && kind != "in-process" && u.opts.healthInterval > 0 {
		opts.KeepAlive = u.opts.healthInterval
		opts.KeepAliveFailureThreshold = 2
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: ServerName, Version: u.opts.Version}, opts).
		Connect(ctx, t, &sdk.ClientSessionOptions{ProtocolVersion: upstreamProtocol})
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	init := cs.InitializeResult()
	c := &connection{cs: cs, raw: wt.conn, transport: kind, caps: &sdk.ServerCapabilities{}, heard: wt.heard,
		live: &liveness{cfg: u.cfg.Liveness.Resolved()}}
	info := &ServerInfo{}
	if init != nil {
		if init.Capabilities != nil {
			c.caps = init.Capabilities
		}
		if init.ServerInfo != nil {
			info.Name, info.Version = init.ServerInfo.Name, init.ServerInfo.Version
		}
		info.ProtocolVersion, info.Instructions = init.ProtocolVersion, init.Instructions
	}
	info.Capabilities = capabilityNames(c.caps)
	if c.caps.Logging != nil {
		// Ask for info and above, which the run's notices and the log carry.
		_ = cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "info"})
	}
	// The connection is current before the tools appear, so that no call
	// can find a tool registered but its upstream not connected.
	u.mu.Lock()
	u.conn = c
	u.mu.Unlock()
	n, err := u.refreshTools(ctx, c)
	if err != nil {
		u.mu.Lock()
		u.conn = nil
		u.mu.Unlock()
		cs.Close()
		return nil, fmt.Errorf("list tools: %w", err)
	}
	u.update(func(st *UpstreamState) {
		st.State, st.LastError, st.NextRetry, st.Attempts = StateReady, "", nil, 0
		st.Tools, st.Server = n, info
		u.settled = true // with the state: see run
	})
	return c, nil
}

func capabilityNames(c *sdk.ServerCapabilities) []string {
	names := []string{}
	if c.Tools != nil {
		names = append(names, "tools")
	}
	if c.Resources != nil {
		names = append(names, "resources")
	}
	if c.Prompts != nil {
		names = append(names, "prompts")
	}
	if c.Logging != nil {
		names = append(names, "logging")
	}
	if c.Completions != nil {
		names = append(names, "completions")
	}
	return names
}

// clientOptions are the go-sdk client's handlers for what the server sends
// beyond results: list changes, and sampling and elicitation requests (see
// peer.go). Progress and log messages are handled as they are read
// (notification).
func (u *upstream) clientOptions() *sdk.ClientOptions {
	return &sdk.ClientOptions{
		Logger: quiet(u.log),
		// Sampling and elicitation are forwarded to the MCP client of the
		// call (peer.go); roots are not offered.
		Capabilities: &sdk.ClientCapabilities{
			Sampling:    &sdk.SamplingCapabilities{},
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}},
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case u.refresh <- struct{}{}:
			default: // a refresh is already due
			}
		},
		CreateMessageHandler: func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return u.createMessage(ctx, req.Params)
		},
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return u.elicit(ctx, req.Params)
		},
	}
}

// current returns the live connection, waiting while an attempt is in
// progress (connecting, or restarting) for as long as ctx allows. When the
// upstream is down for longer it fails with the reason.
func (u *upstream) current(ctx context.Context) (*connection, error) {
	for {
		u.mu.Lock()
		c, st, ch := u.conn, u.st, u.changed
		u.mu.Unlock()
		if c != nil {
			return c, nil
		}
		switch st.State {
		case StateConnecting, StateRestarting:
			if st.NextRetry == nil || !st.NextRetry.After(time.Now()) {
				select {
				case <-ctx.Done():
					return nil, fmt.Errorf("upstream %s: %w", u.cfg.Name, context.Cause(ctx))
				case <-ch:
					continue
				}
			}
		}
		why := st.LastError
		if why == "" {
			why = st.State
		}
		return nil, u.unavailable(why)
	}
}

func (u *upstream) unavailable(why string) error {
	return registry.Errorf(registry.CodeToolFailed, "upstream %s is unavailable: %s", u.cfg.Name, why)
}

// lost reacts to a call that found the session dead: the connection is
// dropped at once (later calls wait for the reconnection) and the run loop
// reconnects now.
func (u *upstream) lost(c *connection, err error) {
	c.lost.Store(true)
	u.mu.Lock()
	if u.conn != c {
		u.mu.Unlock()
		return
	}
	u.conn = nil
	u.mu.Unlock()
	u.update(func(st *UpstreamState) {
		st.State, st.LastError, st.NextRetry = StateRestarting, err.Error(), nil
	})
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// inflight is one call in flight on the upstream: where its server's
// notifications and requests go, and what the liveness check watches.
type inflight struct {
	ctx    context.Context // the call's: its notifiers and peer
	cancel context.CancelCauseFunc
	conn   *connection // the connection it was sent on
	tool   string      // registry name
	callID string

	started    time.Time
	progressed time.Time        // started, or its last progress notification; guarded by u.mu
	stalled    bool             // logged as stalled; guarded by u.mu
	sent       int              // progress notifications forwarded; guarded by u.mu
	sentAt     time.Time        // when progress was last forwarded; guarded by u.mu
	held       *registry.Notice // the latest progress not yet forwarded; guarded by u.mu
}

// begin records a call on c; cancel ends it with a cause (see failCalls).
func (u *upstream) begin(ctx context.Context, cancel context.CancelCauseFunc, c *connection, tool, callID string) (token string, end func()) {
	token = "codemode-" + strconv.FormatInt(u.tokens.Add(1), 10)
	now := time.Now()
	u.mu.Lock()
	u.calls[token] = &inflight{ctx: ctx, cancel: cancel, conn: c, tool: tool, callID: callID, started: now, progressed: now}
	u.mu.Unlock()
	return token, func() {
		u.mu.Lock()
		var held *registry.Notice
		if c := u.calls[token]; c != nil {
			held = c.held
		}
		delete(u.calls, token)
		u.mu.Unlock()
		if held != nil { // the last progress is always forwarded
			registry.Notify(ctx, *held)
		}
	}
}

func (u *upstream) call(token any) *inflight {
	var key string
	switch t := token.(type) {
	case string:
		key = t
	case float64, int64, json.Number:
		return nil // not one of ours
	default:
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[key]
}

// onlyCall is the one call in flight, or nil when there are none or
// several: notifications and requests that name no call (log messages,
// sampling, elicitation) are attributed to a call only when no other could
// have caused them.
func (u *upstream) onlyCall() *inflight {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.calls) != 1 {
		return nil
	}
	for _, c := range u.calls {
		return c
	}
	return nil
}

// notification handles the server's progress and log notifications as
// they are read (see watchTransport), and reports whether it did.
func (u *upstream) notification(r *jsonrpc.Request) bool {
	switch r.Method {
	case "notifications/progress":
		var p sdk.ProgressNotificationParams
		if json.Unmarshal(r.Params, &p) == nil {
			u.progress(&p)
		}
		return true
	case "notifications/message":
		var p sdk.LoggingMessageParams
		if json.Unmarshal(r.Params, &p) == nil {
			u.logMessage(&p)
		}
		return true
	}
	return false
}

func (u *upstream) progress(p *sdk.ProgressNotificationParams) {
	if p == nil {
		return
	}
	c := u.call(p.ProgressToken)
	if c == nil {
		return
	}
	n := registry.Notice{
		Tool: c.tool, CallID: c.callID, Kind: registry.NoticeProgress,
		Progress: p.Progress, Total: p.Total, Message: p.Message,
	}
	now := time.Now()
	u.mu.Lock()
	c.progressed = now
	if c.held != nil { // superseded, by n now or later
		u.st.ProgressDropped++
		c.held = nil
	}
	if c.sent >= progressBurst && now.Sub(c.sentAt) < progressEvery {
		c.held = &n
		u.mu.Unlock()
		return
	}
	c.sent, c.sentAt = c.sent+1, now
	u.mu.Unlock()
	registry.Notify(c.ctx, n)
}

func (u *upstream) logMessage(p *sdk.LoggingMessageParams) {
	if p == nil {
		return
	}
	data, err := json.Marshal(p.Data)
	if err != nil {
		data = []byte(`null`)
	}
	u.mu.Lock()
	ok, dropped := u.logs.take(time.Now())
	if !ok {
		u.st.LogsDropped++
	}
	u.mu.Unlock()
	if !ok {
		return
	}
	if dropped > 0 {
		u.log.Warn("upstream log messages dropped over the rate limit", "dropped", dropped, "per_second", logRate, "burst", logBurst)
	}
	level := string(p.Level)
	u.log.Log(context.Background(), slogLevel(level), "upstream log message", "level", level, "logger", p.Logger, "data", clip(string(data), 2000))
	if c := u.onlyCall(); c != nil {
		registry.Notify(c.ctx, registry.Notice{
			Tool: c.tool, CallID: c.callID, Kind: registry.NoticeLog,
			Level: level, Logger: orDefault(p.Logger, u.cfg.Name), Data: data,
		})
	}
}

// logLimit is a token bucket of logRate per second up to logBurst.
type logLimit struct {
	tokens  float64
	last    time.Time
	dropped int64 // since the last message let through
}

// take reports whether a message may go through now and, when it may, how
// many were dropped before it.
func (l *logLimit) take(now time.Time) (ok bool, dropped int64) {
	if l.last.IsZero() {
		l.tokens = logBurst
	} else {
		l.tokens = min(logBurst, l.tokens+now.Sub(l.last).Seconds()*logRate)
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	dropped, l.dropped = l.dropped, 0
	return true, dropped
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// slogLevel maps MCP's syslog levels to slog's.
func slogLevel(l string) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// sawTools records a raw tools/list page: what the go-sdk's Tool type does
// not keep, and the page's size. Pages of one listing accumulate, up to
// max_tools names; refreshTools resets them.
func (u *upstream) sawTools(raws []json.RawMessage, size int) {
	maxTools, _, _ := u.cfg.ToolBounds()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.raw == nil {
		u.raw = map[string]rawTool{}
	}
	u.rawSize += int64(size)
	for _, r := range raws {
		var t rawTool
		if json.Unmarshal(r, &t) == nil && t.Name != "" {
			if _, known := u.raw[t.Name]; !known && len(u.raw) >= maxTools {
				continue // left out: not registered
			}
			if first, dup := u.raw[t.Name]; dup {
				t.duplicate = true
				t.InputSchema, t.OutputSchema = first.InputSchema, first.OutputSchema // the first listing is the one used
			}
			u.raw[t.Name] = t
		}
	}
}

// rawTool is what codemode reads of a tool from the raw listing.
type rawTool struct {
	Name      string `json:"name"`
	Execution *struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
	// The schemas as the server wrote them: definition takes them rather than encoding the
	// go-sdk's decoded trees again (for a large catalog, most of the time of a listing).
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	duplicate    bool
}

func (u *upstream) takeRaw() map[string]rawTool {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.raw
	u.raw, u.rawSize = nil, 0
	return r
}

// rawBytes is the size of the listing so far.
func (u *upstream) rawBytes() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.rawSize
}

func (u *upstream) unregister(name string) {
	if r, ok := u.tools[name]; ok {
		r.unregister()
		delete(u.tools, name)
	}
}

func (u *upstream) unregisterAll() {
	u.reg.Batch(func() {
		for name := range u.tools {
			u.unregister(name)
		}
	})
}
