package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/runtime"
)

// serveAdd is the stdio upstream of the liveness tests (TestMain runs it
// when peerServerEnv is "add"): the official go-sdk on stdio, with the
// tools of addTools.
func serveAdd() error {
	return addTools().Run(context.Background(), &sdk.IOTransport{Reader: os.Stdin, Writer: trickler{os.Stdout}})
}

// addTools is the go-sdk server of the test upstreams: add, slow (sleeps
// ms milliseconds), pid (so that a test can stop the process, which then
// neither reads nor answers), big (n bytes of text), deep (a value nested d
// levels), trickle (a reply that never ends) and garbled (a reply that does
// not decode), the replies of big, trickle and garbled written by trickler.
func addTools() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "adder", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add"}, func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "slow"}, func(ctx context.Context, _ *sdk.CallToolRequest, in struct {
		MS int `json:"ms"`
	}) (*sdk.CallToolResult, struct{}, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
		}
		return nil, struct{}{}, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "pid"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, struct {
		PID int `json:"pid"`
	}, error) {
		return nil, struct {
			PID int `json:"pid"`
		}{os.Getpid()}, nil
	})
	s.AddTool(&sdk.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ N int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(bigMark, in.N)}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "deep", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ D int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: json.RawMessage(strings.Repeat("[", in.D) + strings.Repeat("]", in.D))}, nil
	})
	s.AddTool(&sdk.Tool{Name: "trickle", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: trickleMark}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "garbled", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: garbleMark}}}, nil
	})
	return s
}

// bigMark is the text of big's result, which trickler writes as that many
// bytes of text (no JSON encoder copies them: the upstream answers tens of
// megabytes at once cheaply).
const bigMark = "BIG-REPLY-%d-END"

// garbleMark is the text of garbled's result, whose reply trickler writes
// with a version tag no decoder accepts.
const garbleMark = "GARBLE-THIS-REPLY"

// trickleMark is the text of trickle's result, which trickler never ends.
const trickleMark = "TRICKLE-FOREVER"

// trickler writes what the go-sdk writes, but a write carrying trickleMark
// only up to the mark, and then text, 64 KiB every 10ms, until the write
// fails (the reader is gone), one carrying bigMark with that many bytes in
// its place, and one carrying garbleMark with a version tag of "9.9". Its
// Flush passes on to w's, for HTTP.
type trickler struct{ w io.Writer }

func (t trickler) Write(p []byte) (int, error) {
	if i := bytes.Index(p, []byte("BIG-REPLY-")); i >= 0 {
		var n int
		if _, err := fmt.Sscanf(string(p[i:min(len(p), i+40)]), bigMark, &n); err == nil {
			end := i + len(fmt.Sprintf(bigMark, n))
			if _, err := t.w.Write(p[:i]); err != nil {
				return 0, err
			}
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for n > 0 {
				if _, err := t.w.Write(chunk[:min(n, len(chunk))]); err != nil {
					return 0, err
				}
				n -= min(n, len(chunk))
			}
			if _, err := t.w.Write(p[end:]); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	if bytes.Contains(p, []byte(garbleMark)) {
		return t.w.Write(bytes.Replace(p, []byte(`"jsonrpc":"2.0"`), []byte(`"jsonrpc":"9.9"`), 1))
	}
	i := bytes.Index(p, []byte(trickleMark))
	if i < 0 {
		return t.w.Write(p)
	}
	if _, err := t.w.Write(p[:i]); err != nil {
		return 0, err
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for {
		t.Flush()
		time.Sleep(10 * time.Millisecond)
		if _, err := t.w.Write(chunk); err != nil {
			return 0, err
		}
	}
}

func (t trickler) Flush() {
	if f, ok := t.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (t trickler) Close() error {
	if c, ok := t.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// serveAddHTTP serves addTools over HTTP on a port of its own (TestMain runs
// it when peerServerEnv is "add-http", "add-json" or "add-sse"): streamable
// HTTP replying in event streams, streamable HTTP replying in JSON, or the
// legacy HTTP+SSE transport. Its first line on stdout is its URL.
func serveAddHTTP(kind string) error {
	s := addTools()
	var h http.Handler
	switch kind {
	case "add-sse":
		h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
	default:
		h = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: kind == "add-json"})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(trickleResponse{w}, r)
	}))
}

// trickleResponse is a ResponseWriter that writes through a trickler.
type trickleResponse struct{ http.ResponseWriter }

func (t trickleResponse) Write(p []byte) (int, error) { return trickler{t.ResponseWriter}.Write(p) }
func (t trickleResponse) Flush()                      { t.ResponseWriter.(http.Flusher).Flush() }

// addServer is the configuration of a serveAdd upstream.
func addServer(name string, l config.Liveness) config.MCPServer {
	return config.MCPServer{Name: name, Scope: "default", Command: []string{os.Args[0]},
		Env: map[string]string{peerServerEnv: "add"}, Liveness: l}
}

// quickLiveness are liveness bounds for tests: a silent upstream fails its
// calls within a second.
var quickLiveness = config.Liveness{
	Idle: config.Duration(200 * time.Millisecond), PingTimeout: config.Duration(200 * time.Millisecond),
	FailAfter: config.Duration(time.Second), StallAfter: config.Duration(300 * time.Millisecond),
}

// TestLivenessStdioWrites: what codemode writes to a stdio upstream
// reaches the pipe whole and at once. cat echoes stdin to stdout as it
// reads it, so a message held in a buffer until the next write never comes
// back, and interleaved writers come back as lines that do not decode.
func TestLivenessStdioWrites(t *testing.T) {
	conn, err := (&stdioTransport{cmd: []string{"cat"}, log: discard, limit: config.DefaultMaxMessageBytes}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	note := func(w, i, size int) *jsonrpc.Request {
		params, _ := json.Marshal(map[string]any{"w": w, "i": i, "pad": strings.Repeat(string(rune('a'+w)), size)})
		return &jsonrpc.Request{Method: "note", Params: params}
	}
	read := func() *jsonrpc.Request {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read back: %v (a write held back?)", err)
		}
		return msg.(*jsonrpc.Request)
	}

	t.Run("each message at once", func(t *testing.T) {
		for i, size := range []int{0, 10, 4095, 70_000} {
			want := note(0, i, size)
			if err := conn.Write(context.Background(), want); err != nil {
				t.Fatal(err)
			}
			if got := read(); !bytes.Equal(got.Params, want.Params) {
				t.Fatalf("message %d came back as %.80s", i, got.Params)
			}
		}
	})

	t.Run("concurrent writers do not interleave", func(t *testing.T) {
		const writers, each = 8, 12
		sent := map[string]bool{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					// Larger than PIPE_BUF and than the pipe's buffer: the
					// kernel takes them in parts.
					m := note(w, i, 1000+(w*each+i)*2000)
					mu.Lock()
					sent[string(m.Params)] = true
					mu.Unlock()
					if err := conn.Write(context.Background(), m); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		for range writers * each {
			got := read()
			mu.Lock()
			if !sent[string(got.Params)] {
				t.Errorf("a message came back that was not sent: %.80s", got.Params)
			}
			delete(sent, string(got.Params))
			mu.Unlock()
		}
		wg.Wait()
		if len(sent) > 0 {
			t.Errorf("%d messages did not come back", len(sent))
		}
	})
}

// TestLivenessSlowCallIsNotSilence: an upstream that answers pings is
// alive however long a call takes; the call is logged as stalled, once.
func TestLivenessSlowCallIsNotSilence(t *testing.T) {
	a := newApp(t)
	logs := &testkit.Logs{}
	opts := testOptions(logs.Logger())
	ups := startSettled(t, a, []config.MCPServer{addServer("busy", quickLiveness)}, opts)
	if res := execute(a, "busy.slow", `{"ms":2500}`); res.IsError() {
		t.Fatalf("a slow call on a live upstream failed: %+v", res.Error())
	}
	st := ups.States()[0]
	if st.State != StateReady || st.Restarts != 0 || st.Unresponsive != 0 || st.StalledCalls != 1 {
		t.Errorf("state %+v, want ready, no restart, never unresponsive, one stalled call", st)
	}
	logged := logs.String()
	if n := strings.Count(logged, "upstream calls stalled"); n != 1 || !strings.Contains(logged, "busy.slow (call t1)") {
		t.Errorf("want one stalled line naming busy.slow (call t1), got %d:\n%s", n, logged)
	}
}

func pidOf(t *testing.T, res *runtime.Result) int {
	t.Helper()
	if res.IsError() {
		t.Fatal(res.Error())
	}
	var v struct{ PID int }
	if err := json.Unmarshal([]byte(res.Value().String()), &v); err != nil || v.PID == 0 {
		t.Fatalf("pid %s: %v", res.Value(), err)
	}
	return v.PID
}

// waitState waits (20s at most) for the first upstream's state to be want.
func waitState(t *testing.T, ups *Upstreams, want string) UpstreamState {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := ups.States()[0]
		if st.State == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %+v, want %s", st, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLivenessUnresponsiveThenAnswering: an upstream silent past idle +
// ping_timeout is unresponsive, with why; when it answers again (here:
// continued) it is ready, the waiting call completes and nothing restarted.
func TestLivenessUnresponsiveThenAnswering(t *testing.T) {
	a := newApp(t)
	l := quickLiveness
	l.FailAfter = config.Duration(time.Minute)
	ups := startSettled(t, a, []config.MCPServer{addServer("sleepy", l)}, testOptions(discard))
	resume := stopProcess(t, pidOf(t, execute(a, "sleepy.pid", `{}`)))
	done := make(chan *runtime.Result, 1)
	go func() { done <- execute(a, "sleepy.add", `{"a":1,"b":2}`) }()
	st := waitState(t, ups, StateUnresponsive)
	if st.Unresponsive != 1 || st.Calls != 1 || !strings.Contains(st.LastError, "a ping went unanswered") {
		t.Errorf("unresponsive state %+v", st)
	}
	resume()
	if res := <-done; res.IsError() || res.Value().String() != `{"sum":3}` {
		t.Errorf("the waiting call: %+v %s", res.Error(), res.Value())
	}
	if st := waitState(t, ups, StateReady); st.Restarts != 0 || st.LastError != "" {
		t.Errorf("ready again %+v, want no restart", st)
	}
}

// TestLivenessFrozenUpstream: an upstream that stops reading and answering
// mid-load (its process stopped) fails its calls fast, naming it, while
// the other upstream's calls go on; it is restarted and answers again.
func TestLivenessFrozenUpstream(t *testing.T) {
	a := newApp(t)
	logs := &testkit.Logs{}
	opts := testOptions(logs.Logger())
	ups := startSettled(t, a, []config.MCPServer{addServer("frozen", quickLiveness), addServer("other", quickLiveness)}, opts)
	res := execute(a, "frozen.pid", `{}`)
	if res.IsError() {
		t.Fatal(res.Error())
	}
	pid := pidOf(t, res)

	type outcome struct {
		upstream string
		at       time.Time
		err      *runtime.ErrorInfo
	}
	outcomes := make(chan outcome, 1024)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, name := range []string{"frozen", "frozen", "frozen", "frozen", "other", "other"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				res := a.Runtime.Execute(context.Background(), runtime.Request{CallID: fmt.Sprintf("w%d-%d", i, n), Name: name + ".add", Arguments: `{"a":1,"b":2}`, Scope: "default"})
				o := outcome{upstream: name, at: time.Now()}
				if res.IsError() {
					o.err = res.Error()
				}
				select {
				case outcomes <- o:
				default: // the test has what it needs
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()

	time.Sleep(200 * time.Millisecond) // some calls complete normally
	frozenAt := time.Now()
	stopProcess(t, pid)

	var failedAt time.Time
	otherOK := 0
	deadline := time.After(20 * time.Second)
	for failedAt.IsZero() || otherOK < 5 {
		select {
		case o := <-outcomes:
			switch {
			case o.upstream == "other" && o.err != nil:
				t.Fatalf("a call to the other upstream failed: %+v", o.err)
			case o.upstream == "other" && o.at.After(frozenAt):
				otherOK++
			case o.upstream == "frozen" && o.err != nil && failedAt.IsZero():
				if !strings.Contains(o.err.Message, "upstream frozen is not answering") {
					t.Fatalf("a frozen call failed with %+v, want it to name the upstream", o.err)
				}
				failedAt = o.at
			}
		case <-deadline:
			t.Fatalf("after 20s: failed at %v, %d calls to the other upstream went through", failedAt, otherOK)
		}
	}
	t.Logf("the calls failed %v after the freeze", failedAt.Sub(frozenAt).Round(time.Millisecond))
	if d := failedAt.Sub(frozenAt); d > 10*time.Second {
		t.Errorf("the calls failed %v after the freeze, want within 10s (fail_after 1s)", d)
	}

	// Back after the restart: calls to it complete again.
	for back := false; !back; {
		select {
		case o := <-outcomes:
			back = o.upstream == "frozen" && o.err == nil && o.at.After(failedAt)
		case <-time.After(20 * time.Second):
			t.Fatalf("the frozen upstream is not back 20s after its calls failed: %+v", ups.States()[0])
		}
	}
	t.Logf("back %v after the calls failed", time.Since(failedAt).Round(time.Millisecond))
	st := ups.States()[0]
	if st.Restarts < 1 || st.Unresponsive < 1 || st.StalledCalls < 1 {
		t.Errorf("state %+v, want a restart, unresponsive once, stalled calls", st)
	}
	if other := ups.States()[1]; other.Restarts != 0 || other.Unresponsive != 0 {
		t.Errorf("the other upstream %+v, want untouched", other)
	}
	logged := logs.String()
	for _, want := range []string{"upstream MCP server is not answering", "upstream=frozen", "upstream calls stalled", "frozen.add (call w"} {
		if !strings.Contains(logged, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}
