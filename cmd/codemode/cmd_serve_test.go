package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
)

var serveAddrRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startServe runs `codemode serve args…` until the returned stop is called;
// it returns the address from the "listening" log line.
func startServe(t *testing.T, args ...string) (addr string, stop func() int) {
	t.Helper()
	addr, _, stop = startServeLine(t, args...)
	return addr, stop
}

// startServeLine is startServe that also returns the "listening" line.
func startServeLine(t *testing.T, args ...string) (addr, line string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody is reading any more; keep draining
			}
		}
	}()
	timeout := time.After(30 * time.Second)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				cancel()
				t.Fatalf("serve exited before listening (status %d)", <-code)
			}
			if m := serveAddrRE.FindStringSubmatch(l); m != nil {
				addr, line = m[1], l
			}
		case <-timeout:
			cancel()
			t.Fatal("serve did not log its address")
		}
	}
	stopped := false
	var status int
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			status = <-code
		}
		return status
	}
	t.Cleanup(func() { stop() })
	return addr, line, stop
}

func TestServeRunsAndShutsDown(t *testing.T) {
	addr, stop := startServe(t, "--addr", "127.0.0.1:0", "--store", "memory://", "--mode", "code")
	if status, _ := testkit.Get(t, "http://"+addr+"/healthz"); status != http.StatusOK {
		t.Fatalf("healthz: %d", status)
	}
	resp, err := http.Post("http://"+addr+"/v1/run", "application/json", strings.NewReader(`{"code": "return (await tools.math_add({a: 1, b: 2})).sum"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"result":3`) {
		t.Fatalf("run: %d %s", resp.StatusCode, b)
	}
	if _, tools := testkit.Get(t, "http://"+addr+"/v1/tools"); !strings.Contains(tools, `"mode":"code"`) {
		t.Errorf("--mode code not applied: %s", tools)
	}
	if status := stop(); status != 0 {
		t.Fatalf("exit status %d after shutdown", status)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
}

// TestServeDefaultStore: with no --store the log is codemode.db in
// $XDG_DATA_HOME/codemode, created with its parents, and named in the
// start-up log.
func TestServeDefaultStore(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Chdir(t.TempDir())
	_, line, stop := startServeLine(t, "--addr", "127.0.0.1:0")
	if status := stop(); status != 0 {
		t.Fatalf("exit status %d", status)
	}
	if want := "store=" + filepath.Join(dir, "data", "codemode", "codemode.db"); !strings.Contains(line, want) {
		t.Errorf("the start-up log does not name the store (%s): %s", want, line)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "codemode", "codemode.db")); err != nil {
		t.Fatalf("no codemode.db in the data directory: %v", err)
	}
}

func TestServeUsageErrors(t *testing.T) {
	badConfig := testkit.WriteFile(t, "bad.yaml", "server: {max_inflight_runs: 0}\n")
	dir := filepath.Dir(badConfig)
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--addr", "nonsense"}, "--addr"},
		{[]string{"--mode", "fast"}, "--mode"},
		{[]string{"--addr", "0.0.0.0:0"}, "loopback"},
		{[]string{"--addr", ":0"}, "loopback"},
		{[]string{"--store", "ftp://x"}, "store"},
		{[]string{"--config", filepath.Join(dir, "missing.yaml")}, "config"},
		{[]string{"--config", badConfig}, "server.max_inflight_runs"},
		{[]string{"--bogus"}, "bogus"},
		{[]string{"extra"}, "extra"},
	}
	for _, tt := range tests {
		var stderr strings.Builder
		status := run(context.Background(), append([]string{"serve"}, tt.args...), strings.NewReader(""), io.Discard, &stderr)
		if status != 2 || !strings.Contains(stderr.String(), tt.msg) {
			t.Errorf("serve %v: status %d, stderr %q; want 2 and %q", tt.args, status, stderr.String(), tt.msg)
		}
		if n := strings.Count(strings.TrimSpace(stderr.String()), "\n"); n > 0 && !strings.Contains(strings.Join(tt.args, " "), "bogus") {
			t.Errorf("serve %v: %d lines of errors, want one: %q", tt.args, n+1, stderr.String())
		}
	}
}

// server.max_mcp_sessions reaches the MCP handler serve mounts.
func TestServeBoundsMCPSessions(t *testing.T) {
	t.Setenv("CODEMODE_SERVER_MAX_MCP_SESSIONS", "1")
	addr, _ := startServe(t, "--addr", "127.0.0.1:0", "--store", "memory://")
	initialize := func() int { return testkit.MCPInitialize(t, "http://"+addr+"/mcp", "2025-06-18").StatusCode }
	if code := initialize(); code != http.StatusOK {
		t.Fatalf("the first session: %d", code)
	}
	if code := initialize(); code != http.StatusServiceUnavailable {
		t.Fatalf("a second session past server.max_mcp_sessions 1: %d", code)
	}
}
