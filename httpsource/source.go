package httpsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/bytesize"
	"github.com/codemode/codemode/openapi"
	"github.com/codemode/codemode/registry"
)

// States of a source.
const (
	StateReady   = "ready"  // its operations are registered
	StateFailed  = "failed" // its document could not be fetched; retried
	StateStopped = "stopped"
)

// State is what GET /v1/openapi_sources reports of one source.
type State struct {
	Name     string    `json:"name"`
	Scope    string    `json:"scope"`
	Document string    `json:"document"` // the file or URL
	BaseURL  string    `json:"base_url"`
	State    string    `json:"state"`
	Since    time.Time `json:"since"`
	// LastError is why the source is not ready, or the last failed
	// request's error ("" when none).
	LastError string `json:"last_error,omitempty"`
	// Operations counts the tools it contributes to its scope now.
	Operations int `json:"operations"`
	// Excluded counts the operations include/exclude left out, and
	// OverLimit those past max_operations.
	Excluded  int `json:"excluded,omitempty"`
	OverLimit int `json:"over_limit,omitempty"`
	// LeftOut lists the operations that did not convert, and why.
	LeftOut []LeftOut `json:"left_out,omitempty"`
	// Calls counts the requests in flight; Requests and Failures count
	// the requests sent (retries included) and the calls that failed.
	Calls    int   `json:"calls"`
	Requests int64 `json:"requests"`
	Failures int64 `json:"failures"`
}

// LeftOut is an operation of the document that is not a tool.
type LeftOut struct {
	Pointer string `json:"pointer"` // JSON pointer of the operation or path
	Reason  string `json:"reason"`
}

// Options tune Start. The zero value works.
type Options struct {
	Logger *slog.Logger
	// UserAgent is sent with every request; default "codemode".
	UserAgent string
	// Transport replaces http.DefaultTransport's settings (tests).
	Transport http.RoundTripper
}

// Sources are the running OpenAPI sources.
type Sources struct {
	list   []*source
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start loads every source's document, registers its operations in its
// scope, and returns the running sources. A document that is unreadable or
// not OpenAPI 3.0/3.1, an unset ${VAR} or a missing base URL is an error
// naming the entry; a URL document that can not be fetched leaves its
// source failed and retried in the background (GET /readyz says so).
func Start(ctx context.Context, reg *registry.Registry, cfgs []config.OpenAPISource, opts Options) (*Sources, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Sources{cancel: cancel}
	for i, cfg := range cfgs {
		src, err := newSource(reg, cfg.Resolved(), opts, log.With("openapi_source", cfg.Name))
		if err == nil {
			err = src.load(ctx)
		}
		var fetch *fetchError
		switch {
		case errors.As(err, &fetch):
			src.setFailed(err)
			src.log.Warn("OpenAPI document not fetched; retrying in the background", "err", err)
			s.wg.Add(1)
			go func() { defer s.wg.Done(); src.retry(bg) }()
		case err != nil:
			s.Close()
			return nil, fmt.Errorf("openapi_sources[%d] (%s): %w", i, cfg.Name, err)
		}
		s.list = append(s.list, src)
	}
	return s, nil
}

// States reports each source, in configuration order.
func (s *Sources) States() []State {
	if s == nil {
		return nil
	}
	out := make([]State, len(s.list))
	for i, src := range s.list {
		out[i] = src.state()
	}
	return out
}

// Close stops retrying and unregisters every source's tools.
func (s *Sources) Close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
	for _, src := range s.list {
		src.stop()
	}
}

// source is one configured API.
type source struct {
	cfg    config.OpenAPISource // defaults resolved
	reg    *registry.Registry
	log    *slog.Logger
	agent  string
	client *http.Client // requests to the API: same origin only
	creds  *credentials
	slots  chan struct{} // max_concurrency
	secret redactor

	mu         sync.Mutex
	base       *url.URL
	st         string
	since      time.Time
	lastErr    string
	ops        int
	excluded   int
	overLimit  int
	leftOut    []LeftOut
	unregister []func()

	calls, requests, failures atomic.Int64
}

func newSource(reg *registry.Registry, cfg config.OpenAPISource, opts Options, log *slog.Logger) (*source, error) {
	src := &source{cfg: cfg, reg: reg, log: log, agent: opts.UserAgent, slots: make(chan struct{}, cfg.MaxConcurrency)}
	if src.agent == "" {
		src.agent = "codemode"
	}
	next := opts.Transport
	if next == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxConnsPerHost = cfg.MaxConcurrency
		t.MaxIdleConnsPerHost = cfg.MaxConcurrency
		next = t
	}
	src.client = &http.Client{Transport: next, CheckRedirect: src.sameOrigin}
	creds, err := newCredentials(cfg, &src.secret)
	if err != nil {
		return nil, err
	}
	src.creds = creds
	return src, nil
}

// fetchError is a document that could not be fetched (the network, a
// status): worth retrying, unlike a document that is not OpenAPI.
type fetchError struct{ err error }

func (e *fetchError) Error() string { return e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

// load reads and parses the document and registers its operations.
func (s *source) load(ctx context.Context) error {
	b, err := s.document(ctx)
	if err != nil {
		return err
	}
	doc, err := openapi.Parse(b)
	if err != nil {
		return err
	}
	b = nil
	base, err := s.baseURL(doc)
	if err != nil {
		return err
	}
	if err := s.creds.complete(doc.Security()); err != nil {
		return err
	}
	ops, leftOut := doc.Usable()
	s.register(base, ops, leftOut)
	if len(ops) >= 1000 {
		// Decoding a large document takes several times what its tools
		// keep: hand that back to the system now.
		debug.FreeOSMemory()
	}
	return nil
}

// document reads the file or fetches the URL, within max_document_bytes.
func (s *source) document(ctx context.Context) ([]byte, error) {
	limit := int64(s.cfg.MaxDocumentBytes)
	if s.cfg.File != "" {
		f, err := os.Open(s.cfg.File)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readBounded(f, limit, "the document")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout.Std())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	req.Header.Set("User-Agent", s.agent)
	client := http.DefaultClient
	if s.cfg.BaseURL != "" && sameOrigin(mustParse(s.cfg.BaseURL), req.URL) {
		// The document lives with the API: it may need the API's credentials,
		// which must then not follow a redirect elsewhere.
		if err := s.creds.apply(req); err != nil {
			return nil, &fetchError{fmt.Errorf("fetch the document: %s", s.secret.redact(err.Error()))}
		}
		client = &http.Client{Transport: s.client.Transport, CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if !sameOrigin(via[0].URL, r.URL) {
				return fmt.Errorf("the document redirects to another origin (%s)", r.URL.Host)
			}
			return nil
		}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, &fetchError{fmt.Errorf("fetch the document: %s", s.secret.redact(describe(err)))}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &fetchError{fmt.Errorf("fetch the document: %s", resp.Status)}
	}
	b, err := readBounded(resp.Body, limit, "the document")
	if err != nil && !isTooLarge(err) {
		return nil, &fetchError{err}
	}
	return b, err
}

// tooLarge is a body past its bound.
type tooLarge struct {
	what  string
	limit int64
}

func (e *tooLarge) Error() string {
	return fmt.Sprintf("%s is larger than %s", e.what, bytesize.Format(e.limit))
}

func isTooLarge(err error) bool { var t *tooLarge; return errors.As(err, &t) }

// readBounded reads r to its end, failing without reading further once
// it passes limit.
func readBounded(r io.Reader, limit int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &tooLarge{what, limit}
	}
	return b, nil
}

// baseURL is base_url, else the document's first server, resolved against
// the document's URL when relative.
func (s *source) baseURL(doc *openapi.Document) (*url.URL, error) {
	raw := s.cfg.BaseURL
	if raw == "" {
		servers := doc.Servers()
		if len(servers) == 0 {
			return nil, errors.New("the document names no server: set base_url")
		}
		raw = servers[0]
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %v", raw, err)
	}
	if !u.IsAbs() {
		if s.cfg.URL == "" {
			return nil, fmt.Errorf("the document's server %q is relative: set base_url", raw)
		}
		u = mustParse(s.cfg.URL).ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("base URL %q: want http(s)://host[:port][/path]", u.Redacted())
	}
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{}
	}
	return u
}

// sameOrigin reports whether two URLs share scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return u.Host + ":443"
	}
	return u.Host + ":80"
}

// sameOrigin is the API client's redirect policy: a redirect stays on the
// base URL's origin (at most 5), or the call fails.
func (s *source) sameOrigin(r *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	if !sameOrigin(via[0].URL, r.URL) {
		return fmt.Errorf("refused a redirect to another origin (%s://%s)", r.URL.Scheme, r.URL.Host)
	}
	return nil
}

// register turns the selected operations into tools, in one registry
// change.
func (s *source) register(base *url.URL, ops []openapi.Operation, errs []*openapi.Error) {
	f := newFilter(s.cfg.Include, s.cfg.Exclude)
	var leftOut []LeftOut
	for _, e := range errs {
		leftOut = append(leftOut, LeftOut{Pointer: e.Pointer, Reason: e.Reason})
	}
	var selected []*openapi.Operation
	excluded, overLimit := 0, 0
	for i := range ops {
		switch {
		case !f.selects(&ops[i]):
			excluded++
		case len(selected) >= s.cfg.MaxOperations:
			overLimit++
		default:
			selected = append(selected, &ops[i])
		}
	}
	names := toolNames(s.cfg.Name, selected)
	type pending struct {
		op   *openapi.Operation
		tool *registry.Tool
		err  error
	}
	todo := make([]pending, len(selected))
	for i, op := range selected {
		todo[i].op = op
		todo[i].tool, todo[i].err = registry.Raw(s.definition(names[i], base, op))
	}
	var unregister []func()
	s.reg.Batch(func() {
		for _, p := range todo {
			if p.err == nil {
				var un func()
				if un, p.err = s.reg.Register(s.cfg.Scope, p.tool); p.err == nil {
					unregister = append(unregister, un)
					continue
				}
			}
			leftOut = append(leftOut, LeftOut{Pointer: p.op.Pointer, Reason: p.err.Error()})
		}
	})
	s.mu.Lock()
	s.base, s.unregister = base, unregister
	s.ops, s.excluded, s.overLimit, s.leftOut = len(unregister), excluded, overLimit, leftOut
	s.st, s.since, s.lastErr = StateReady, time.Now(), ""
	s.mu.Unlock()
	s.log.Info("OpenAPI source ready", "operations", len(unregister), "left_out", len(leftOut), "excluded", excluded, "over_limit", overLimit, "base_url", base.Redacted())
	for _, l := range leftOut {
		s.log.Debug("operation left out", "pointer", l.Pointer, "reason", l.Reason)
	}
}

// maxName is the MCP limit on a tool name's length.
const maxName = 128

// toolNames names each operation "<source>.<operation>", shortening a name
// past the MCP limit and keeping the names unique.
func toolNames(source string, ops []*openapi.Operation) []string {
	used := map[string]bool{}
	out := make([]string, len(ops))
	for i, op := range ops {
		name := source + "." + op.Name
		if len(name) > maxName {
			name = name[:maxName]
		}
		candidate := name
		for n := 2; used[candidate]; n++ {
			suffix := fmt.Sprintf("_%d", n)
			candidate = name[:min(len(name), maxName-len(suffix))] + suffix
		}
		used[candidate] = true
		out[i] = candidate
	}
	return out
}

// retry fetches a failed document again, backing off from 1s to 1m,
// until it loads or the sources close.
func (s *source) retry(ctx context.Context) {
	wait := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		err := s.load(ctx)
		if err == nil {
			return
		}
		s.setFailed(err)
		s.log.Warn("OpenAPI document still not loaded", "err", err, "retry_in", min(2*wait, time.Minute))
		wait = min(2*wait, time.Minute)
	}
}

func (s *source) setFailed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st != StateFailed {
		s.since = time.Now()
	}
	s.st, s.lastErr = StateFailed, s.secret.redact(err.Error())
}

func (s *source) stop() {
	s.mu.Lock()
	un := s.unregister
	s.unregister, s.ops, s.st, s.since = nil, 0, StateStopped, time.Now()
	s.mu.Unlock()
	s.reg.Batch(func() {
		for _, f := range un {
			f()
		}
	})
}

func (s *source) state() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc := s.cfg.File
	if doc == "" {
		doc = s.cfg.URL
	}
	st := State{
		Name: s.cfg.Name, Scope: s.cfg.Scope, Document: doc, State: s.st, Since: s.since,
		LastError: s.lastErr, Operations: s.ops, Excluded: s.excluded, OverLimit: s.overLimit,
		LeftOut:  s.leftOut,
		Calls:    int(s.calls.Load()),
		Requests: s.requests.Load(),
		Failures: s.failures.Load(),
	}
	if s.base != nil {
		st.BaseURL = s.base.String()
	}
	return st
}

// credentials add the configured headers and auth to a request.
type credentials struct {
	headers  map[string]string
	token    oauth2.TokenSource // bearer or client credentials; nil: none
	keyName  string             // the API key's header or query parameter
	keyIn    string             // "header" or "query"
	key      string
	cc       *clientcredentials.Config // token URL may come from the document
	redactor *redactor
}

func newCredentials(cfg config.OpenAPISource, r *redactor) (*credentials, error) {
	headers, err := config.ExpandHeaders(cfg.Headers)
	if err != nil {
		return nil, err
	}
	c := &credentials{headers: headers, redactor: r}
	for _, v := range headers {
		r.add(v)
	}
	if cfg.Auth == nil {
		return c, nil
	}
	a, err := cfg.Auth.Expanded()
	if err != nil {
		return nil, err
	}
	for _, v := range []string{a.Bearer, a.APIKey, a.ClientID, a.ClientSecret} {
		r.add(v)
	}
	switch {
	case a.Bearer != "":
		c.token = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: a.Bearer, TokenType: "Bearer"})
	case a.APIKey != "":
		c.key, c.keyIn, c.keyName = a.APIKey, a.In, a.Name
	default:
		c.cc = &clientcredentials.Config{ClientID: a.ClientID, ClientSecret: a.ClientSecret, TokenURL: a.TokenURL, Scopes: a.Scopes}
		if a.TokenURL != "" {
			c.token = oauth2.ReuseTokenSource(nil, c.cc.TokenSource(context.Background()))
		}
	}
	return c, nil
}

// complete fills what the configuration left to the document: the API
// key's place and the token URL.
func (c *credentials) complete(sec openapi.Security) error {
	if c.key != "" {
		if c.keyIn == "" && c.keyName == "" && sec.APIKeyIn != "" {
			c.keyIn, c.keyName = sec.APIKeyIn, sec.APIKeyName
		}
		if c.keyIn == "" {
			c.keyIn = "header"
		}
		if c.keyName == "" {
			c.keyName = "X-API-Key"
		}
	}
	if c.cc != nil && c.token == nil {
		if c.cc.TokenURL == "" {
			c.cc.TokenURL = sec.TokenURL
		}
		if c.cc.TokenURL == "" {
			return errors.New("auth: no token_url, and the document has no OAuth 2 client credentials flow")
		}
		c.token = oauth2.ReuseTokenSource(nil, c.cc.TokenSource(context.Background()))
	}
	return nil
}

// apply adds the headers and the credential to req.
func (c *credentials) apply(req *http.Request) error {
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	if c.token != nil {
		tok, err := c.token.Token()
		if err != nil {
			return fmt.Errorf("get an access token: %w", err)
		}
		c.redactor.addToken(tok.AccessToken)
		tok.SetAuthHeader(req)
	}
	if c.key != "" {
		in, name := c.keyIn, c.keyName
		if name == "" { // the document's own fetch, before complete
			in, name = "header", "X-API-Key"
		}
		if in == "query" {
			q := req.URL.Query()
			q.Set(name, c.key)
			req.URL.RawQuery = q.Encode()
		} else {
			req.Header.Set(name, c.key)
		}
	}
	return nil
}
