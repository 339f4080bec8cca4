package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
)

// asCodemode makes the test binary, re-executed with it set, the codemode
// command: its `mcp` subcommand is the upstream of these tests.
const asCodemode = "CODEMODE_TEST_AS_CODEMODE"

func TestMain(m *testing.M) {
	if os.Getenv(asCodemode) != "" {
		os.Exit(runMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// upstreamConfig writes a configuration whose mcp_servers are an inner
// codemode serving its demo tools over stdio ("inner") plus extra entries.
func upstreamConfig(t *testing.T, extra string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := json.Marshal([]string{exe, "mcp", "--no-upstreams", "--store", "memory://"})
	yml := fmt.Sprintf("mcp_servers:\n  - {name: inner, command: %s, env: {%s: \"1\"}, connect_timeout: 60s}\n%s", cmd, asCodemode, extra)
	path := testkit.WriteFile(t, "codemode.yaml", yml)
	return path
}

func TestCommandsStartUpstreams(t *testing.T) {
	cfg := upstreamConfig(t, "")
	t.Run("tools", func(t *testing.T) {
		code, out, errs := runCLI(t, "", "tools", "--config", cfg)
		if code != 0 || !strings.Contains(out, "inner.math_add") || !strings.Contains(out, "inner.util_echo") {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
		}
	})
	t.Run("sdk", func(t *testing.T) {
		code, out, errs := runCLI(t, "", "sdk", "--config", cfg)
		if code != 0 || !strings.Contains(out, `"inner.math_add"(args: {`) {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
		}
	})
	t.Run("run", func(t *testing.T) {
		code, out, errs := runCLI(t, `return (await tools["inner.math_add"]({a: 40, b: 2})).sum`, "run", "--config", cfg, "-")
		if code != 0 || strings.TrimSpace(out) != "42" {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
		}
	})
	t.Run("--no-upstreams says it did not start them", func(t *testing.T) {
		code, out, errs := runCLI(t, "", "tools", "--config", cfg, "--no-upstreams")
		if code != 0 || strings.Contains(out, "inner.") || !strings.Contains(errs, "--no-upstreams: the 1 mcp_servers are not started") {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
		}
	})
}

func TestCommandsReportUpstreamsThatAreMissing(t *testing.T) {
	cfg := upstreamConfig(t, "  - {name: gone, command: [/nonexistent/mcp-server], connect_timeout: 5s}\n")
	code, out, errs := runCLI(t, "", "tools", "--config", cfg)
	if code != 0 || !strings.Contains(out, "inner.math_add") || strings.Contains(out, "gone.") ||
		!strings.Contains(errs, "upstream MCP server is not ready: its tools are missing\" upstream=gone state=failed") || !strings.Contains(errs, "command not found") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}

// TestServeUpstreams: serve is healthy at once, and GET /v1/upstreams and
// /v1/sdk show the upstream once it is ready.
func TestServeUpstreams(t *testing.T) {
	cfg := upstreamConfig(t, "  - {name: gone, command: [/nonexistent/mcp-server]}\n")
	addr, stop := startServe(t, "--addr", "127.0.0.1:0", "--store", "memory://", "--config", cfg)
	defer stop()
	get := func(path string) string {
		_, body := testkit.Get(t, "http://"+addr+path)
		return body
	}
	if h := get("/healthz"); !strings.Contains(h, "ok") {
		t.Fatalf("healthz %s", h)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var ups struct {
			Upstreams []struct {
				Name      string `json:"name"`
				State     string `json:"state"`
				LastError string `json:"last_error"`
				Tools     int    `json:"tools"`
			} `json:"upstreams"`
		}
		if err := json.Unmarshal([]byte(get("/v1/upstreams")), &ups); err != nil {
			t.Fatal(err)
		}
		if len(ups.Upstreams) == 2 && ups.Upstreams[0].State == "ready" && ups.Upstreams[1].State == "failed" {
			if ups.Upstreams[0].Tools == 0 || !strings.Contains(ups.Upstreams[1].LastError, "command not found") {
				t.Errorf("upstreams %+v", ups.Upstreams)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstreams never settled: %+v", ups.Upstreams)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if sdk := get("/v1/sdk"); !strings.Contains(sdk, `"inner.math_add"`) {
		t.Errorf("GET /v1/sdk lacks the upstream's tools:\n%s", sdk)
	}
}

// apiConfig writes a configuration whose openapi_sources is a one-operation
// API served by this test, with its key in the environment.
func apiConfig(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Key") != "cli-secret-key" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"sum": %s}`, r.URL.Query().Get("a"))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("CLI_API_KEY", "cli-secret-key")
	dir := t.TempDir()
	doc := filepath.Join(dir, "calc.yaml")
	os.WriteFile(doc, []byte("openapi: 3.1.0\ninfo: {title: calc, version: '1'}\npaths:\n  /add:\n    get:\n      operationId: add\n      summary: Adds a number to nothing.\n      parameters: [{name: a, in: query, required: true, schema: {type: integer}}]\n      responses:\n        '200': {description: ok, content: {application/json: {schema: {type: object, properties: {sum: {type: integer}}}}}}\n"), 0o644)
	path := filepath.Join(dir, "codemode.yaml")
	yml := fmt.Sprintf("openapi_sources:\n  - {name: calc, file: %q, base_url: %q, auth: {api_key: '${CLI_API_KEY}', name: X-Key}}\n", doc, srv.URL)
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCommandsLoadOpenAPISources: tools, sdk, run and serve all see an
// OpenAPI source's operations; --no-upstreams leaves them out and says so.
func TestCommandsLoadOpenAPISources(t *testing.T) {
	cfg := apiConfig(t)
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"tools", "", []string{"tools", "--config", cfg}, "calc.add"},
		{"sdk", "", []string{"sdk", "--config", cfg}, `"calc.add"(args: {`},
		{"run", `return (await tools["calc.add"]({a: 42})).sum`, []string{"run", "--config", cfg, "-"}, "42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tc.stdin, tc.args...)
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
			}
		})
	}
	t.Run("--no-upstreams", func(t *testing.T) {
		code, out, errs := runCLI(t, "", "tools", "--config", cfg, "--no-upstreams")
		if code != 0 || strings.Contains(out, "calc.") || !strings.Contains(errs, "--no-upstreams: the 1 openapi_sources are not started") {
			t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
		}
	})
	t.Run("serve", func(t *testing.T) {
		addr, stop := startServe(t, "--addr", "127.0.0.1:0", "--store", "memory://", "--config", cfg)
		defer stop()
		if _, b := testkit.Get(t, "http://"+addr+"/v1/openapi_sources"); !strings.Contains(b, `"name":"calc"`) || !strings.Contains(b, `"state":"ready"`) || !strings.Contains(b, `"operations":1`) {
			t.Fatalf("GET /v1/openapi_sources: %s", b)
		}
		if status, b := testkit.Get(t, "http://"+addr+"/readyz"); status != http.StatusOK || !strings.Contains(b, `"openapi:calc":{"ok":true`) {
			t.Fatalf("GET /readyz: %d %s", status, b)
		}
		_, b := testkit.Get(t, "http://"+addr+"/metrics")
		for _, m := range []string{`codemode_openapi_source_ready{source="calc"} 1`, `codemode_openapi_requests_total{source="calc"} 0`, `codemode_openapi_calls_in_flight{source="calc"} 0`} {
			if !strings.Contains(b, m) {
				t.Errorf("GET /metrics lacks %s", m)
			}
		}
	})
	t.Run("a bad document is one error at start", func(t *testing.T) {
		bad := testkit.WriteFile(t, "bad.yaml", "openapi_sources:\n  - {name: calc, file: /nonexistent/doc.json, base_url: 'http://127.0.0.1:1'}\n")
		code, _, errs := runCLI(t, "", "tools", "--config", bad)
		if code != 2 || !strings.Contains(errs, "openapi_sources[0] (calc): open /nonexistent/doc.json") {
			t.Fatalf("exit %d\nstderr %s", code, errs)
		}
	})
}
