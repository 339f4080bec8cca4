package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func environ(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func TestEnvSetsKeys(t *testing.T) {
	env := map[string]string{
		"CODEMODE_LISTEN":                       "127.0.0.1:9999",
		"CODEMODE_STORE":                        "memory://",
		"CODEMODE_LIMITS_TIMEOUT":               "7s",
		"CODEMODE_LIMITS_MAX_SUB_CALLS":         "12",
		"CODEMODE_LIMITS_MAX_LOG_BYTES":         "2MiB",
		"CODEMODE_DEMO":                         "false",
		"CODEMODE_SERVER_ALLOW_NON_LOOPBACK":    "true",
		"CODEMODE_SERVER_ALLOWED_HOSTS":         "a.example, b.example",
		"CODEMODE_SERVER_ALLOWED_ORIGINS":       "[https://app.example]",
		"CODEMODE_SCOPES":                       "{ro: {parent: default, restrict: {deny: [kv_set]}}}",
		"CODEMODE_POLICIES":                     "[{tool: 'files_*', decision: ask}]",
		"CODEMODE_LOG_FORMAT":                   "json",
		"CODEMODE_SESSIONS_RETENTION_MAX_COUNT": "100",
		"CODEMODE_SESSIONS_RETENTION_MAX_AGE":   "48h",
		"CODEMODE_TEST_POSTGRES_URL":            "not configuration",
		"CODEMODE_SANDBOX_WORKER":               "1",
	}
	c := Default()
	if err := c.ApplyEnv(lookupIn(env), environ(env)...); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9999" || c.Store != "memory://" || c.Limits.Timeout.Std() != 7*time.Second ||
		c.Limits.MaxSubCalls != 12 || c.Limits.MaxLogBytes != 2<<20 || c.DemoEnabled() || !c.Server.AllowNonLoopback ||
		!reflect.DeepEqual(c.Server.AllowedHosts, []string{"a.example", "b.example"}) ||
		!reflect.DeepEqual(c.Server.AllowedOrigins, []string{"https://app.example"}) ||
		c.Scopes["ro"].Parent != "default" || c.Scopes["ro"].Restrict.Deny[0] != "kv_set" ||
		len(c.Policies) != 1 || c.Policies[0].Decision != "ask" || c.Log.Format != "json" ||
		c.Sessions.Retention.MaxCount != 100 || c.Sessions.Retention.MaxAge.Std() != 48*time.Hour {
		t.Fatalf("%+v", c)
	}
	// Keys left unset keep their defaults.
	if c.Limits.MaxParallelSubCalls != 10 || c.Server.MaxStreams != 256 {
		t.Fatalf("defaults lost: %+v", c)
	}
}

func TestEnvErrorsNameTheVariable(t *testing.T) {
	for env, want := range map[string]string{
		"CODEMODE_LIMITS_MAX_SUB_CALLS=1.5":                               `CODEMODE_LIMITS_MAX_SUB_CALLS: want an integer, got "1.5"`,
		"CODEMODE_LIMITS_TIMEOUT=soon":                                    "CODEMODE_LIMITS_TIMEOUT: invalid duration",
		"CODEMODE_LIMITS_MEMORY=lots":                                     "CODEMODE_LIMITS_MEMORY: invalid size",
		"CODEMODE_DEMO=maybe":                                             "CODEMODE_DEMO: want true or false",
		"CODEMODE_SCOPES=[oops":                                           "CODEMODE_SCOPES: want a YAML value",
		"CODEMODE_POLICIES=[{tool: x, decisin: y}]":                       "CODEMODE_POLICIES: ",
		"CODEMODE_SCOPES={a: {restrict: {alow: [x]}, mode: code}}":        `CODEMODE_SCOPES: unknown key "a.restrict.alow"`,
		"CODEMODE_MCP_SERVERS=[{name: a, url: 'http://x', timeout: 1.5}]": "CODEMODE_MCP_SERVERS: ",
		"CODEMODE_LIMITS_TIMOUT=3s":                                       "CODEMODE_LIMITS_TIMOUT: names no configuration key",
		"CODEMODE_SESSIONS_RETENTION_MAXAGE=1h":                           "CODEMODE_SESSIONS_RETENTION_MAXAGE: names no configuration key",
	} {
		name, val, _ := strings.Cut(env, "=")
		m := map[string]string{name: val}
		c := Default()
		err := c.ApplyEnv(lookupIn(m), environ(m)...)
		var ce *Error
		if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &ce) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want a config error with %q", env, err, want)
		}
	}
	// An integer list entry is checked like the file's.
	m := map[string]string{"CODEMODE_API_KEYS": "[{sha256: x, scopes: [1.5]}]"}
	c := Default()
	if err := c.ApplyEnv(lookupIn(m)); err != nil {
		t.Fatalf("string list of a number: %v", err)
	}
}

// TestPrecedence: the environment beats the file, which beats the defaults.
func TestPrecedence(t *testing.T) {
	file := t.TempDir() + "/c.yaml"
	if err := os.WriteFile(file, []byte("limits: {timeout: 5s, max_sub_calls: 7}\nlisten: 127.0.0.1:1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CODEMODE_LIMITS_TIMEOUT", "9s")
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.Timeout.Std() != 9*time.Second || c.Limits.MaxSubCalls != 7 || c.Listen != "127.0.0.1:1234" || c.Limits.MaxParallelSubCalls != 10 {
		t.Fatalf("%+v", c.Limits)
	}
	t.Setenv("CODEMODE_LIMITS_MAX_SUB_CALLS", "x")
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "CODEMODE_LIMITS_MAX_SUB_CALLS") {
		t.Fatalf("bad variable: %v", err)
	}
}

func TestKeysAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := Keys()
	if len(keys) < 40 {
		t.Fatalf("only %d keys found", len(keys))
	}
	for _, k := range keys {
		if !strings.Contains(string(table), "| `"+k.Path+"` | `"+k.Env+"` |") {
			t.Errorf("docs/config.md has no row for %s (%s)", k.Path, k.Env)
		}
		leaf := k.Path[strings.LastIndex(k.Path, ".")+1:]
		if !strings.Contains(string(doc), "//\t"+strings.Repeat("  ", strings.Count(k.Path, "."))+leaf+":") {
			t.Errorf("the package doc does not list %s", k.Path)
		}
	}
}

func TestDefaultStore(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	if got := DefaultStore(); got != "sqlite:///data/codemode/codemode.db" {
		t.Fatalf("with XDG_DATA_HOME: %s", got)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := DefaultStore(); got != "sqlite:///home/u/.local/share/codemode/codemode.db" {
		t.Fatalf("without XDG_DATA_HOME: %s", got)
	}
	if p, ok := SQLitePath("sqlite:///a/b.db"); !ok || p != "/a/b.db" {
		t.Fatal(p)
	}
	for _, s := range []string{"memory://", "postgres://x", "sqlite://:memory:"} {
		if _, ok := SQLitePath(s); ok {
			t.Errorf("%s is not a file", s)
		}
	}
}

// FuzzApplyEnv: any value of any variable is applied or refused with an
// error naming the variable; never a panic.
func FuzzApplyEnv(f *testing.F) {
	f.Add(0, "1.5")
	f.Add(1, "[{tool: x, decision: ask}]")
	f.Add(2, "{a: {parent: default}}")
	f.Fuzz(func(t *testing.T, i int, val string) {
		keys := Keys()
		k := keys[(i%len(keys)+len(keys))%len(keys)]
		c := Default()
		err := c.ApplyEnv(lookupIn(map[string]string{k.Env: val}))
		if err != nil && !strings.Contains(err.Error(), k.Env) {
			t.Fatalf("%s=%q: error does not name the variable: %v", k.Env, val, err)
		}
	})
}
