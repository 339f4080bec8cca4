package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
)

// TestUpstreamMessageBounds: a reply over max_message_bytes, or nested
// deeper than config.MaxMessageDepth, or one that never ends, or (on stdio)
// one that does not decode, fails the call it answers at once, naming the upstream and the bound, rather than
// waiting out the call's timeout; the connection goes on. Ten such replies
// at once, of 15 MB each, do not take the heap anywhere near their size.
// So on stdio and on each HTTP transport, the upstream a process of its own
// so that the heap measured is codemode's.
func TestUpstreamMessageBounds(t *testing.T) {
	for _, c := range []struct{ name, kind, transport string }{
		{"stdio", "", ""},
		{"streamable-sse", "add-http", config.TransportStreamable},
		{"streamable-json", "add-json", config.TransportStreamable},
		{"sse", "add-sse", config.TransportSSE},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := addServer("up", config.Liveness{})
			if c.kind != "" {
				s = config.MCPServer{Name: "up", Scope: "default", URL: startAddHTTP(t, c.kind), Transport: c.transport}
			}
			checkMessageBounds(t, s)
		})
	}
}

// startAddHTTP runs serveAddHTTP in a process of its own for the test's
// lifetime and returns its URL.
func startAddHTTP(t *testing.T, kind string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), peerServerEnv+"="+kind)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s upstream: %v", kind, err)
	}
	return strings.TrimSpace(url)
}

func checkMessageBounds(t *testing.T, s config.MCPServer) {
	a := newApp(t)
	s.Timeout = config.Duration(30 * time.Second)
	s.MaxMessageBytes = 1 << 20
	ups := startSettled(t, a, []config.MCPServer{s}, testOptions(discard))
	if !ups.Ready() {
		t.Fatalf("%+v", ups.States())
	}
	const larger = "upstream up sent a reply larger than its max_message_bytes (1048576 bytes)"
	for _, c := range []struct{ tool, args, want string }{
		{"up.big", `{"n":2000000}`, larger},
		{"up.deep", fmt.Sprintf(`{"d":%d}`, config.MaxMessageDepth+10), "upstream up sent a reply nested deeper than 512 levels"},
	} {
		start := time.Now()
		res := execute(a, c.tool, c.args)
		if !res.IsError() || !strings.Contains(res.Error().Message, c.want) {
			t.Errorf("%s: %+v, want an error containing %q", c.tool, res.Error(), c.want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s failed after %v: waited for its timeout", c.tool, d)
		}
	}
	if s.URL == "" {
		// A reply that does not decode fails its call at once too (over
		// HTTP the go-sdk fails the connection).
		const want = `upstream up sent a reply that is not valid JSON-RPC (invalid message version tag "9.9"`
		if res := execute(a, "up.garbled", `{}`); !res.IsError() || !strings.Contains(res.Error().Message, want) {
			t.Errorf("a reply that does not decode: %+v, want an error containing %q", res.Error(), want)
		}
	}
	if res := execute(a, "up.big", `{"n":1000}`); res.IsError() {
		t.Errorf("a reply under the bound after the refused ones: %+v", res.Error())
	}

	// The heap while ten 15 MB replies arrive at once, sampled.
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	base := ms.HeapInuse
	peak := testkit.SampleHeap()
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if res := execute(a, "up.big", `{"n":15000000}`); !res.IsError() {
				t.Error("a 15 MB reply over a 1 MiB bound succeeded")
			}
		})
	}
	wg.Wait()
	top := peak()
	if grew := top - min(base, top); grew > 64<<20 {
		t.Errorf("the heap grew by %d MiB while ten 15 MB replies were refused, want under 64 MiB", grew>>20)
	}

	// Last: a stdio pipe or a legacy SSE stream stays taken by the reply
	// that never ends, which codemode reads on without keeping. First the
	// rest of the large replies is read through (their calls failed once
	// they crossed the bound): a small call answers after them.
	if res := execute(a, "up.big", `{"n":1000}`); res.IsError() {
		t.Errorf("a reply under the bound after the large ones: %+v", res.Error())
	}
	start := time.Now()
	if res := execute(a, "up.trickle", `{}`); !res.IsError() || !strings.Contains(res.Error().Message, larger) {
		t.Errorf("a reply that never ends: %+v, want an error containing %q", res.Error(), larger)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a reply that never ends failed after %v: waited for its timeout", d)
	}
}

// FuzzMsgScan: a message scanned in two pieces reads as scanned whole; on
// valid JSON the id the scan keeps is encoding/json's (keys without
// escapes), and its depth the document's.
func FuzzMsgScan(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a \"quoted\" {[x"}]}}`,
		`{"result":"\\","id":"a\"b","jsonrpc":"2.0"}`,
		`{"id":1,"id":2}`,
		`[{"id":1},{"id":2}]`,
		`{"id" : "x" , "error":{"code":-1,"message":"m"}}`,
		`{"a":[[[[{}]]]],"id":null}`,
	} {
		f.Add([]byte(seed), uint(len(seed)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		whole := &msgScan{}
		whole.Write(data)
		k := int(cut % uint(len(data)+1))
		split := &msgScan{}
		split.Write(data[:k])
		split.Write(data[k:])
		if whole.deepest != split.deepest || string(whole.id) != string(split.id) || whole.rpc != split.rpc || whole.n != split.n || whole.n != int64(len(data)) {
			t.Fatalf("cut at %d: whole %+v, split %+v", k, whole, split)
		}
		var doc map[string]json.RawMessage
		if bytes.ContainsRune(data, '\\') || json.Unmarshal(data, &doc) != nil {
			return
		}
		if depth := jsonDepth(data); whole.deepest != depth {
			t.Fatalf("depth %d, want %d", whole.deepest, depth)
		}
		_, rpc := doc["jsonrpc"]
		if whole.rpc != rpc {
			t.Fatalf("jsonrpc seen %v, want %v", whole.rpc, rpc)
		}
		raw, ok := doc["id"]
		if !ok || len(raw) > maxIDBytes {
			return
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		want, err := jsonrpc.MakeID(v)
		got, found := whole.scannedID()
		if err == nil && want.IsValid() && (!found || got != want) {
			t.Fatalf("id %v (%v), want %v", got, found, want)
		}
	})
}

// jsonDepth is the deepest nesting of objects and arrays in valid JSON.
func jsonDepth(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// TestSSEBody: events within the bound pass through as they came; an event
// over it becomes the refusal of the request it answers (the id read first,
// else the POSTed call's, else read on to find the id at its end), and a
// POST's reply ends with the refusal.
func TestSSEBody(t *testing.T) {
	big := strings.Repeat("x", 200)
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	refusal := func(id string, why string) string {
		return `event: message` + "\n" + `data: {"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"upstream up sent a reply ` + why + `; it was dropped"}}` + "\n\n"
	}
	const larger = "larger than its max_message_bytes (100 bytes)"
	small := "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n: a comment\n\n"
	for _, c := range []struct {
		name, in string
		call     any // the POSTed call's id; nil: a GET
		want     string
	}{
		{"within the bound", small, nil, small},
		{"id first", "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"" + big + "\"}\n\n" + small, nil,
			"id: 7\n" + refusal("3", larger) + small},
		{"id last, on a GET", "data: {\"result\":\"" + big + "\",\"id\":\"s\"}\n\n" + small, nil, refusal(`"s"`, larger) + small},
		{"no id, on a POST", "data: {\"result\":\"" + big + "\"}\n\n" + small, 9, refusal("9", larger)},
		{"too deep", "data: {\"id\":4,\"result\":" + deep + "}\n\n", nil, refusal("4", "nested deeper than 512 levels")},
		{"over by other lines", ": " + strings.Repeat("x", sseSlack+200) + "\ndata: {\"id\":5}\n\n", 5, refusal("5", larger)},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &replyBound{server: "up", limit: 100, log: discard}
			if c.name == "too deep" {
				b.limit = 10_000
			}
			req, _ := http.NewRequest(http.MethodGet, "http://x/mcp", nil)
			if c.call != nil {
				body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.call, "method": "tools/call"})
				req, _ = http.NewRequest(http.MethodPost, "http://x/mcp", bytes.NewReader(body))
			}
			resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(c.in))}
			b.wrap(req, resp)
			got, err := io.ReadAll(resp.Body)
			if err != nil || string(got) != c.want {
				t.Fatalf("read %v:\n%s\nwant\n%s", err, got, c.want)
			}
		})
	}
}
