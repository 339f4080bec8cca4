package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/examples/tools"
	"github.com/codemode/codemode/internal/bytesize"
	"github.com/codemode/codemode/internal/positive"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sdkgen"
)

// Config is the whole configuration.
type Config struct {
	Listen     string                 `yaml:"listen"`
	Store      string                 `yaml:"store"`
	Durability string                 `yaml:"durability"` // "full" (a flush per group commit, the default) or "process"
	Mode       string                 `yaml:"mode"`
	Isolation  string                 `yaml:"isolation"` // "process" (worker processes, the default) or "inproc"
	Demo       *bool                  `yaml:"demo"`
	DemoState  DemoState              `yaml:"demo_state"`
	Limits     Limits                 `yaml:"limits"`
	SDK        SDK                    `yaml:"sdk"`
	Server     Server                 `yaml:"server"`
	Approvals  Approvals              `yaml:"approvals"`
	Scopes     map[string]ScopeConfig `yaml:"scopes"`
	Policies   []Policy               `yaml:"policies"`
	Guards     []Guard                `yaml:"guards"`
	MCPServers []MCPServer            `yaml:"mcp_servers"`
	// OpenAPISources are HTTP APIs whose operations join a scope as tools.
	OpenAPISources []OpenAPISource `yaml:"openapi_sources"`
	APIKeys        []APIKey        `yaml:"api_keys"`
	Log            Log             `yaml:"log"`
	Sessions       Sessions        `yaml:"sessions"`
}

// Log configures the process's log (standard error).
type Log struct {
	Format string `yaml:"format"` // "text" (the default) or "json"
	Level  string `yaml:"level"`  // "debug", "info" (the default), "warn" or "error"
}

// Sessions configures the sessions kept in the store.
type Sessions struct {
	Retention Retention `yaml:"retention"`
}

// Retention is what `codemode serve` keeps of the session log: every
// Interval it deletes the sessions not updated for MaxAge and those beyond
// the MaxCount most recently updated. A zero MaxAge or MaxCount sets no
// limit; with both zero nothing is deleted.
type Retention struct {
	MaxAge   Duration `yaml:"max_age"`
	MaxCount int      `yaml:"max_count" check:"nonnegative; 0: no limit"`
	Interval Duration `yaml:"interval" check:"positive"`
}

// SDK shapes what a model reads of the tools.
type SDK struct {
	// PromptBudget bounds run_code's description in o200k tokens: the whole SDK while it fits,
	// a catalog with tools.$search past it; -1 means no bound.
	PromptBudget int `yaml:"prompt_budget"`
}

// Limits bound one run.
type Limits struct {
	Timeout             Duration `yaml:"timeout" check:"positive"`
	MaxSubCalls         int      `yaml:"max_sub_calls" check:"positive"`
	MaxSubCallArgsBytes Size     `yaml:"max_sub_call_args_bytes" check:"positive"` // arguments of all of a run's tool calls together
	MaxParallelSubCalls int      `yaml:"max_parallel_sub_calls" check:"positive"`
	MaxLogBytes         Size     `yaml:"max_log_bytes" check:"positive"`
	MaxResultBytes      Size     `yaml:"max_result_bytes" check:"positive"`
	// MaxContentBytes bounds what a model sees of one run (the run_code
	// content); the value a program or client receives is not cut.
	MaxContentBytes Size `yaml:"max_content_bytes"`
	// MaxSubCallBytes bounds the value one tool call hands a program.
	MaxSubCallBytes Size `yaml:"max_sub_call_bytes" check:"positive"`
	Memory          Size `yaml:"memory" check:"nonnegative"`
	// MaxToolsPerScope bounds the tools registered in one scope (its own,
	// upstreams' and OpenAPI sources' together, not counting inherited
	// ones); past it a tool is refused and reported where its source is
	// (GET /v1/upstreams rejected, GET /v1/openapi_sources left_out).
	MaxToolsPerScope int `yaml:"max_tools_per_scope" check:"positive"`
}

// Server protects the HTTP service.
type Server struct {
	MaxBodyBytes     Size     `yaml:"max_body_bytes" check:"positive"`
	MaxInflightRuns  int      `yaml:"max_inflight_runs" check:"positive"`
	MaxQueuedRuns    int      `yaml:"max_queued_runs" check:"nonnegative"`
	RateLimit        int      `yaml:"rate_limit" check:"nonnegative"` // requests per key (or client address) per RateWindow; 0: none
	RateWindow       Duration `yaml:"rate_window"`
	RequestTimeout   Duration `yaml:"request_timeout" check:"positive"`
	ShutdownGrace    Duration `yaml:"shutdown_grace" check:"nonnegative"`
	AllowNonLoopback bool     `yaml:"allow_non_loopback"` // listen beyond loopback without API keys
	// MemoryBudget bounds, service-wide, the sum of the memory limits of the
	// runs admitted and the request bodies being served; 0 means three
	// quarters of the machine's memory (its cgroup limit when it has one).
	MemoryBudget Size `yaml:"memory_budget" check:"nonnegative; 0: three quarters of the machine's memory"`
	// AllowedOrigins are origins ("https://app.example.com") other than the
	// server's own whose browser pages may send state-changing requests.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AllowedHosts are Host names other than loopback ones that requests may
	// name when the server listens on loopback (a proxy's public name).
	AllowedHosts         []string `yaml:"allowed_hosts"`
	MaxStreams           int      `yaml:"max_streams" check:"positive"`             // open event streams, in all
	MaxStreamsPerSession int      `yaml:"max_streams_per_session" check:"positive"` // open event streams of one session
	StreamWriteTimeout   Duration `yaml:"stream_write_timeout" check:"positive"`    // one write to an event stream; a reader slower than this is dropped
	// WriteTimeout bounds each write of any other reply (replies are
	// written 64 KiB at a time): a client that does not take a write
	// within this has its connection closed, so that it pins no reply.
	WriteTimeout   Duration `yaml:"write_timeout" check:"positive"`
	MaxMCPSessions int      `yaml:"max_mcp_sessions" check:"positive"` // MCP sessions open at once over /mcp, in all scopes
}

// DemoState bounds the demo tools' state (kv entries and files), which
// lives in memory per session. When it is full, writes are refused; no
// session's state is ever evicted for another's.
type DemoState struct {
	MaxSessions     int      `yaml:"max_sessions" check:"positive"`      // sessions holding state at once
	MaxTotalBytes   Size     `yaml:"max_total_bytes" check:"positive"`   // all sessions together
	MaxSessionBytes Size     `yaml:"max_session_bytes" check:"positive"` // one session's keys, values, paths and files
	MaxEntries      int      `yaml:"max_entries" check:"positive"`       // keys, and files, per session
	MaxValueBytes   Size     `yaml:"max_value_bytes" check:"positive"`   // one kv value, file or util_echo value
	IdleTTL         Duration `yaml:"idle_ttl"`                           // state unused this long is released; 0: never
}

// Approvals configure asks.
type Approvals struct {
	// Hold: a program whose call waits on an ask longer than this suspends
	// (over HTTP); it resumes by replay once the ask is answered.
	Hold    Duration `yaml:"hold" check:"positive"`
	Timeout Duration `yaml:"timeout" check:"positive"` // an ask nobody answers within this is denied
}

// ScopeConfig declares a scope.
type ScopeConfig struct {
	Parent   string    `yaml:"parent"`
	Mode     string    `yaml:"mode"`
	Restrict *Restrict `yaml:"restrict"`
	// Pinned names tools a catalog shows whole first, in this order, when the scope's SDK is
	// over sdk.prompt_budget.
	Pinned []string `yaml:"pinned"`
}

// Restrict is an allow or a deny mask.
type Restrict struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// Policy is a pre-policy rule: for calls in Scope (and its descendants) of
// tools matching the glob Tool, decide.
type Policy struct {
	Scope    string `yaml:"scope"`
	Tool     string `yaml:"tool"`
	Decision string `yaml:"decision"`
	Reason   string `yaml:"reason"`
}

// Guard is an owner veto for matching calls.
type Guard struct {
	Scope  string `yaml:"scope"`
	Tool   string `yaml:"tool"`
	Reason string `yaml:"reason"`
}

// MCPServer is an upstream MCP server whose tools join a scope as
// "<name>.<tool>".
type MCPServer struct {
	Name    string            `yaml:"name"`
	Command []string          `yaml:"command"`
	URL     string            `yaml:"url"`
	Scope   string            `yaml:"scope"`
	Env     map[string]string `yaml:"env"`
	Timeout Duration          `yaml:"timeout" check:"nonnegative"` // one call; default DefaultMCPTimeout
	// ConnectTimeout bounds one connection attempt (start, handshake, first
	// tools/list); default: timeout when set, else DefaultMCPConnectTimeout.
	ConnectTimeout Duration `yaml:"connect_timeout" check:"nonnegative"`
	// Transport of a url upstream: "auto" (the default: streamable HTTP, then
	// the legacy HTTP+SSE transport when the server refuses it with a 4xx),
	// "streamable-http" or "sse".
	Transport string `yaml:"transport"`
	// Headers are sent with every HTTP request to a url upstream; values
	// expand ${VAR} from the environment.
	Headers map[string]string `yaml:"headers"`
	Auth    *MCPAuth          `yaml:"auth"`
	// Liveness watches the connection while calls to it wait.
	Liveness Liveness `yaml:"liveness"`
	// MaxMessageBytes bounds one message read from the server (a stdio
	// line, an HTTP reply's JSON body or event); zero: DefaultMaxMessageBytes.
	// A reply over it (or nested deeper than MaxMessageDepth) fails the call
	// it answers at once.
	MaxMessageBytes Size `yaml:"max_message_bytes" check:"nonnegative"`
	// MaxTools bounds the tools registered from the server: beyond it, the
	// first MaxTools in the server's order are. MaxListPages and
	// MaxListBytes bound one tools/list: its cursors are not followed past
	// them. Zero: the defaults.
	MaxTools     int  `yaml:"max_tools" check:"nonnegative"`
	MaxListPages int  `yaml:"max_list_pages" check:"nonnegative"`
	MaxListBytes Size `yaml:"max_list_bytes" check:"nonnegative"`
}

// The defaults of an upstream MCP server's timeouts, and of
// server.max_mcp_sessions. Package mcp applies them; they are written here
// because mcp imports config.
const (
	// DefaultMCPTimeout bounds one upstream call when MCPServer.Timeout is
	// zero.
	DefaultMCPTimeout = 60 * time.Second
	// DefaultMCPConnectTimeout bounds one connection attempt (start,
	// handshake, first listing) when neither connect_timeout nor timeout is
	// set.
	DefaultMCPConnectTimeout = 30 * time.Second
	// DefaultMaxMCPSessions bounds the MCP sessions open at once over /mcp:
	// an idle one holds little (BENCHMARKS.md, "Figures behind the code's
	// choices") until it ends (DELETE, or mcp.DefaultSessionTimeout).
	DefaultMaxMCPSessions = 1024
)

// The bounds of what an upstream may send. A message is bounded at four
// times limits.max_sub_call_bytes' default, room for a result that carries
// its value twice (content and structuredContent) and JSON's escaping,
// while ten such replies in flight stay under 200 MiB.
const (
	DefaultMaxMessageBytes = 4 * bridge.DefaultMaxSubCallBytes
	// MaxMessageDepth bounds the nesting of one message, far below what a
	// decoder refuses (Go's encoding/json: 10,000).
	MaxMessageDepth = 512
	// A catalog of 5,000 tools registers in seconds and is far past what a
	// model can choose from; 100 pages of a listing are more than any
	// server needs for that many, and 64 MiB of them bound what one
	// listing may hold in memory however its pages are cut.
	DefaultMaxTools     = 5000
	DefaultMaxListPages = 100
	DefaultMaxListBytes = 64 << 20
)

// ToolBounds are the bounds of the server's catalog, defaults applied.
func (m MCPServer) ToolBounds() (tools, pages int, bytes int64) {
	return positive.Or(m.MaxTools, DefaultMaxTools), positive.Or(m.MaxListPages, DefaultMaxListPages),
		int64(positive.Or(m.MaxListBytes, DefaultMaxListBytes))
}

// MessageBytes is the bound of one message read from the server.
func (m MCPServer) MessageBytes() int64 {
	return int64(positive.Or(m.MaxMessageBytes, DefaultMaxMessageBytes))
}

// Liveness bounds how long an upstream may stay silent while calls to it
// are outstanding. "Silent" counts from the last message received from it,
// or from when the oldest outstanding call began if that is later. After
// Idle of silence codemode pings it (again whenever a ping ends unanswered);
// after Idle+PingTimeout it is reported unresponsive; after FailAfter its
// outstanding calls fail with "upstream NAME is not answering" and it is
// restarted. StallAfter is per call: a call with no reply and no progress
// for that long is logged once, naming its upstream, tool and call id.
// Zero values take the defaults (Resolved).
type Liveness struct {
	Idle        Duration `yaml:"idle" check:"nonnegative"`
	PingTimeout Duration `yaml:"ping_timeout" check:"nonnegative"`
	FailAfter   Duration `yaml:"fail_after" check:"nonnegative"`
	StallAfter  Duration `yaml:"stall_after" check:"nonnegative"`
}

// The liveness defaults. A healthy server answers a ping in milliseconds,
// even while a long call runs, so 5s of silence is worth a ping and 5s more
// without an answer is unresponsive; 20s fails the calls before the default
// run timeout (limits.timeout, sandbox.DefaultTimeout) would
// (TestLivenessFailsBeforeTheRunTimeout), leaving two more pings the chance
// to wake the server.
const (
	DefaultLivenessIdle        = 5 * time.Second
	DefaultLivenessPingTimeout = 5 * time.Second
	DefaultLivenessFailAfter   = 20 * time.Second
	DefaultLivenessStallAfter  = 10 * time.Second
)

// Resolved is l with its zero values set to the defaults.
func (l Liveness) Resolved() Liveness {
	l.Idle = positive.Or(l.Idle, Duration(DefaultLivenessIdle))
	l.PingTimeout = positive.Or(l.PingTimeout, Duration(DefaultLivenessPingTimeout))
	l.FailAfter = positive.Or(l.FailAfter, Duration(DefaultLivenessFailAfter))
	l.StallAfter = positive.Or(l.StallAfter, Duration(DefaultLivenessStallAfter))
	return l
}

// MCPAuth authenticates codemode to a url upstream: a static bearer token,
// or the OAuth 2.1 client credentials grant (token_url given, or discovered
// from the server's 401 through its protected resource metadata). Values
// expand ${VAR} from the environment.
type MCPAuth struct {
	Bearer       string   `yaml:"bearer"`
	ClientID     string   `yaml:"client_id"`
	ClientSecret string   `yaml:"client_secret"`
	TokenURL     string   `yaml:"token_url"`
	Scopes       []string `yaml:"scopes"`
}

// OpenAPISource is an HTTP API described by an OpenAPI 3.0 or 3.1 document
// (JSON or YAML): each operation it selects joins the scope as the tool
// "<name>.<operation>". Requests go only to BaseURL's scheme, host and
// port; headers and auth are added by the host and never reach programs
// or the log. Values of headers and auth expand ${VAR} from the
// environment.
type OpenAPISource struct {
	Name string `yaml:"name"`
	// File or URL is the document. A URL document is fetched at start with
	// the headers and auth only when it is on BaseURL's origin.
	File string `yaml:"file"`
	URL  string `yaml:"url"`
	// BaseURL is where operations' paths are requested; default: the
	// document's first server (resolved against URL when relative).
	BaseURL string            `yaml:"base_url"`
	Scope   string            `yaml:"scope"`
	Headers map[string]string `yaml:"headers"`
	Auth    *OpenAPIAuth      `yaml:"auth"`
	// Include and Exclude select operations: each entry is an operationId
	// glob, or "tag:GLOB", "path:GLOB", "method:GET" (globs: * matches any
	// run of characters, / included). No include selects every operation;
	// exclude applies after include.
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`
	// Timeout bounds one request, retries included; default
	// DefaultOpenAPITimeout.
	Timeout Duration `yaml:"timeout" check:"nonnegative"`
	// MaxResponseBytes bounds one response body; default
	// DefaultOpenAPIMaxResponseBytes. A larger one fails the call without
	// being read further.
	MaxResponseBytes Size `yaml:"max_response_bytes" check:"nonnegative"`
	// MaxConcurrency bounds the requests in flight to the API; default
	// DefaultOpenAPIMaxConcurrency. A call past it waits (within its
	// timeout).
	MaxConcurrency int `yaml:"max_concurrency" check:"nonnegative"`
	// Retries is how many times an idempotent operation (GET, HEAD, PUT,
	// DELETE, OPTIONS) is retried after a connection failure or a 429, 502,
	// 503 or 504; default DefaultOpenAPIRetries, -1 for none. Other
	// operations are never retried.
	Retries int `yaml:"retries"`
	// MaxDocumentBytes bounds the document; default
	// DefaultOpenAPIMaxDocumentBytes. MaxOperations bounds the operations
	// registered; default DefaultMaxTools (max_tools'): past it, the first
	// ones in document order are.
	MaxDocumentBytes Size `yaml:"max_document_bytes" check:"nonnegative"`
	MaxOperations    int  `yaml:"max_operations" check:"nonnegative"`
}

// The OpenAPI source defaults.
const (
	DefaultOpenAPITimeout          = 30 * time.Second
	DefaultOpenAPIMaxResponseBytes = 4 << 20
	DefaultOpenAPIMaxConcurrency   = 8
	DefaultOpenAPIRetries          = 2
	DefaultOpenAPIMaxDocumentBytes = 64 << 20
)

// Resolved is s with its zero values set to the defaults (Retries -1
// becomes 0).
func (s OpenAPISource) Resolved() OpenAPISource {
	s.Timeout = positive.Or(s.Timeout, Duration(DefaultOpenAPITimeout))
	s.MaxResponseBytes = positive.Or(s.MaxResponseBytes, DefaultOpenAPIMaxResponseBytes)
	s.MaxConcurrency = positive.Or(s.MaxConcurrency, DefaultOpenAPIMaxConcurrency)
	s.MaxDocumentBytes = positive.Or(s.MaxDocumentBytes, DefaultOpenAPIMaxDocumentBytes)
	s.MaxOperations = positive.Or(s.MaxOperations, DefaultMaxTools)
	switch {
	case s.Retries == 0:
		s.Retries = DefaultOpenAPIRetries
	case s.Retries < 0:
		s.Retries = 0
	}
	if s.Scope == "" {
		s.Scope = DefaultScope
	}
	return s
}

// OpenAPIAuth authenticates codemode to an HTTP API: a bearer token, an
// API key (in a header or a query parameter), or the OAuth 2.1 client
// credentials grant. Exactly one of bearer, api_key and client_id is given.
type OpenAPIAuth struct {
	Bearer string `yaml:"bearer"`
	APIKey string `yaml:"api_key"`
	// In ("header" or "query") and Name place the API key; defaults: the
	// document's first apiKey security scheme, else header X-API-Key.
	In   string `yaml:"in"`
	Name string `yaml:"name"`
	// ClientID, ClientSecret, TokenURL and Scopes are the client
	// credentials grant; TokenURL defaults to the document's OAuth 2
	// clientCredentials flow.
	ClientID     string   `yaml:"client_id"`
	ClientSecret string   `yaml:"client_secret"`
	TokenURL     string   `yaml:"token_url"`
	Scopes       []string `yaml:"scopes"`
}

// MCP transports of a url upstream.
const (
	TransportAuto       = "auto"
	TransportStreamable = "streamable-http"
	TransportSSE        = "sse"
)

// ExpandEnv expands ${VAR} (and $VAR) in s from the environment; a
// variable that is not set is an error naming it, so a missing secret is
// not sent as an empty one.
func ExpandEnv(s string) (string, error) {
	var missing []string
	out := os.Expand(s, func(k string) string {
		v, ok := os.LookupEnv(k)
		if !ok {
			missing = append(missing, k)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// ExpandHeaders expands ${VAR} in each configured header value
// (ExpandEnv); an unset variable is an error naming the header.
func ExpandHeaders(headers map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(headers))
	for _, k := range sortedKeys(headers) {
		x, err := ExpandEnv(headers[k])
		if err != nil {
			return nil, fmt.Errorf("headers.%s: %w", k, err)
		}
		out[k] = x
	}
	return out, nil
}

// Expanded is a with ${VAR} expanded (ExpandEnv) in its bearer token and
// client credentials; an unset variable is an error naming the key
// ("auth.bearer: …").
func (a MCPAuth) Expanded() (MCPAuth, error) {
	err := expandAuth(authValue{"bearer", &a.Bearer}, authValue{"client_id", &a.ClientID}, authValue{"client_secret", &a.ClientSecret})
	return a, err
}

// Expanded is a with ${VAR} expanded (ExpandEnv) in its bearer token, API
// key and client credentials; an unset variable is an error naming the key
// ("auth.api_key: …").
func (a OpenAPIAuth) Expanded() (OpenAPIAuth, error) {
	err := expandAuth(authValue{"bearer", &a.Bearer}, authValue{"api_key", &a.APIKey},
		authValue{"client_id", &a.ClientID}, authValue{"client_secret", &a.ClientSecret})
	return a, err
}

// authValue is an auth value to expand, and its key.
type authValue struct {
	key string
	v   *string
}

// expandAuth expands the values that are set, in order.
func expandAuth(values ...authValue) error {
	for _, a := range values {
		if *a.v == "" {
			continue
		}
		x, err := ExpandEnv(*a.v)
		if err != nil {
			return fmt.Errorf("auth.%s: %w", a.key, err)
		}
		*a.v = x
	}
	return nil
}

// APIKey maps the SHA-256 of a key to the scopes it may use.
type APIKey struct {
	SHA256 string   `yaml:"sha256"`
	Scopes []string `yaml:"scopes"`
}

// DefaultScope is the scope that always exists and holds the demo tools.
const DefaultScope = "default"

// Default returns the configuration `codemode serve` uses with no file.
func Default() Config {
	return Config{
		Listen:     "127.0.0.1:8080",
		Store:      DefaultStore(),
		Durability: "full",
		Mode:       "both",
		Isolation:  "process",
		// Each limit's default is its owner's: the package that applies it.
		Limits: Limits{
			Timeout:             Duration(sandbox.DefaultTimeout),
			MaxSubCalls:         sandbox.DefaultMaxCalls,
			MaxSubCallArgsBytes: sandbox.DefaultMaxCallBytes,
			MaxParallelSubCalls: runtime.DefaultWindow,
			MaxLogBytes:         sandbox.DefaultMaxLogBytes,
			MaxResultBytes:      sandbox.DefaultMaxResultBytes,
			MaxContentBytes:     bridge.DefaultMaxContentBytes,
			MaxSubCallBytes:     bridge.DefaultMaxSubCallBytes,
			Memory:              sandbox.DefaultMemory,
			MaxToolsPerScope:    registry.DefaultMaxLayerTools,
		},
		// The server's limits are applied only by package http, which
		// imports config: they are written here.
		Server: Server{
			MaxBodyBytes:         1 << 20,
			MaxInflightRuns:      16,
			MaxQueuedRuns:        64,
			RateLimit:            0,
			RateWindow:           Duration(time.Minute),
			RequestTimeout:       Duration(5 * time.Minute),
			ShutdownGrace:        Duration(30 * time.Second),
			MaxStreams:           256,
			MaxStreamsPerSession: 8,
			StreamWriteTimeout:   Duration(10 * time.Second),
			WriteTimeout:         Duration(30 * time.Second),
			MaxMCPSessions:       DefaultMaxMCPSessions,
		},
		DemoState: DemoState{
			MaxSessions:     tools.DefaultMaxSessions,
			MaxTotalBytes:   tools.DefaultMaxTotalBytes,
			MaxSessionBytes: tools.DefaultMaxSessionBytes,
			MaxEntries:      tools.DefaultMaxEntries,
			MaxValueBytes:   tools.DefaultMaxValueBytes,
			IdleTTL:         Duration(tools.DefaultIdleTTL),
		},
		Approvals: Approvals{Hold: Duration(agent.DefaultHold), Timeout: Duration(agent.DefaultApprovalTimeout)},
		SDK:       SDK{PromptBudget: sdkgen.DefaultPromptBudget},
		Log:       Log{Format: "text", Level: "info"},
		Sessions:  Sessions{Retention: Retention{Interval: Duration(10 * time.Minute)}},
	}
}

// DefaultStore is the store of a configuration that names none: the
// SQLite file codemode.db in the user's data directory,
// $XDG_DATA_HOME/codemode, else ~/.local/share/codemode (created on
// first use), else codemode.db in the working directory when there is no
// home directory.
func DefaultStore() string {
	dir := os.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "sqlite://codemode.db"
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return "sqlite://" + filepath.Join(dir, "codemode", "codemode.db")
}

// SQLitePath returns the file of a sqlite:// store URL; ok is false for
// other stores and for an in-memory SQLite database.
func SQLitePath(store string) (path string, ok bool) {
	p, ok := strings.CutPrefix(store, "sqlite://")
	if !ok || p == "" || p == ":memory:" {
		return "", false
	}
	return p, true
}

// DemoEnabled reports whether the demo tool pack is served (default true).
func (c *Config) DemoEnabled() bool { return c.Demo == nil || *c.Demo }

// Load reads the configuration: the defaults, then the file (path "" means
// none), then the CODEMODE_* environment variables (see Env); flags are the
// caller's to apply over the result, and to validate again.
func Load(file string) (Config, error) {
	c := Default()
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return Config{}, errorf("%v", err)
		}
		if c, err = decode(data); err != nil {
			return Config{}, err
		}
	}
	if err := c.ApplyEnv(os.LookupEnv, os.Environ()...); err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// Parse reads YAML over the defaults and validates the result. It does not
// read the environment.
func Parse(r io.Reader) (Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return Config{}, errorf("%v", err)
	}
	c, err := decode(data)
	if err != nil {
		return Config{}, err
	}
	return c, c.Validate()
}

// decode reads YAML over the defaults: unknown keys and values of the wrong
// type (a fraction for an integer) are errors naming the key.
func decode(data []byte) (Config, error) {
	c := Default()
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Config{}, errorf("%s", yamlError(data, err))
	}
	if err := checkKnown(&root, reflect.TypeOf(c), ""); err != nil {
		return Config{}, errorf("%v", err)
	}
	if err := checkIntegers(&root, reflect.TypeOf(c), ""); err != nil {
		return Config{}, errorf("%v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, errorf("%s", yamlError(data, err))
	}
	return c, nil
}

var (
	yamlFieldRE = regexp.MustCompile(`^line (\d+): field (\S+) not found in type \S+$`)
	lineRE      = regexp.MustCompile(`^line (\d+): `)
)

// yamlError turns yaml's messages into one line that names each key.
func yamlError(data []byte, err error) string {
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	keys := keyLines(data)
	for i, m := range msgs {
		if f := yamlFieldRE.FindStringSubmatch(m); f != nil {
			n, _ := strconv.Atoi(f[1])
			key := f[2]
			if k, ok := keys[n]; ok {
				key = k
			}
			msgs[i] = fmt.Sprintf("unknown key %q", key)
		} else if l := lineRE.FindStringSubmatch(m); l != nil {
			n, _ := strconv.Atoi(l[1])
			if k, ok := keys[n]; ok {
				msgs[i] = k + ": " + m[len(l[0]):]
			}
		}
	}
	return strings.Join(msgs, "; ")
}

// keyLines maps each line of a YAML document to the dotted key defined on
// it; on a line with several keys (a flow map) the last one. Unknown keys
// are named by checkKnown, which walks the document beside the type, so
// this serves the other messages, which carry only a line.
func keyLines(data []byte) map[int]string {
	keys := map[int]string{}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return keys
	}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, prefix)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if prefix != "" {
					k = prefix + "." + k
				}
				keys[n.Content[i].Line] = k
				walk(n.Content[i+1], k)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				k := fmt.Sprintf("%s[%d]", prefix, i)
				if _, ok := keys[c.Line]; !ok {
					keys[c.Line] = k
				}
				walk(c, k)
			}
		}
	}
	walk(&root, "")
	return keys
}

var (
	nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)
	hexRE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// headerNameRE is RFC 9110's token.
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// Error is a configuration error: one line naming the key (or the
// environment variable) and what is wrong. Every command exits with status
// 2 on one.
type Error struct{ msg string }

func (e *Error) Error() string { return "config: " + e.msg }

// errorf returns an *Error.
func errorf(format string, args ...any) error {
	return &Error{fmt.Sprintf(format, args...)}
}

// Errorf returns an *Error for a configuration problem found outside this
// package (a glob that matches no tool, once the tools are known).
func Errorf(format string, args ...any) error { return errorf(format, args...) }

// bad is the error of one key.
func bad(key, format string, args ...any) error {
	return errorf("%s: %s", key, fmt.Sprintf(format, args...))
}

// Validate checks values and references, in the order of the file's
// sections; the error (an *Error) names the first bad key.
func (c *Config) Validate() error {
	for _, check := range []func() error{
		c.validateTop, c.validateLimits, c.validateServer, c.validateDemoState,
		c.validateLog, c.validateSessions, c.validateScopes, c.validatePolicies,
		c.validateMCPServers, c.validateOpenAPISources, c.validateAPIKeys,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateTop() error {
	switch {
	case !validListen(c.Listen):
		return bad("listen", "want HOST:PORT, got %q", c.Listen)
	case !validStore(c.Store):
		return bad("store", "want sqlite://FILE, postgres://… or memory://, got %q", c.Store)
	case c.Durability != "full" && c.Durability != "process":
		return bad("durability", "want full or process, got %q", c.Durability)
	case !validMode(c.Mode):
		return bad("mode", "want native, code or both, got %q", c.Mode)
	case c.Isolation != "inproc" && c.Isolation != "process":
		return bad("isolation", "want process or inproc, got %q", c.Isolation)
	}
	return checkSigns("approvals", c.Approvals)
}

func validListen(s string) bool {
	_, _, err := net.SplitHostPort(s)
	return err == nil
}

func (c *Config) validateLimits() error {
	if err := checkSigns("limits", c.Limits); err != nil {
		return err
	}
	switch {
	case c.Limits.MaxContentBytes < 1<<10:
		return bad("limits.max_content_bytes", "must be at least 1KiB")
	case c.SDK.PromptBudget != -1 && c.SDK.PromptBudget < 500:
		return bad("sdk.prompt_budget", "must be at least 500 tokens (the program contract alone is about 450), or -1 for no bound; got %d", c.SDK.PromptBudget)
	}
	return nil
}

func (c *Config) validateServer() error {
	s := c.Server
	if err := checkSigns("server", s); err != nil {
		return err
	}
	switch {
	case s.RateLimit > 0 && s.RateWindow <= 0:
		return bad("server.rate_window", "must be positive")
	case s.MemoryBudget > 0 && s.MemoryBudget < c.Limits.Memory+s.MaxBodyBytes:
		return bad("server.memory_budget", "%s cannot admit a single run (limits.memory %s plus server.max_body_bytes %s)",
			bytesize.Format(int64(s.MemoryBudget)), bytesize.Format(int64(c.Limits.Memory)), bytesize.Format(int64(s.MaxBodyBytes)))
	}
	for i, o := range s.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			return bad(fmt.Sprintf("server.allowed_origins[%d]", i), "%v", err)
		}
	}
	for i, h := range s.AllowedHosts {
		if !hostRE.MatchString(h) {
			return bad(fmt.Sprintf("server.allowed_hosts[%d]", i), "want a host name or address without scheme or port, got %q", h)
		}
	}
	return nil
}

func (c *Config) validateDemoState() error {
	return checkSigns("demo_state", c.DemoState)
}

func (c *Config) validateLog() error {
	switch c.Log.Format {
	case "text", "json":
	default:
		return bad("log.format", "want text or json, got %q", c.Log.Format)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return bad("log.level", "want debug, info, warn or error, got %q", c.Log.Level)
	}
	return nil
}

func (c *Config) validateSessions() error {
	return checkSigns("sessions", c.Sessions)
}

func (c *Config) validateScopes() error {
	for _, name := range sortedKeys(c.Scopes) {
		sc := c.Scopes[name]
		key := "scopes." + name
		if !nameRE.MatchString(name) {
			return bad(key, "invalid scope name")
		}
		if name == DefaultScope {
			if sc.Parent != "" {
				return bad(key+".parent", "the default scope has no parent")
			}
		} else if sc.Parent != "" && !c.HasScope(sc.Parent) {
			return bad(key+".parent", "unknown scope %q", sc.Parent)
		}
		if sc.Mode != "" && !validMode(sc.Mode) {
			return bad(key+".mode", "want native, code or both, got %q", sc.Mode)
		}
		if r := sc.Restrict; r != nil {
			if (len(r.Allow) == 0) == (len(r.Deny) == 0) {
				return bad(key+".restrict", "give exactly one non-empty list: allow or deny")
			}
		}
		for i, name := range sc.Pinned {
			if name == "" {
				return bad(fmt.Sprintf("%s.pinned[%d]", key, i), "must name a tool")
			}
		}
	}
	return c.checkCycles()
}

// validatePolicies checks policies and guards; whether their globs match a
// tool is checked where the tools are known (package app).
func (c *Config) validatePolicies() error {
	for i, p := range c.Policies {
		key := fmt.Sprintf("policies[%d]", i)
		if err := c.checkRule(key, p.Scope, p.Tool); err != nil {
			return err
		}
		switch p.Decision {
		case "allow", "deny", "ask":
		default:
			return bad(key+".decision", "want allow, deny or ask, got %q", p.Decision)
		}
	}
	for i, g := range c.Guards {
		if err := c.checkRule(fmt.Sprintf("guards[%d]", i), g.Scope, g.Tool); err != nil {
			return err
		}
	}
	return nil
}

// checkRule checks what a policy and a guard share: the scope they apply to
// ("" for every scope) and the glob of the tools they match.
func (c *Config) checkRule(key, scope, tool string) error {
	if scope != "" && !c.HasScope(scope) {
		return bad(key+".scope", "unknown scope %q", scope)
	}
	if err := checkGlob(tool); err != nil {
		return bad(key+".tool", "%v", err)
	}
	return nil
}

var serverNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

func (c *Config) validateMCPServers() error {
	seen := map[string]bool{}
	for i, m := range c.MCPServers {
		key := fmt.Sprintf("mcp_servers[%d]", i)
		if err := c.checkSource(key, m.Name, m.URL, m.Scope, m, seen); err != nil {
			return err
		}
		switch {
		case (len(m.Command) == 0) == (m.URL == ""):
			return bad(key, "give exactly one of command and url")
		case m.Transport != "" && m.Transport != TransportAuto && m.Transport != TransportStreamable && m.Transport != TransportSSE:
			return bad(key+".transport", "want auto, streamable-http or sse, got %q", m.Transport)
		case m.URL == "" && (m.Transport != "" || len(m.Headers) > 0 || m.Auth != nil):
			return bad(key, "transport, headers and auth apply to url upstreams only")
		}
		if err := checkLiveness(key+".liveness", m.Liveness); err != nil {
			return err
		}
		if err := checkHeaders(key, m); err != nil {
			return err
		}
		if err := checkAuth(key, m); err != nil {
			return err
		}
	}
	return nil
}

// checkSource checks what MCP servers and OpenAPI sources share, and marks
// name seen: a name unique among both (it prefixes their tools), an http(s)
// url when one is given, a known scope, and the signs of src's fields.
func (c *Config) checkSource(key, name, url, scope string, src any, seen map[string]bool) error {
	switch {
	case !serverNameRE.MatchString(name):
		return bad(key+".name", "want 1-32 letters, digits, _ or -, got %q", name)
	case seen[name]:
		return bad(key+".name", "duplicate name %q (mcp_servers and openapi_sources share names: they prefix tool names)", name)
	case url != "" && !isHTTPURL(url):
		return bad(key+".url", "want an http(s) URL, got %q", url)
	case scope != "" && !c.HasScope(scope):
		return bad(key+".scope", "unknown scope %q", scope)
	}
	seen[name] = true
	return checkSigns(key, src)
}

func (c *Config) validateOpenAPISources() error {
	seen := map[string]bool{}
	for _, m := range c.MCPServers {
		seen[m.Name] = true
	}
	for i, o := range c.OpenAPISources {
		key := fmt.Sprintf("openapi_sources[%d]", i)
		if err := c.checkSource(key, o.Name, o.URL, o.Scope, o, seen); err != nil {
			return err
		}
		switch {
		case (o.File == "") == (o.URL == ""):
			return bad(key, "give exactly one of file and url (the OpenAPI document)")
		case o.BaseURL != "" && !isHTTPURL(o.BaseURL):
			return bad(key+".base_url", "want an http(s) URL, got %q", o.BaseURL)
		case o.Retries < -1 || o.Retries > 10:
			return bad(key+".retries", "want -1 (none) to 10, got %d", o.Retries)
		}
		if o.BaseURL != "" {
			if u, err := url.Parse(o.BaseURL); err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				return bad(key+".base_url", "want scheme://host[:port][/path] without credentials, query or fragment, got %q", o.BaseURL)
			}
		}
		for j, sel := range append(append([]string(nil), o.Include...), o.Exclude...) {
			list, n := "include", j
			if j >= len(o.Include) {
				list, n = "exclude", j-len(o.Include)
			}
			if err := checkSelector(sel); err != nil {
				return bad(fmt.Sprintf("%s.%s[%d]", key, list, n), "%v", err)
			}
		}
		for _, h := range sortedKeys(o.Headers) {
			if !headerNameRE.MatchString(h) {
				return bad(key+".headers", "invalid header name %q", h)
			}
		}
		if err := checkOpenAPIAuth(key, o); err != nil {
			return err
		}
	}
	return nil
}

// checkSelector accepts an include or exclude entry of an OpenAPI source.
func checkSelector(sel string) error {
	kind, value, found := strings.Cut(sel, ":")
	if !found {
		kind, value = "", sel
	}
	switch kind {
	case "", "tag", "path":
		if value == "" {
			return errors.New("an empty selector selects nothing")
		}
	case "method":
		switch strings.ToUpper(value) {
		case "GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE":
		default:
			return fmt.Errorf("unknown method %q", value)
		}
	default:
		return fmt.Errorf("want an operationId glob, tag:GLOB, path:GLOB or method:NAME, got %q", sel)
	}
	return nil
}

func checkOpenAPIAuth(key string, o OpenAPISource) error {
	a := o.Auth
	if a == nil {
		return nil
	}
	given := 0
	for _, v := range []string{a.Bearer, a.APIKey, a.ClientID} {
		if v != "" {
			given++
		}
	}
	switch {
	case given != 1:
		return bad(key+".auth", "give exactly one of bearer, api_key and client_id (with client_secret)")
	case a.APIKey == "" && (a.In != "" || a.Name != ""):
		return bad(key+".auth", "in and name place an api_key")
	case a.In != "" && a.In != "header" && a.In != "query":
		return bad(key+".auth.in", "want header or query, got %q", a.In)
	case a.Name != "" && a.In != "query" && !headerNameRE.MatchString(a.Name):
		return bad(key+".auth.name", "invalid header name %q", a.Name)
	case a.ClientID == "" && (a.ClientSecret != "" || a.TokenURL != "" || len(a.Scopes) > 0):
		return bad(key+".auth", "client_secret, token_url and scopes belong to client_id")
	case a.ClientID != "" && a.ClientSecret == "":
		return bad(key+".auth.client_secret", "the client credentials grant needs a client secret")
	case a.TokenURL != "" && !isHTTPURL(a.TokenURL):
		return bad(key+".auth.token_url", "want an http(s) URL, got %q", a.TokenURL)
	}
	for _, h := range sortedKeys(o.Headers) {
		if (a.Bearer != "" || a.ClientID != "") && strings.EqualFold(h, "Authorization") {
			return bad(key+".headers."+h, "conflicts with auth")
		}
	}
	return nil
}

func isHTTPURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

func checkLiveness(key string, l Liveness) error {
	r := l.Resolved()
	if r.FailAfter <= r.Idle+r.PingTimeout {
		return bad(key+".fail_after", "must exceed idle + ping_timeout (%v), got %v", (r.Idle + r.PingTimeout).Std(), r.FailAfter.Std())
	}
	return nil
}

func checkHeaders(key string, m MCPServer) error {
	for _, h := range sortedKeys(m.Headers) {
		if !headerNameRE.MatchString(h) {
			return bad(key+".headers", "invalid header name %q", h)
		}
		if strings.EqualFold(h, "Mcp-Session-Id") || strings.EqualFold(h, "Mcp-Protocol-Version") {
			return bad(key+".headers."+h, "is set by the MCP transport")
		}
	}
	return nil
}

func checkAuth(key string, m MCPServer) error {
	a := m.Auth
	if a == nil {
		return nil
	}
	switch {
	case (a.Bearer != "") == (a.ClientID != ""):
		return bad(key+".auth", "give either bearer or client_id (with client_secret)")
	case a.Bearer != "" && (a.ClientSecret != "" || a.TokenURL != "" || len(a.Scopes) > 0):
		return bad(key+".auth", "bearer takes no client_secret, token_url or scopes")
	case a.ClientID != "" && a.ClientSecret == "":
		return bad(key+".auth.client_secret", "the client credentials grant needs a client secret")
	case a.TokenURL != "" && !isHTTPURL(a.TokenURL):
		return bad(key+".auth.token_url", "want an http(s) URL, got %q", a.TokenURL)
	case a.TokenURL == "" && m.Transport == TransportSSE:
		return bad(key+".auth.token_url", "required with transport sse (discovery needs streamable HTTP)")
	}
	for _, h := range sortedKeys(m.Headers) {
		if strings.EqualFold(h, "Authorization") {
			return bad(key+".headers."+h, "conflicts with auth")
		}
	}
	return nil
}

func (c *Config) validateAPIKeys() error {
	for i, k := range c.APIKeys {
		key := fmt.Sprintf("api_keys[%d]", i)
		if !hexRE.MatchString(strings.ToLower(k.SHA256)) {
			return bad(key+".sha256", "want 64 hex digits (the SHA-256 of the key)")
		}
		if len(k.Scopes) == 0 {
			return bad(key+".scopes", "name at least one scope")
		}
		for j, s := range k.Scopes {
			if !c.HasScope(s) {
				return bad(fmt.Sprintf("%s.scopes[%d]", key, j), "unknown scope %q", s)
			}
		}
	}
	return nil
}

// HasScope reports whether a scope is declared (default always is).
func (c *Config) HasScope(name string) bool {
	if name == DefaultScope {
		return true
	}
	_, ok := c.Scopes[name]
	return ok
}

// ScopeOrder lists declared scopes parents first (default first).
func (c *Config) ScopeOrder() []string {
	order := []string{DefaultScope}
	done := map[string]bool{DefaultScope: true}
	for len(done) < len(c.Scopes)+1 {
		progress := false
		for _, name := range sortedKeys(c.Scopes) {
			if done[name] {
				continue
			}
			if p := c.Scopes[name].Parent; p == "" || done[p] {
				order = append(order, name)
				done[name] = true
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	return order
}

func (c *Config) checkCycles() error {
	for _, name := range sortedKeys(c.Scopes) {
		seen := map[string]bool{}
		for n := name; n != ""; n = c.Scopes[n].Parent {
			if seen[n] {
				return bad("scopes."+name+".parent", "scope parents form a cycle")
			}
			seen[n] = true
			if n == DefaultScope {
				break
			}
		}
	}
	return nil
}

// hostRE matches a host name, an IPv4 address or a bracketed IPv6 one.
var hostRE = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,62})?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62})?)*\.?|\[[0-9A-Fa-f:.]+\])$`)

// checkOrigin accepts a browser origin: scheme://host[:port], nothing more.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(o, "/") {
		return fmt.Errorf("want an origin such as https://app.example.com or http://localhost:3000, got %q", o)
	}
	return nil
}

func checkGlob(g string) error {
	if g == "" {
		return errors.New("a tool name or glob is required")
	}
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Errorf("bad glob %q: %v", g, err)
	}
	return nil
}

// MatchTool reports whether a tool name matches a policy glob.
func MatchTool(glob, name string) bool {
	ok, _ := path.Match(glob, name)
	return ok
}

func validMode(m string) bool { return m == "native" || m == "code" || m == "both" }

func validStore(s string) bool {
	for _, p := range []string{"sqlite://", "postgres://", "postgresql://", "memory://"} {
		if strings.HasPrefix(s, p) && (p == "memory://" || len(s) > len(p)) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// Duration is a time.Duration written as "30s", "5m".
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: invalid duration %q (want e.g. 30s, 5m)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Std returns the time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Size is a byte count written as "1MiB", "512KiB", "4MB" or a number.
type Size int64

var sizeRE = regexp.MustCompile(`^\s*(\d+)\s*([KMGT]i?B|B)?\s*$`)

// ParseSize reads a byte count.
func ParseSize(s string) (Size, error) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("invalid size %q (want e.g. 1MiB, 512KiB, 4096)", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	mult := map[string]int64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[m[2]]
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Size(n * mult), nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*s = v
	return nil
}
