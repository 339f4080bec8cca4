// Package testkit holds what the tests of several packages share: a log a
// test reads while a server writes it, polling with a hang guard, the heap
// sampler of the memory-bound tests, the MCP initialize request, and the
// skip (a failure under CI) of a test whose Node.js peers are missing. Only
// _test.go files import it.
package testkit

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Logs is a log destination that a test can read while others write to it.
// The zero value is ready to use.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns what has been written so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Logger returns a text logger writing to l.
func (l *Logs) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// When returns the logs once cond holds of them, or as they are after a few
// seconds: a request's log lines are written after its reply is sent.
func (l *Logs) When(cond func(logs string) bool) string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		logs := l.String()
		if cond(logs) || time.Now().After(deadline) {
			return logs
		}
		time.Sleep(time.Millisecond)
	}
}

// Containing returns the logs once they contain every one of subs (see When).
func (l *Logs) Containing(subs ...string) string {
	return l.When(func(logs string) bool {
		for _, s := range subs {
			if !strings.Contains(logs, s) {
				return false
			}
		}
		return true
	})
}

// Counting returns the logs once they contain sub at least n times (see When).
func (l *Logs) Counting(sub string, n int) string {
	return l.When(func(logs string) bool { return strings.Count(logs, sub) >= n })
}

// Eventually polls cond until it holds, failing the test after a generous
// bound (a hang guard, not a timing assertion).
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// SampleHeap samples the heap in use every 20ms until the returned func is
// called, which returns the largest sample.
func SampleHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-sampled
		return peak.Load()
	}
}

// MCPInitialize posts an MCP initialize request for protocol version to the
// Streamable HTTP endpoint url and returns the response, its body read and
// closed.
func MCPInitialize(t testing.TB, url, version string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(fmt.Sprintf(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`, version)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// Get sends a GET to url and returns the status and the body, failing the
// test when there is no response.
func Get(t testing.TB, url string) (status int, body string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// WriteFile writes text to a file called name in a new temporary directory
// of the test and returns its path.
func WriteFile(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
