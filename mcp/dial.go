package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/codemode/codemode/config"
)

// This file holds the client transports to upstream servers.
//
// stdio: codemode starts the command (in its own process group, with Env
// added to this process's environment) and speaks newline-delimited JSON-RPC
// on its stdin and stdout, as the TypeScript SDK does: a stdout line that is
// not a JSON-RPC message (a stray debug print) is logged and skipped, never
// a failed call or a restart; a reply that does not decode fails the call it
// answers at once (limit.go). stderr is logged a line at a time.
//
// url: streamable HTTP, or the legacy HTTP+SSE transport. With transport
// "auto" (the default) a connection attempt that the server refuses with a
// 4xx other than 401/403 (the spec's backwards-compatibility rule) is
// retried at once over HTTP+SSE, and whichever worked is tried first on
// every later attempt. Every request carries the configured headers (values
// with ${VAR} expanded when the upstream starts) and the auth: a static
// bearer token, or a token from the OAuth 2.1 client credentials grant,
// fetched from token_url or, without one, discovered on the server's first
// 401 (protected resource metadata, then authorization server metadata; the
// go-sdk's extauth handler). A 401 or 403 that authorization cannot cure ends
// the attempt as unauthorized, which is not retried.

// errUnauthorized marks a connection attempt the server refused with 401 or
// 403 after any authorization codemode could do.
var errUnauthorized = errors.New("the server refused the credentials (HTTP 401/403)")

// httpAttempt observes the HTTP responses of one connection attempt.
type httpAttempt struct {
	status atomic.Int32 // the last HTTP status seen before the session was up
}

// authTransport adds headers and a bearer token (static or from a token
// source) to every request, records response statuses for the attempt, and
// bounds the messages of every response body (limit.go).
type authTransport struct {
	next    http.RoundTripper
	headers map[string]string
	token   oauth2.TokenSource // nil: none
	attempt *httpAttempt
	bound   *replyBound
}

func (rt *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.headers {
		r.Header.Set(k, v)
	}
	if rt.token != nil && r.Header.Get("Authorization") == "" {
		tok, err := rt.token.Token()
		if err != nil {
			return nil, fmt.Errorf("get an access token: %w", err)
		}
		tok.SetAuthHeader(r)
	}
	resp, err := rt.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if rt.attempt != nil {
		rt.attempt.status.Store(int32(resp.StatusCode))
	}
	rt.bound.wrap(r, resp)
	return resp, nil
}

// httpSetup is what every connection attempt to a url upstream shares:
// expanded headers and the credentials, so that a token outlives attempts.
type httpSetup struct {
	headers map[string]string
	static  oauth2.TokenSource // bearer or token_url client credentials; nil: none
	oauth   auth.OAuthHandler  // discovery-based client credentials; nil: none
	bound   *replyBound

	mu        sync.Mutex
	preferSSE bool // the last attempt that worked used HTTP+SSE; guarded by mu
}

func newHTTPSetup(s config.MCPServer, log *slog.Logger) (*httpSetup, error) {
	headers, err := config.ExpandHeaders(s.Headers)
	if err != nil {
		return nil, err
	}
	h := &httpSetup{headers: headers, bound: &replyBound{server: s.Name, limit: s.MessageBytes(), log: log}}
	if s.Auth == nil {
		return h, nil
	}
	a, err := s.Auth.Expanded()
	if err != nil {
		return nil, err
	}
	if a.Bearer != "" {
		h.static = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: a.Bearer, TokenType: "Bearer"})
		return h, nil
	}
	if a.TokenURL != "" {
		cc := &clientcredentials.Config{ClientID: a.ClientID, ClientSecret: a.ClientSecret, TokenURL: a.TokenURL, Scopes: a.Scopes}
		h.static = oauth2.ReuseTokenSource(nil, cc.TokenSource(context.Background()))
		return h, nil
	}
	handler, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: a.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: a.ClientSecret}},
	})
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	h.oauth = &lockedOAuth{h: handler}
	return h, nil
}

// lockedOAuth serializes an OAuth handler, which is not safe for
// concurrent use, across the requests of a session.
type lockedOAuth struct {
	mu sync.Mutex
	h  auth.OAuthHandler
}

func (l *lockedOAuth) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h.TokenSource(ctx)
}

func (l *lockedOAuth) Authorize(ctx context.Context, r *http.Request, resp *http.Response) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h.Authorize(ctx, r, resp)
}

func (h *httpSetup) client(attempt *httpAttempt) *http.Client {
	return &http.Client{Transport: &authTransport{next: http.DefaultTransport, headers: h.headers, token: h.static, attempt: attempt, bound: h.bound}}
}

// transports lists the transports to try, in order, for a url upstream.
func (h *httpSetup) transports(s config.MCPServer) []string {
	switch s.Transport {
	case config.TransportStreamable, config.TransportSSE:
		return []string{s.Transport}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.preferSSE {
		return []string{config.TransportSSE, config.TransportStreamable}
	}
	return []string{config.TransportStreamable, config.TransportSSE}
}

func (h *httpSetup) worked(transport string) {
	h.mu.Lock()
	h.preferSSE = transport == config.TransportSSE
	h.mu.Unlock()
}

func (h *httpSetup) transport(kind, url string, attempt *httpAttempt) sdk.Transport {
	// The bodies are bounded before the go-sdk reads them; its own bound on
	// an event, which fails the whole connection, stays out of the way.
	maxEvent := int(h.bound.limit + 2*sseSlack)
	if kind == config.TransportSSE {
		return &sdk.SSEClientTransport{Endpoint: url, HTTPClient: h.client(attempt), MaxEventSize: maxEvent}
	}
	return &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: h.client(attempt), OAuthHandler: h.oauth, MaxRetries: 2, MaxEventSize: maxEvent}
}

// fallbackStatus reports whether a failed streamable-HTTP attempt that saw
// this status should be retried over HTTP+SSE: a 4xx other than 401 and
// 403 (the spec's backwards-compatibility rule).
func fallbackStatus(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusUnauthorized && status != http.StatusForbidden
}

// stdioTransport starts a command and speaks JSON-RPC on its stdio.
type stdioTransport struct {
	cmd []string
	env map[string]string
	log *slog.Logger
	// server names the upstream in errors; limit bounds one message (config.MCPServer.MessageBytes).
	server string
	limit  int64
}

// stopGrace is how long a stdio server has to exit after its stdin closes,
// and again after SIGTERM, before it is killed.
const stopGrace = 2 * time.Second

func (t *stdioTransport) Connect(context.Context) (sdk.Connection, error) {
	cmd := exec.Command(t.cmd[0], t.cmd[1:]...)
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(t.env))
	for k := range t.env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+t.env[k])
	}
	setProcessGroup(cmd)
	cmd.Stderr = &lineLogger{log: t.log, msg: "upstream stderr"}
	cmd.WaitDelay = stopGrace // a grandchild holding a pipe must not block Wait
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("start %q: command not found", t.cmd[0])
		}
		return nil, fmt.Errorf("start %q: %w", t.cmd[0], err)
	}
	c := &stdioConn{cmd: cmd, stdin: stdin, log: t.log, server: t.server, limit: t.limit, incoming: make(chan stdioRead), closed: make(chan struct{}),
		exited: make(chan struct{}), readDone: make(chan struct{})}
	go func() {
		// Wait closes stdout, so it waits for the reads to end first.
		<-c.readDone
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	go c.readLoop(stdout)
	return c, nil
}

// stdioConn is a connection to a stdio server: one JSON-RPC message per
// line in each direction.
type stdioConn struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	log      *slog.Logger
	server   string
	limit    int64
	incoming chan stdioRead
	closed   chan struct{} // closed by Close
	exited   chan struct{} // closed when the process has exited
	waitErr  error         // why it exited; set before exited closes
	readDone chan struct{} // closed when readLoop stops reading stdout
	doneOnce sync.Once

	writeMu   sync.Mutex
	closeOnce sync.Once
	queue     []jsonrpc.Message // the rest of a batch; only Read touches it
}

type stdioRead struct {
	msgs []jsonrpc.Message
	err  error
}

// readLoop reads lines until stdout ends, handing decoded messages to Read.
// A line that is not JSON-RPC is logged and skipped, unless it was a reply
// (a "jsonrpc" key and an id) that did not decode: that request gets an
// error saying so. A line over the message bound (or nested too deep) is
// read on without being kept and dropped; when it answered a request, that
// request gets an error saying so (limit.go).
func (c *stdioConn) readLoop(stdout io.Reader) {
	stopReading := func() { c.doneOnce.Do(func() { close(c.readDone) }) }
	defer stopReading()
	r := bufio.NewReaderSize(stdout, 64<<10)
	send := func(x stdioRead) bool {
		select {
		case c.incoming <- x:
			return true
		case <-c.closed:
			return false
		}
	}
	for {
		scan := &msgScan{}
		answered, closed := false, false // the refusal of an over-bound reply was sent; Close was called
		refuse := func() bool {
			resp := scan.refusal(c.server, c.limit)
			if resp == nil {
				return true
			}
			answered = true
			c.log.Warn("upstream reply dropped", "error", resp.Error)
			closed = !send(stdioRead{msgs: []jsonrpc.Message{resp}})
			return !closed
		}
		line, err := readLine(r, c.limit, scan, refuse)
		if errors.Is(err, errOverBounds) {
			if !answered && refuse() && !answered {
				c.log.Warn("upstream wrote a stdout line over the message bounds; skipped", "bytes", scan.n, "limit", c.limit, "max_depth", config.MaxMessageDepth)
			}
			if closed {
				return
			}
			continue
		}
		if len(bytes.TrimSpace(line)) > 0 {
			msgs, derr := decodeLine(line)
			switch resp := scan.undecodable(c.server, derr); {
			case derr == nil:
				if !send(stdioRead{msgs: msgs}) {
					return
				}
			case resp != nil:
				c.log.Warn("upstream reply dropped", "error", resp.Error, "line", clip(string(line), 200))
				if !send(stdioRead{msgs: []jsonrpc.Message{resp}}) {
					return
				}
			default:
				c.log.Warn("upstream wrote a stdout line that is not JSON-RPC; skipped", "line", clip(string(line), 200), "error", derr)
			}
		}
		if err != nil {
			stopReading()
			if errors.Is(err, io.EOF) {
				<-c.exited // report how the process ended
				err = io.EOF
				if c.waitErr != nil {
					err = fmt.Errorf("the server exited: %v: %w", c.waitErr, io.EOF)
				}
			}
			send(stdioRead{err: err})
			return
		}
	}
}

// errOverBounds reports a line over the message bounds (limit.go).
var errOverBounds = errors.New("message over the bounds")

// errExited fails a write to a stdio server that had already exited: the
// request never reached it.
var errExited = errors.New("the server had exited")

// readLine reads one line without its newline, feeding every byte of it to
// scan. A line over the bounds (limit bytes, or too deep) is consumed
// without being kept and reported as errOverBounds; crossed is called as
// soon as it is over them, before the rest is read, and reading goes on
// only while it returns true.
func readLine(r *bufio.Reader, limit int64, scan *msgScan, crossed func() bool) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		scan.Write(chunk)
		if scan.over(limit) {
			line = nil
			goOn := crossed()
			for goOn && errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = r.ReadSlice('\n')
				scan.Write(chunk)
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
			return nil, errOverBounds
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// decodeLine decodes one line: a JSON-RPC message or a batch of them.
func decodeLine(line []byte) ([]jsonrpc.Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(line, &raws); err != nil {
			return nil, err
		}
		if len(raws) == 0 {
			return nil, errors.New("empty batch")
		}
		msgs := make([]jsonrpc.Message, 0, len(raws))
		for _, raw := range raws {
			m, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, m)
		}
		return msgs, nil
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, err
	}
	return []jsonrpc.Message{m}, nil
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case x := <-c.incoming:
		if x.err != nil {
			return nil, x.err
		}
		c.queue = x.msgs[1:]
		return x.msgs[0], nil
	}
}

// Write writes msg and its newline to the server's stdin in one write
// call, unbuffered and under writeMu: every message reaches the pipe whole
// and at once, never held back until the next one, never interleaved with
// another writer's.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.exited:
		return c.exitError()
	default:
	}
	if _, err = c.stdin.Write(append(data, '\n')); err != nil {
		// A broken pipe is a server that is exiting: say how it ended.
		select {
		case <-c.exited:
			return c.exitError()
		case <-time.After(stopGrace):
		}
	}
	return err
}

// exitError is the error of a write to a server that had exited.
func (c *stdioConn) exitError() error {
	if c.waitErr != nil {
		return fmt.Errorf("%w (%v): %w", errExited, c.waitErr, sdk.ErrConnectionClosed)
	}
	return fmt.Errorf("%w: %w", errExited, sdk.ErrConnectionClosed)
}

// Close closes the server's stdin and waits for it to exit, sending SIGTERM
// and then SIGKILL (to its process group) when it does not in time.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		// Not under writeMu: closing the pipe is what ends a write stuck on
		// a server that stopped reading.
		_ = c.stdin.Close()
		select {
		case <-c.exited:
			return
		case <-time.After(stopGrace):
		}
		signalGroup(c.cmd, false)
		select {
		case <-c.exited:
			return
		case <-time.After(stopGrace):
		}
		signalGroup(c.cmd, true)
		<-c.exited
	})
	return nil
}

// abort ends the connection at once: the server is killed rather than
// given stopGrace to exit, for one that has stopped answering (liveness.go).
func (c *stdioConn) abort() {
	select {
	case <-c.exited:
	default:
		signalGroup(c.cmd, true)
	}
	c.Close()
}

func (c *stdioConn) SessionID() string { return "" }

// watchTransport wraps a transport's connections to see what the go-sdk
// client does not keep: the raw tools/list results (a tool's
// execution.taskSupport, and tools the go-sdk drops as invalid).
//
// It also hands the server's progress and log notifications to onNotify in
// the reading goroutine, in the order they arrived, so that the
// notifications a server sent before a result are delivered before the call
// that awaits it returns (the go-sdk runs notification handlers apart from
// the delivery of results). Those onNotify consumes the go-sdk never sees.
//
// And it stamps heard with the arrival of every message (liveness.go).
type watchTransport struct {
	sdk.Transport
	onTools   func(raw []json.RawMessage, size int) // size: the bytes of the page
	onNotify  func(r *jsonrpc.Request) (consumed bool)
	needsTask func(tool string) bool // tools called as tasks (upstream_tasks.go)
	heard     *heard

	conn *watchConn // the connection made; set by Connect
}

func (t *watchTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.heard.stamp()
	t.conn = &watchConn{Connection: c, onTools: t.onTools, onNotify: t.onNotify, heard: t.heard, pending: map[jsonrpc.ID]bool{},
		tasks: upstreamTasks{needsTask: t.needsTask}}
	return t.conn, nil
}

// abort closes the connection, killing a stdio server at once.
func (c *watchConn) abort() {
	if a, ok := c.Connection.(interface{ abort() }); ok {
		a.abort()
		return
	}
	c.Connection.Close()
}

type watchConn struct {
	sdk.Connection
	onTools  func(raw []json.RawMessage, size int)
	onNotify func(r *jsonrpc.Request) bool
	heard    *heard

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool // outgoing tools/list calls; guarded by mu

	tasks upstreamTasks // calls made as tasks (upstream_tasks.go)
}

func (c *watchConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok {
		if r.IsCall() && r.Method == "tools/list" {
			c.mu.Lock()
			c.pending[r.ID] = true
			c.mu.Unlock()
		}
		for _, req := range c.tasks.cancelled(r) {
			if err := c.Connection.Write(ctx, req); err != nil {
				return err
			}
		}
		msg = c.tasks.augment(r)
	}
	return c.Connection.Write(ctx, msg)
}

// Read returns the next message for the go-sdk: notifications onNotify
// consumes and the answers of the tasks' own requests are not.
func (c *watchConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.read(ctx)
		if err != nil {
			return msg, err
		}
		if out, ok := c.readTasks(ctx, msg); ok {
			return out, nil
		}
	}
}

func (c *watchConn) read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	for err == nil {
		c.heard.stamp()
		r, ok := msg.(*jsonrpc.Request)
		if !ok || r.IsCall() || c.onNotify == nil || !c.onNotify(r) {
			break
		}
		msg, err = c.Connection.Read(ctx)
	}
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		mine := c.pending[r.ID]
		delete(c.pending, r.ID)
		c.mu.Unlock()
		if mine && r.Error == nil {
			var page struct {
				Tools []json.RawMessage `json:"tools"`
			}
			if json.Unmarshal(r.Result, &page) == nil {
				c.onTools(page.Tools, len(r.Result))
			}
		}
	}
	return msg, err
}

// lastingTransport connects its transport under a context that lasts as
// long as the upstream runs (life), while the attempt that connects stays
// bounded by its own context: the legacy SSE transport ties its event
// stream to the context it connects with.
type lastingTransport struct {
	sdk.Transport
	life context.Context
}

func (t *lastingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	type result struct {
		c   sdk.Connection
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := t.Transport.Connect(t.life)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, context.Cause(ctx)
	}
}

// lineLogger logs what a stdio server writes to its stderr, a line at a
// time. exec copies stderr from one goroutine, so it needs no lock.
type lineLogger struct {
	log *slog.Logger
	msg string
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
			l.log.Info(l.msg, "line", string(line))
		}
		l.buf = l.buf[i+skip:]
	}
}

// clip shortens s to at most n bytes for a log line, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
