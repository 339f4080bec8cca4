package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
)

// server is a `codemode serve` in its own process, so that its memory can be read from /proc
// apart from the test's. It is a binary built for the test without the race detector, whose
// shadow memory would hide what the server itself holds (the test binary is still raced).
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	base string
	logs *testkit.Logs
}

// startServeProcess builds codemode and starts `codemode serve --config <yml> args…` in a
// child process, and waits for its "listening" line.
func startServeProcess(t *testing.T, yml string, args ...string) *server {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: this test builds codemode")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "codemode")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "codemode.yaml")
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--config", cfg, "--store", "sqlite://" + filepath.Join(dir, "log.db")}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, logs: &testkit.Logs{}}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(s.logs, line)
			if m := serveAddrRE.FindStringSubmatch(line); m != nil && !sent {
				addrc <- m[1]
				sent = true
			}
		}
		close(addrc)
	}()
	select {
	case addr, ok := <-addrc:
		if !ok {
			cmd.Wait()
			t.Fatalf("serve exited before listening:\n%s", s.logs)
		}
		s.addr, s.base = addr, "http://"+addr
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve did not log its address")
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return s
}

// status reads a line of /proc/PID/status in bytes (VmRSS, VmHWM).
func (s *server) status(key string) int64 {
	s.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		s.t.Fatalf("the server process is gone: %v\n%s", err, s.logs)
	}
	m := regexp.MustCompile(`(?m)^` + key + `:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		s.t.Fatalf("no %s in /proc status", key)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n << 10
}

// reply is an HTTP response read whole.
type reply struct {
	status int
	body   []byte
	header http.Header
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("status %d, body not JSON: %.300s", r.status, r.body)
	}
	return v
}

// errorCode is the code of an error reply.
func (r reply) errorCode(t *testing.T) string {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// do sends a request with a JSON body (or none) and extra headers.
func (s *server) do(method, path string, body any, header map[string]string) reply {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v (is the server down?)\n%s", method, path, err, s.logs)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, body: b, header: resp.Header}
}

// runResult is what the suite reads of a run reply.
type runResult struct {
	IsError bool            `json:"is_error"`
	Value   json.RawMessage `json:"value"`
	Error   *struct {
		Code, Kind, Message string
	} `json:"error"`
	Calls []json.RawMessage `json:"calls"`
}

// run posts a program and returns its reply (a 200 is required).
func (s *server) run(session, code string) (runResult, reply) {
	s.t.Helper()
	body := map[string]any{"code": code}
	if session != "" {
		body["session_id"] = session
	}
	r := s.do(http.MethodPost, "/v1/run", body, nil)
	if r.status != http.StatusOK {
		s.t.Fatalf("run: status %d: %.500s", r.status, r.body)
	}
	var res runResult
	if err := json.Unmarshal(r.body, &res); err != nil {
		s.t.Fatalf("run reply: %v", err)
	}
	return res, r
}

func (res runResult) result(t *testing.T) json.RawMessage {
	t.Helper()
	if res.IsError {
		t.Fatalf("the run failed: %+v", res.Error)
	}
	var v struct{ Result json.RawMessage }
	json.Unmarshal(res.Value, &v)
	return v.Result
}

func (s *server) newSession() string {
	s.t.Helper()
	r := s.do(http.MethodPost, "/v1/sessions", map[string]any{}, nil)
	if r.status != http.StatusCreated {
		s.t.Fatalf("new session: %d %s", r.status, r.body)
	}
	return r.json(s.t)["id"].(string)
}

// step runs tool calls in a session and returns each result's text and error flag.
func (s *server) step(session string, calls ...[2]string) []stepOutcome {
	s.t.Helper()
	var tc []map[string]any
	for i, c := range calls {
		tc = append(tc, map[string]any{"id": fmt.Sprintf("c%d-%d", time.Now().UnixNano(), i), "name": c[0], "arguments": c[1]})
	}
	r := s.do(http.MethodPost, "/v1/sessions/"+session+"/steps", map[string]any{"tool_calls": tc}, nil)
	if r.status != http.StatusOK {
		s.t.Fatalf("step: %d %.300s", r.status, r.body)
	}
	var out struct {
		Results []struct {
			IsError bool `json:"is_error"`
			Content []struct{ Text string }
		}
	}
	json.Unmarshal(r.body, &out)
	res := make([]stepOutcome, len(out.Results))
	for i, x := range out.Results {
		var text []string
		for _, c := range x.Content {
			text = append(text, c.Text)
		}
		res[i] = stepOutcome{x.IsError, strings.Join(text, "")}
	}
	return res
}

type stepOutcome struct {
	isError bool
	text    string
}

// events returns a session's log as JSON text, all of it.
func (s *server) events(session string) []json.RawMessage {
	s.t.Helper()
	var all []json.RawMessage
	after := int64(0)
	for {
		r := s.do(http.MethodGet, fmt.Sprintf("/v1/sessions/%s/events?after=%d", session, after), nil, nil)
		var page struct {
			Events []json.RawMessage `json:"events"`
			More   bool              `json:"more"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &page) != nil {
			s.t.Fatalf("events: %d %.300s", r.status, r.body)
		}
		for _, e := range page.Events {
			var h struct{ Seq int64 }
			json.Unmarshal(e, &h)
			after = h.Seq
		}
		all = append(all, page.Events...)
		if !page.More {
			return all
		}
	}
}

func (s *server) metric(name string) float64 {
	s.t.Helper()
	r := s.do(http.MethodGet, "/metrics", nil, nil)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(r.body)
	if m == nil {
		s.t.Fatalf("no metric %s", name)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// safetyYAML is the suite's configuration: the defaults (programs in worker processes),
// with bodies large enough to carry the attacks, a short stream write timeout, a memory
// budget of six runs, and few sessions with demo state.
const safetyYAML = `
limits: {timeout: 20s}
server:
  max_body_bytes: 3MiB
  stream_write_timeout: 1s
  memory_budget: 3GiB
demo_state: {max_sessions: 20}
`

// TestServeHoldsItsGround attacks a real `codemode serve` process the way issue 12 did, and
// more: every attack ends as a clean failure (a limit, a refused tool call, a 4xx or 503)
// with the server alive, its memory back within 512 MiB of where it started, and another
// session's data unchanged.
func TestServeHoldsItsGround(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the server's memory")
	}
	s := startServeProcess(t, safetyYAML)
	// Warm up (a worker starts, the store's first writes), then take the baseline.
	s.run("", `return (await tools.math_add({a: 1, b: 2})).sum`)
	victim := s.newSession()
	for _, o := range s.step(victim, [2]string{"kv_set", `{"key":"secret","value":"v1"}`}, [2]string{"files_write", `{"path":"notes.md","content":"victim data"}`}) {
		if o.isError {
			t.Fatalf("victim set-up: %s", o.text)
		}
	}
	victimLog := s.events(victim)
	start := s.status("VmRSS")
	t.Logf("server RSS at start: %d MiB", start>>20)

	t.Run("files_edit multiplies a file", func(t *testing.T) {
		res, _ := s.run("", `
			await tools.files_write({path: "f", content: "a".repeat(1 << 20)});
			const big = "b".repeat(1 << 20);
			const tries = await Promise.allSettled([
				tools.files_edit({path: "f", old: "a", new: big}),
				...Array.from({length: 4}, () => tools.files_edit({path: "f", old: "a", new: "c".repeat(300)})),
			]);
			return tries.map(t => t.status === "rejected" ? t.reason.message : "edited");`)
		var msgs []string
		json.Unmarshal(res.result(t), &msgs)
		if len(msgs) != 5 {
			t.Fatalf("results %s", res.Value)
		}
		for _, m := range msgs {
			if !strings.Contains(m, "the edited file would be") || !strings.Contains(m, "demo_state.max_value_bytes") {
				t.Fatalf("an edit was not refused: %q", m)
			}
		}
		// The same with two steps and no program.
		sess := s.newSession()
		content, _ := json.Marshal(map[string]string{"path": "f", "content": strings.Repeat("a", 1<<20)})
		if o := s.step(sess, [2]string{"files_write", string(content)}); o[0].isError {
			t.Fatalf("write: %s", o[0].text)
		}
		edit, _ := json.Marshal(map[string]string{"path": "f", "old": "a", "new": strings.Repeat("b", 1<<20)})
		if o := s.step(sess, [2]string{"files_edit", string(edit)}); !o[0].isError || !strings.Contains(o[0].text, "would be") {
			t.Fatalf("the edit step: %+v", o[0])
		}
	})

	t.Run("parallel echoes of large values", func(t *testing.T) {
		res, r := s.run("", `
			const big = "x".repeat(900 << 10);
			await Promise.all(Array.from({length: 60}, () => tools.util_echo({value: big})));
			return "small result";`)
		if string(res.result(t)) != `"small result"` {
			t.Fatalf("result %s", res.Value)
		}
		if len(r.body) > 4<<20+256<<10 {
			t.Fatalf("the reply of a small result is %d MiB", len(r.body)>>20)
		}
		over, _ := s.run("", `try { await tools.util_echo({value: "x".repeat(2 << 20)}) } catch (e) { return e.message }`)
		if !strings.Contains(string(over.result(t)), "demo_state.max_value_bytes") {
			t.Fatalf("a 2 MiB echo: %s", over.Value)
		}
	})

	t.Run("program attacks end in their limits", func(t *testing.T) {
		for name, code := range map[string]string{
			"log flood":         `for (;;) console.log("x".repeat(1 << 16))`,
			"apply":             `return Math.max.apply(null, {length: 2 ** 32 - 1})`,
			"toSorted":          `return Array.prototype.toSorted.call({length: 2 ** 32 - 2}).length`,
			"includes":          `return Array.prototype.includes.call({length: 2 ** 53 - 1}, 1)`,
			"spread":            `const a = []; a[2 ** 32 - 2] = 0; return [...a].length`,
			"replaceAll":        `const s = "a".repeat(1 << 20); return s.replaceAll("a", s).length`,
			"flat of a cycle":   `const a = [1]; a.push(a); return a.flat(Infinity).length`,
			"join":              `const s = "x".repeat(1 << 23); return Array(64).fill(s).join("").length`,
			"result":            `return "x".repeat(5 << 20)`,
			"sub-calls":         `for (;;) await tools.math_add({a: 1, b: 2})`,
			"huge argument":     `try { await tools.util_echo({value: "x".repeat(16 << 20)}) } catch (e) { throw new Error("refused: " + e.message) }`,
			"typed array views": `return Array.from(new Uint8Array(new ArrayBuffer(2 ** 26))).length`,
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				begin := time.Now()
				res, r := s.run("", code)
				if !res.IsError || res.Error == nil || res.Error.Code != "CODE_RUN_FAILED" || (res.Error.Kind != "limit" && name != "huge argument") {
					t.Fatalf("want a CODE_RUN_FAILED limit, got %+v", res.Error)
				}
				if len(r.body) > 4<<20+256<<10 {
					t.Fatalf("a failed run's reply is %d MiB", len(r.body)>>20)
				}
				if d := time.Since(begin); d > 20*time.Second+10*time.Second {
					t.Fatalf("ended after %v", d)
				}
			})
		}
	})

	t.Run("step arguments and bodies", func(t *testing.T) {
		sess := s.newSession()
		val, _ := json.Marshal(map[string]string{"value": strings.Repeat("y", 48<<10)})
		var calls [][2]string
		for i := 0; i < 50; i++ {
			calls = append(calls, [2]string{"util_echo", string(val)})
		}
		for _, o := range s.step(sess, calls...) {
			if o.isError {
				t.Fatalf("an echo of 48 KiB: %s", o.text)
			}
		}
		big := `{"tool_calls":[{"id":"x","name":"util_echo","arguments":"` + strings.Repeat("z", 4<<20) + `"}]}`
		if r := s.do(http.MethodPost, "/v1/sessions/"+sess+"/steps", big, nil); r.status != http.StatusRequestEntityTooLarge {
			t.Fatalf("a 4 MiB body: %d", r.status)
		}
		// Many large bodies at once are each held within the budget.
		var wg sync.WaitGroup
		statuses := make([]int, 20)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := `{"code": "return 1", "description": "` + strings.Repeat("d", 2<<20) + `"}`
				statuses[i] = s.do(http.MethodPost, "/v1/run", body, nil).status
			}()
		}
		wg.Wait()
		for _, st := range statuses {
			if st != http.StatusOK && st != http.StatusServiceUnavailable {
				t.Fatalf("statuses %v", statuses)
			}
		}
	})

	t.Run("the memory budget admits what fits", func(t *testing.T) {
		if got := s.metric("codemode_memory_budget_bytes"); got != 3<<30 {
			t.Fatalf("budget metric %v", got)
		}
		var wg sync.WaitGroup
		replies := make([]reply, 9)
		for i := range replies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[i] = s.do(http.MethodPost, "/v1/run", map[string]any{"code": "await tools.util_sleep({ms: 2000}); return 1"}, nil)
			}()
		}
		wg.Wait()
		ok, refused := 0, 0
		for _, r := range replies {
			switch {
			case r.status == http.StatusOK:
				ok++
			case r.status == http.StatusServiceUnavailable && r.errorCode(t) == "OVERLOADED" && strings.Contains(string(r.body), "server.memory_budget"):
				refused++
			default:
				t.Fatalf("a run: %d %s", r.status, r.body)
			}
		}
		// 3 GiB hold five runs of 512 MiB and their bodies.
		if ok != 5 || refused != 4 {
			t.Fatalf("%d admitted, %d refused; want 5 and 4", ok, refused)
		}
		if got := s.metric("codemode_memory_reserved_bytes"); got != 0 {
			t.Fatalf("reserved after the runs: %v", got)
		}
	})

	t.Run("many sessions cannot evict another's state", func(t *testing.T) {
		refused := 0
		for i := 0; i < 30; i++ {
			o := s.step(s.newSession(), [2]string{"kv_set", `{"key":"secret","value":"mine"}`})
			if o[0].isError {
				if !strings.Contains(o[0].text, "demo_state.max_sessions") {
					t.Fatalf("refused with %q", o[0].text)
				}
				refused++
			}
		}
		if refused == 0 {
			t.Fatal("30 more sessions all stored state past demo_state.max_sessions: 20")
		}
	})

	t.Run("stalled streams are dropped", func(t *testing.T) {
		sess := s.newSession()
		s.run(sess, `const big = "e".repeat(900 << 10); await Promise.all(Array.from({length: 16}, () => tools.util_echo({value: big}))); return 1`)
		dropped := s.metric("codemode_event_streams_dropped_total")
		var conns []net.Conn
		for i := 0; i < 8; i++ {
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			c.(*net.TCPConn).SetReadBuffer(4 << 10)
			fmt.Fprintf(c, "GET /v1/sessions/%s/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", sess, s.addr)
			conns = append(conns, c)
		}
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		deadline := time.Now().Add(30 * time.Second)
		for s.metric("codemode_event_streams_dropped_total") < dropped+8 {
			if time.Now().After(deadline) {
				t.Fatalf("stalled readers were not dropped: %v open", s.metric("codemode_event_streams"))
			}
			time.Sleep(100 * time.Millisecond)
		}
		if open := s.metric("codemode_event_streams"); open != 0 {
			t.Fatalf("%v streams still open", open)
		}
		// A ninth stream per session is refused while eight read.
		var readers []*http.Response
		for i := 0; i < 9; i++ {
			req, _ := http.NewRequest(http.MethodGet, s.base+"/v1/sessions/"+sess+"/events?after=999999", nil)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			readers = append(readers, resp)
		}
		for i, resp := range readers {
			want := http.StatusOK
			if i == 8 {
				want = http.StatusTooManyRequests
			}
			if resp.StatusCode != want {
				t.Fatalf("stream %d: %d", i, resp.StatusCode)
			}
			resp.Body.Close()
		}
	})

	t.Run("browsers cannot drive it", func(t *testing.T) {
		attack := map[string]any{"session_id": victim, "code": `await tools.kv_set({key: "secret", value: "pwned"})`}
		for _, tc := range []struct {
			header map[string]string
			status int
		}{
			{map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
			{map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
			{map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType},
			{map[string]string{"Host": "rebound.evil.example:" + strings.Split(s.addr, ":")[1]}, http.StatusForbidden},
		} {
			if r := s.do(http.MethodPost, "/v1/run", attack, tc.header); r.status != tc.status {
				t.Fatalf("%v: %d %s", tc.header, r.status, r.body)
			}
		}
		if r := s.do(http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Origin": "https://evil.example"}); r.status != http.StatusForbidden {
			t.Fatalf("/mcp from a foreign origin: %d", r.status)
		}
	})

	// The server is up, another session's state and log are as they were, and its memory is
	// back near where it started.
	if r := s.do(http.MethodGet, "/healthz", nil, nil); r.status != http.StatusOK {
		t.Fatalf("healthz: %d", r.status)
	}
	if res, _ := s.run("", `return (await tools.math_add({a: 20, b: 22})).sum`); string(res.result(t)) != "42" {
		t.Fatalf("a run after the attacks: %s", res.Value)
	}
	now := s.events(victim)
	if len(now) != len(victimLog) {
		t.Fatalf("the victim's log has %d events, had %d", len(now), len(victimLog))
	}
	for i := range now {
		if !bytes.Equal(now[i], victimLog[i]) {
			t.Fatalf("the victim's event %d changed:\n%s\n%s", i, victimLog[i], now[i])
		}
	}
	o := s.step(victim, [2]string{"kv_get", `{"key":"secret"}`}, [2]string{"files_read", `{"path":"notes.md"}`})
	if o[0].isError || !strings.Contains(o[0].text, `"v1"`) || o[1].isError || !strings.Contains(o[1].text, "victim data") {
		t.Fatalf("the victim's state: %+v", o)
	}
	peak := s.status("VmHWM")
	deadline := time.Now().Add(30 * time.Second)
	for {
		rss := s.status("VmRSS")
		if rss <= start+512<<20 {
			t.Logf("server RSS: %d MiB at start, %d MiB at the peak, %d MiB at the end", start>>20, peak>>20, rss>>20)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server RSS %d MiB, from %d MiB at start (peak %d MiB)", rss>>20, start>>20, peak>>20)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
