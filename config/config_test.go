package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:8080" || c.Store != DefaultStore() || c.Durability != "full" || c.Mode != "both" || !c.DemoEnabled() {
		t.Fatalf("%+v", c)
	}
}

const contractExample = `
listen: 127.0.0.1:8080
store: sqlite://codemode.db          # or postgres://user@host/db
mode: both                           # the default scope's mode: native | code | both
isolation: inproc
limits:
  timeout: 30s
  max_sub_calls: 1000
  max_parallel_sub_calls: 10
  max_log_bytes: 1MiB
  max_result_bytes: 4MiB
  memory: 512MiB
scopes:
  readonly: {parent: default, restrict: {deny: [kv_set, files_write, files_edit]}}
  agent:    {parent: default, mode: code}
policies:
  - {scope: default, tool: "files_*", decision: ask, reason: "writes need a person"}
  - {scope: agent, tool: util_fail, decision: deny, reason: "not here"}
guards:
  - {scope: readonly, tool: "util_*", reason: "owner veto"}
mcp_servers:
  - {name: notes, command: [node, server.mjs], scope: default}
  - {name: remote, url: "http://127.0.0.1:9000/mcp", scope: agent}
api_keys:
  - {sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", scopes: [default, readonly]}
`

func TestLivenessResolved(t *testing.T) {
	c, err := Parse(strings.NewReader("mcp_servers:\n  - {name: a, command: [x], liveness: {idle: 1s, fail_after: 7s}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := c.MCPServers[0].Liveness.Resolved()
	want := Liveness{Idle: Duration(time.Second), PingTimeout: Duration(DefaultLivenessPingTimeout), FailAfter: Duration(7 * time.Second), StallAfter: Duration(DefaultLivenessStallAfter)}
	if got != want {
		t.Errorf("resolved %+v, want %+v", got, want)
	}
	if def := (Liveness{}).Resolved(); def.FailAfter <= def.Idle+def.PingTimeout {
		t.Errorf("the defaults fail their own check: %+v", def)
	}
}

func TestContractExample(t *testing.T) {
	c, err := Parse(strings.NewReader(contractExample))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.Timeout.Std() != 30*time.Second || c.Limits.MaxLogBytes != 1<<20 || c.Limits.Memory != 512<<20 {
		t.Fatalf("limits %+v", c.Limits)
	}
	if got := strings.Join(c.ScopeOrder(), ","); got != "default,agent,readonly" {
		t.Fatalf("order %s", got)
	}
	if len(c.Policies) != 2 || c.Policies[0].Decision != "ask" || !MatchTool(c.Policies[0].Tool, "files_write") || MatchTool(c.Policies[0].Tool, "kv_set") {
		t.Fatalf("policies %+v", c.Policies)
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"lisen: x", `unknown key "lisen"`},
		{"limits:\n  timout: 3s", `unknown key "limits.timout"`},
		// yaml names only the line and the field; on a flow map's line the
		// unknown key is not the line's last.
		{"approvals: {hodl: 1s, timeout: 10m}", `unknown key "approvals.hodl"`},
		{"approvals: {hold: 0s}", "approvals.hold"},
		{"limits: {timout: 3s, memory: 1GiB}", `unknown key "limits.timout"`},
		{"scopes:\n  a: {restrict: {alow: [x], deny: [y]}, mode: code}", `unknown key "scopes.a.restrict.alow"`},
		{"mcp_servers:\n  - {name: a, url: 'http://x', liveness: {idel: 1s, ping_timeout: 5s}}", `unknown key "mcp_servers[0].liveness.idel"`},
		{"limits:\n  timeout: 3s\n  nope: 1\nserver: {nope: 2}", `unknown key "limits.nope"; unknown key "server.nope"`},
		{"limits:\n  timeout: soon", "limits.timeout: invalid duration"},
		{"limits:\n  max_log_bytes: lots", "limits.max_log_bytes: invalid size"},
		{"limits:\n  max_sub_calls: 0", "limits.max_sub_calls: must be positive"},
		{"limits:\n  max_content_bytes: 100", "limits.max_content_bytes: must be at least 1KiB"},
		{"limits:\n  max_sub_call_bytes: 0", "limits.max_sub_call_bytes: must be positive"},
		{"mode: turbo", "mode: want native"},
		{"isolation: vm", "isolation:"},
		{"store: mysql://x", "store:"},
		{"durability: normal", `durability: want full or process, got "normal"`},
		{"durability: ''", "durability: want full or process"},
		{"listen: nowhere", "listen:"},
		{"scopes:\n  a: {parent: nope}", "scopes.a.parent: unknown scope"},
		{"scopes:\n  a: {parent: b}\n  b: {parent: a}", "cycle"},
		{"scopes:\n  a: {mode: fast}", "scopes.a.mode"},
		{"scopes:\n  a: {restrict: {}}", "scopes.a.restrict"},
		{"scopes:\n  a: {restrict: {allow: [x], deny: [y]}}", "scopes.a.restrict"},
		{"policies:\n  - {scope: ghost, tool: x, decision: deny}", "policies[0].scope: unknown scope"},
		{"policies:\n  - {tool: x, decision: maybe}", "policies[0].decision"},
		{"policies:\n  - {tool: '[', decision: deny}", "policies[0].tool: bad glob"},
		{"guards:\n  - {scope: ghost, tool: x}", "guards[0].scope"},
		{"openapi_sources:\n  - {name: a, file: x.json, bse_url: 'http://x'}", `unknown key "openapi_sources[0].bse_url"`},
		{"openapi_sources:\n  - {name: a, file: x.json, auth: {api_key: k, plce: query}}", `unknown key "openapi_sources[0].auth.plce"`},
		{"openapi_sources:\n  - {name: a}", "openapi_sources[0]: give exactly one of file and url"},
		{"mcp_servers:\n  - {name: a, command: [x]}\nopenapi_sources:\n  - {name: a, file: x}", "openapi_sources[0].name: duplicate name \"a\" (mcp_servers and openapi_sources share names"},
		{"openapi_sources:\n  - {name: a, file: x, base_url: 'http://u:p@h/'}", "openapi_sources[0].base_url: want scheme://host[:port][/path] without credentials"},
		{"openapi_sources:\n  - {name: a, file: x, include: ['verb:GET']}", "openapi_sources[0].include[0]: want an operationId glob, tag:GLOB, path:GLOB or method:NAME"},
		{"openapi_sources:\n  - {name: a, file: x, exclude: ['method:FETCH']}", "openapi_sources[0].exclude[0]: unknown method"},
		{"openapi_sources:\n  - {name: a, file: x, auth: {bearer: t, api_key: k}}", "openapi_sources[0].auth: give exactly one of bearer, api_key and client_id"},
		{"openapi_sources:\n  - {name: a, file: x, auth: {api_key: k, in: cookie}}", "openapi_sources[0].auth.in: want header or query"},
		{"openapi_sources:\n  - {name: a, file: x, auth: {client_id: c}}", "openapi_sources[0].auth.client_secret"},
		{"openapi_sources:\n  - {name: a, file: x, retries: 11}", "openapi_sources[0].retries"},
		{"openapi_sources:\n  - {name: a, file: x, scope: ghost}", "openapi_sources[0].scope: unknown scope"},
		{"mcp_servers:\n  - {name: a, scope: default}", "mcp_servers[0]: give exactly one"},
		{"mcp_servers:\n  - {name: a, url: ftp://x}", "mcp_servers[0].url"},
		{"mcp_servers:\n  - {name: a, url: 'http://x'}\n  - {name: a, url: 'http://y'}", "mcp_servers[1].name: duplicate"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', transport: grpc}", "mcp_servers[0].transport"},
		{"mcp_servers:\n  - {name: a, command: [x], transport: sse}", "mcp_servers[0]: transport, headers and auth apply to url upstreams only"},
		{"mcp_servers:\n  - {name: a, command: [x], headers: {X-A: b}}", "url upstreams only"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', headers: {'bad header': b}}", "mcp_servers[0].headers: invalid header name"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', headers: {mcp-session-id: b}}", "mcp_servers[0].headers.mcp-session-id: is set by the MCP transport"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', connect_timeout: -1s}", "mcp_servers[0].connect_timeout"},
		{"mcp_servers:\n  - {name: a, command: [x], liveness: {idle: 16s}}", "mcp_servers[0].liveness.fail_after: must exceed idle + ping_timeout (21s), got 20s"},
		{"mcp_servers:\n  - {name: a, command: [x], liveness: {fail_after: 10s}}", "mcp_servers[0].liveness.fail_after"},
		{"mcp_servers:\n  - {name: a, command: [x], liveness: {idle: -1s}}", "invalid duration"},
		{"mcp_servers:\n  - {name: a, command: [x], liveness: {every: 1s}}", "every"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', auth: {}}", "mcp_servers[0].auth: give either bearer or client_id"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', auth: {bearer: t, client_id: c}}", "mcp_servers[0].auth: give either"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', auth: {bearer: t, scopes: [s]}}", "mcp_servers[0].auth: bearer takes no"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', auth: {client_id: c}}", "mcp_servers[0].auth.client_secret"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', auth: {client_id: c, client_secret: s, token_url: 'ftp://t'}}", "mcp_servers[0].auth.token_url: want an http(s) URL"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', transport: sse, auth: {client_id: c, client_secret: s}}", "mcp_servers[0].auth.token_url: required with transport sse"},
		{"mcp_servers:\n  - {name: a, url: 'http://x', headers: {Authorization: x}, auth: {bearer: t}}", "mcp_servers[0].headers.Authorization: conflicts with auth"},
		{"api_keys:\n  - {sha256: abc, scopes: [default]}", "api_keys[0].sha256"},
		{"api_keys:\n  - {sha256: " + strings.Repeat("a", 64) + ", scopes: [ghost]}", "api_keys[0].scopes[0]: unknown scope"},
		{"demo: maybe", "demo"},
		{"demo_state:\n  max_sessions: 0", "demo_state.max_sessions: must be positive"},
		{"demo_state:\n  max_total_bytes: 0", "demo_state.max_total_bytes: must be positive"},
		{"demo_state:\n  max_session_bytes: 0", "demo_state.max_session_bytes"},
		{"demo_state:\n  max_entries: 0", "demo_state.max_entries"},
		{"demo_state:\n  max_value_bytes: 0", "demo_state.max_value_bytes"},
		{"demo_state:\n  idle_ttl: -1s", "demo_state.idle_ttl: invalid duration"},
		{"server:\n  max_streams: 0", "server.max_streams: must be positive"},
		{"server:\n  max_streams_per_session: 0", "server.max_streams_per_session"},
		{"server:\n  stream_write_timeout: 0s", "server.stream_write_timeout"},
		{"server:\n  write_timeout: 0s", "server.write_timeout: must be positive"},
		{"server:\n  memory_budget: lots", "server.memory_budget: invalid size"},
		{"limits: {memory: 512MiB}\nserver: {memory_budget: 256MiB}", "server.memory_budget: 256 MiB cannot admit a single run (limits.memory 512 MiB plus server.max_body_bytes 1 MiB)"},
		{"server:\n  max_inflight_runs: 0", "server.max_inflight_runs: must be positive"},
		{"server:\n  allowed_origins: [example.com]", "server.allowed_origins[0]: want an origin"},
		{"server:\n  allowed_origins: ['https://a.example', 'https://b.example/path']", "server.allowed_origins[1]"},
		{"server:\n  allowed_origins: ['https://a.example/']", "server.allowed_origins[0]"},
		{"server:\n  allowed_hosts: ['https://a.example']", "server.allowed_hosts[0]"},
		{"server:\n  allowed_hosts: ['a.example:80']", "server.allowed_hosts[0]"},
		{"limits:\n  max_sub_calls: 1.5", `limits.max_sub_calls: want an integer, got "1.5"`},
		{"server: {max_streams: 1e3}", `server.max_streams: want an integer, got "1e3"`},
		{"demo_state: {max_entries: many}", "demo_state.max_entries: want an integer"},
		{"log: {format: xml}", "log.format: want text or json"},
		{"log: {level: loud}", "log.level: want debug, info, warn or error"},
		{"sessions: {retention: {max_count: -1}}", "sessions.retention.max_count: must not be negative"},
		{"sessions: {retention: {interval: 0s}}", "sessions.retention.interval: must be positive"},
		{"sessions: {retention: {max_age: ever}}", "sessions.retention.max_age: invalid duration"},
		// Sign rules live on the fields (check tags): nested keys, notes, list elements.
		{"sessions: {retention: {max_count: -1}}", "sessions.retention.max_count: must not be negative (0: no limit)"},
		{"approvals: {hold: 0s}", "approvals.hold: must be positive"},
		{"mcp_servers:\n  - {name: a, command: [x], max_list_pages: -1}", "mcp_servers[0].max_list_pages: must not be negative"},
		{"openapi_sources:\n  - {name: a, file: x, max_operations: -1}", "openapi_sources[0].max_operations: must not be negative"},
		{"openapi_sources:\n  - {name: a, file: x, url: 'ftp://x'}", "openapi_sources[0].url: want an http(s) URL"},
		{"guards:\n  - {scope: ghost, tool: x}", "guards[0].scope: unknown scope"},
	}
	for _, tc := range cases {
		_, err := Parse(strings.NewReader(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%q: got %v, want %q on one line", tc.yaml, err, tc.want)
		}
	}
}

func TestMCPServerKeys(t *testing.T) {
	c, err := Parse(strings.NewReader(`mcp_servers:
  - name: remote
    url: https://mcp.example/mcp
    transport: sse
    timeout: 5s
    connect_timeout: 2s
    headers: {X-Team: "${TEAM}"}
    auth: {client_id: codemode, client_secret: "${SECRET}", token_url: "https://auth.example/token", scopes: [read]}
`))
	if err != nil {
		t.Fatal(err)
	}
	m := c.MCPServers[0]
	if m.Transport != TransportSSE || m.ConnectTimeout.Std() != 2*time.Second || m.Headers["X-Team"] != "${TEAM}" ||
		m.Auth == nil || m.Auth.ClientID != "codemode" || m.Auth.TokenURL != "https://auth.example/token" || len(m.Auth.Scopes) != 1 {
		t.Fatalf("parsed %+v (auth %+v)", m, m.Auth)
	}
}

func TestExpandEnv(t *testing.T) {
	t.Setenv("CODEMODE_TEST_TOKEN", "s3cret")
	if got, err := ExpandEnv("Bearer ${CODEMODE_TEST_TOKEN}"); err != nil || got != "Bearer s3cret" {
		t.Fatalf("got %q, %v", got, err)
	}
	if got, err := ExpandEnv("plain"); err != nil || got != "plain" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := ExpandEnv("${CODEMODE_TEST_UNSET_A}-${CODEMODE_TEST_UNSET_B}"); err == nil ||
		!strings.Contains(err.Error(), "CODEMODE_TEST_UNSET_A, CODEMODE_TEST_UNSET_B") {
		t.Fatalf("unset variables: %v", err)
	}
}

func TestDurability(t *testing.T) {
	for _, d := range []string{"full", "process"} {
		c, err := Parse(strings.NewReader("durability: " + d))
		if err != nil || c.Durability != d {
			t.Errorf("durability: %s: %q, %v", d, c.Durability, err)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]Size{"4096": 4096, "1KiB": 1024, "1MiB": 1 << 20, "2MB": 2e6, "3GiB": 3 << 30, "0": 0} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("%s: %d %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1", "1XB", "1.5MiB", "99999999999999999999TiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(contractExample)
	f.Add("limits: {timeout: 1s}")
	f.Add("scopes: {a: {parent: a}}")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.NewReader(s))
		if err == nil {
			if err := c.Validate(); err != nil {
				t.Fatalf("parsed config fails validation: %v", err)
			}
			_ = c.ScopeOrder()
		}
	})
}

func TestSafetyKeys(t *testing.T) {
	d := Default()
	if d.Server.MemoryBudget != 0 || d.Server.MaxStreams != 256 || d.Server.MaxStreamsPerSession != 8 || d.Server.StreamWriteTimeout.Std() != 10*time.Second {
		t.Fatalf("server defaults %+v", d.Server)
	}
	if d.DemoState != (DemoState{MaxSessions: 1000, MaxTotalBytes: 256 << 20, MaxSessionBytes: 8 << 20, MaxEntries: 1000, MaxValueBytes: 1 << 20, IdleTTL: Duration(24 * time.Hour)}) {
		t.Fatalf("demo_state defaults %+v", d.DemoState)
	}
	c, err := Parse(strings.NewReader(`
server:
  memory_budget: 6GiB
  allowed_origins: ["https://app.example.com", "http://localhost:3000"]
  allowed_hosts: [codemode.internal, "[::1]", 10.0.0.7]
  max_streams: 10
  max_streams_per_session: 2
  stream_write_timeout: 3s
demo_state: {max_sessions: 5, max_total_bytes: 1MiB, idle_ttl: 0s}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server
	if s.MemoryBudget != 6<<30 || len(s.AllowedOrigins) != 2 || len(s.AllowedHosts) != 3 || s.MaxStreams != 10 || s.MaxStreamsPerSession != 2 || s.StreamWriteTimeout.Std() != 3*time.Second {
		t.Fatalf("server %+v", s)
	}
	if c.DemoState.MaxSessions != 5 || c.DemoState.MaxTotalBytes != 1<<20 || c.DemoState.IdleTTL != 0 || c.DemoState.MaxEntries != 1000 {
		t.Fatalf("demo_state %+v", c.DemoState)
	}
}

// TestSignsOfGoValues: a Go embedder can set what YAML cannot (a negative
// size or duration); the same rules name it.
func TestSignsOfGoValues(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Server.MemoryBudget = -1 }, "server.memory_budget: must not be negative (0: three quarters of the machine's memory)"},
		{func(c *Config) { c.Limits.Memory = -1 }, "limits.memory: must not be negative"},
		{func(c *Config) { c.Limits.Timeout = 0 }, "limits.timeout: must be positive"},
		{func(c *Config) {
			c.MCPServers = []MCPServer{{Name: "a", Command: []string{"x"}, Liveness: Liveness{StallAfter: -1}}}
		}, "mcp_servers[0].liveness.stall_after: must not be negative"},
		{func(c *Config) {
			c.OpenAPISources = []OpenAPISource{{Name: "a", File: "x", Timeout: -1}}
		}, "openapi_sources[0].timeout: must not be negative"},
	} {
		c := Default()
		tc.set(&c)
		if err := c.Validate(); err == nil || err.Error() != "config: "+tc.want {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}

// TestCheckTags keeps every check tag one checkSigns knows, on an integer
// field: a typo would otherwise panic at the first Validate that reaches it.
func TestCheckTags(t *testing.T) {
	var walk func(reflect.Type)
	seen := 0
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft.PkgPath() == typ.PkgPath() {
				walk(ft)
			}
			rule, _, _ := strings.Cut(f.Tag.Get("check"), ";")
			if rule == "" {
				continue
			}
			seen++
			if rule != "positive" && rule != "nonnegative" {
				t.Errorf("%s.%s: unknown check %q", typ.Name(), f.Name, rule)
			}
			if k := f.Type.Kind(); k < reflect.Int || k > reflect.Int64 {
				t.Errorf("%s.%s: check on a %s", typ.Name(), f.Name, f.Type)
			}
		}
	}
	walk(reflect.TypeOf(Config{}))
	if seen < 40 {
		t.Errorf("found %d check tags; the walk misses some", seen)
	}
}
