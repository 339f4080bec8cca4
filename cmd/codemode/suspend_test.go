package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/internal/testkit"
)

// shop is an MCP server in the test process, so that it outlives the
// codemode servers the tests kill: it counts each tool's bodies.
type shop struct {
	*httptest.Server
	reads, orders, slows atomic.Int32
	slowing              chan struct{} // closed when the first slow call starts
}

func newShop(t *testing.T) *shop {
	t.Helper()
	s := &shop{slowing: make(chan struct{})}
	srv := sdk.NewServer(&sdk.Implementation{Name: "shop", Version: "1"}, nil)
	type in struct {
		Item string `json:"item"`
	}
	type out struct {
		Item  string `json:"item"`
		Count int32  `json:"count"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "stock", Description: "Reads the stock of an item.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, out, error) {
			return nil, out{Item: a.Item, Count: s.reads.Add(1)}, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "order", Description: "Orders an item."},
		func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, out, error) {
			return nil, out{Item: a.Item, Count: s.orders.Add(1)}, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "slow", Description: "Reads slowly: the first call never ends.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, out, error) {
			if n := s.slows.Add(1); n == 1 {
				close(s.slowing)
				<-ctx.Done() // its caller is killed
				return nil, out{}, ctx.Err()
			}
			return nil, out{Item: a.Item, Count: s.slows.Load()}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	s.Server = httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// shopYAML is a configuration of the shop whose runs (in worker processes)
// suspend after 200 ms on an ask; with ask, the shop's orders need one.
func shopYAML(s *shop, ask bool) string {
	yml := fmt.Sprintf(`approvals: {hold: 200ms, timeout: 1h}
mcp_servers:
  - {name: shop, url: "%s", connect_timeout: 30s}
`, s.URL)
	if ask {
		yml += `policies:
  - {scope: default, tool: "shop.order", decision: ask, reason: "orders need a person"}
`
	}
	return yml
}

// ordering reads with the read-only tool, then orders behind the ask; what
// it saw of the clock and randomness before the ask goes into the order.
const ordering = `
const t0 = Date.now(), r0 = Math.random();
const stock = await tools["shop.stock"]({ item: "tea" });
const order = await tools["shop.order"]({ item: "tea:" + t0 + ":" + r0 });
return { stock: stock.count, order: order.count, t0, r0, item: order.item };`

// serveOn starts `codemode serve` on a store (see serveChild) and waits
// until it is ready (its upstreams connected); kill ends it with SIGKILL.
func serveOn(t *testing.T, yml, store string) (base string, kill func()) {
	t.Helper()
	base, cmd, _ := serveChild(t, yml, store)
	testkit.Eventually(t, base+" to be ready", func() bool { status, _ := testkit.Get(t, base+"/readyz"); return status == http.StatusOK })
	return base, func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

func postJSON(t *testing.T, url, body string, into any) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %s: %v", url, b, err)
		}
	}
	return resp.StatusCode
}

type runReply struct {
	SessionID        string `json:"session_id"`
	CallID           string `json:"call_id"`
	Status           string `json:"status"`
	PendingApprovals []struct {
		ID     string `json:"id"`
		CallID string `json:"call_id"`
		Tool   string `json:"tool"`
	} `json:"pending_approvals"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// suspendOn posts the ordering run and checks that it suspends at the order.
func suspendOn(t *testing.T, base string) runReply {
	t.Helper()
	var run runReply
	if code := postJSON(t, base+"/v1/run", fmt.Sprintf(`{"code": %q}`, ordering), &run); code != http.StatusOK {
		t.Fatalf("POST /v1/run: %d", code)
	}
	if run.Status != "suspended" || run.Error == nil || run.Error.Code != "SUSPENDED" || len(run.PendingApprovals) != 1 || run.PendingApprovals[0].Tool != "shop.order" {
		t.Fatalf("the run did not suspend at the order: %+v %+v", run, run.Error)
	}
	return run
}

// finishOn answers the run's ask on base and reads its result from the call
// endpoint and from the session's event stream.
func finishOn(t *testing.T, base string, run runReply, s *shop) {
	t.Helper()
	url := fmt.Sprintf("%s/v1/sessions/%s", base, run.SessionID)
	if code := postJSON(t, url+"/approvals/"+run.PendingApprovals[0].ID, `{"decision": "allow"}`, nil); code != http.StatusOK {
		t.Fatalf("answer: %d", code)
	}
	var call struct {
		State  string `json:"state"`
		Result *struct {
			IsError bool `json:"is_error"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	_, b := testkit.Get(t, url+"/calls/"+run.CallID+"?wait=20s")
	if err := json.Unmarshal([]byte(b), &call); err != nil || call.State != "settled" || call.Result == nil || call.Result.IsError {
		t.Fatalf("the resumed run: %s (%v)", b, err)
	}
	var got struct {
		Stock, Order int
		T0           int64
		R0           float64
		Item         string
	}
	if err := json.Unmarshal([]byte(call.Result.Content[0].Text), &got); err != nil {
		t.Fatalf("result %q: %v", call.Result.Content[0].Text, err)
	}
	if got.Stock != 1 || got.Order != 1 || got.Item != fmt.Sprintf("tea:%v:%v", got.T0, got.R0) {
		t.Fatalf("result %+v: want the first read and order, with the clock and randomness seen before the ask", got)
	}
	if s.reads.Load() != 1 || s.orders.Load() != 1 {
		t.Fatalf("the shop's tools ran %d and %d times; want once each", s.reads.Load(), s.orders.Load())
	}
	// The session's event stream has the result too.
	req, _ := http.NewRequest("GET", url+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var resumed bool
	for sc.Scan() {
		line := sc.Text()
		resumed = resumed || strings.Contains(line, `"type":"tool/code-resumed"`)
		if strings.Contains(line, `"type":"tool/result"`) && strings.Contains(line, `"call_id":"`+run.CallID+`"`) {
			if !resumed || !strings.Contains(line, `\"order\": 1`) {
				t.Fatalf("the stream's result: %s (resumed %v)", line, resumed)
			}
			return
		}
	}
	t.Fatalf("the event stream ended without the run's result: %v", sc.Err())
}

// TestSuspendedRunSurvivesSIGKILL: a run suspends at an ask; the server is
// killed; after the restart the ask is answered over HTTP and the run
// resumes by replay: the right value, each tool body once.
func TestSuspendedRunSurvivesSIGKILL(t *testing.T) {
	s := newShop(t)
	store := "sqlite://" + filepath.Join(t.TempDir(), "log.db")
	base, kill := serveOn(t, shopYAML(s, true), store)
	run := suspendOn(t, base)
	kill()
	base, _ = serveOn(t, shopYAML(s, true), store)
	finishOn(t, base, run, s)
}

// TestSuspendedRunResumesOnAnotherReplica: two servers on one PostgreSQL;
// the run suspends on one and is answered, and resumed, on the other.
func TestSuspendedRunResumesOnAnotherReplica(t *testing.T) {
	store := pgtest.Schema(t)
	s := newShop(t)
	one, kill := serveOn(t, shopYAML(s, true), store)
	two, _ := serveOn(t, shopYAML(s, true), store)
	run := suspendOn(t, one)
	kill() // the first replica is gone for good
	finishOn(t, two, run, s)
}

// TestInterruptedRunResumesAfterRestart: a run that may suspend is in flight
// when its server is killed: after the restart it resumes by replay. The
// order it settled is not placed again; the read-only call it was in runs
// again.
func TestInterruptedRunResumesAfterRestart(t *testing.T) {
	s := newShop(t)
	store := "sqlite://" + filepath.Join(t.TempDir(), "log.db")
	yml := shopYAML(s, false)
	base, kill := serveOn(t, yml, store)
	code := `const o = await tools["shop.order"]({ item: "tea" });
const r = await tools["shop.slow"]({ item: "milk" });
return { order: o.count, slow: r.count, t: Date.now() };`
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(base+"/v1/run", "application/json", strings.NewReader(fmt.Sprintf(`{"code": %q}`, code)))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-s.slowing:
	case <-time.After(30 * time.Second):
		t.Fatal("the run never reached the slow call")
	}
	time.Sleep(300 * time.Millisecond) // its events linger a moment before they are written
	kill()
	if err := <-done; err == nil {
		t.Fatal("the killed server answered the run")
	}
	base, _ = serveOn(t, yml, store)
	// The one session's one run: find it, and wait for its result.
	var list struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if _, b := testkit.Get(t, base+"/v1/sessions"); json.Unmarshal([]byte(b), &list) != nil || len(list.Sessions) != 1 {
		t.Fatalf("sessions: %s", b)
	}
	var events struct {
		Events []struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		} `json:"events"`
	}
	url := base + "/v1/sessions/" + list.Sessions[0].ID
	if _, b := testkit.Get(t, url+"/events"); json.Unmarshal([]byte(b), &events) != nil || len(events.Events) == 0 || events.Events[0].Type != "tool/call" {
		t.Fatalf("events: %s", b)
	}
	_, b := testkit.Get(t, url+"/calls/"+events.Events[0].CallID+"?wait=20s")
	if !strings.Contains(b, `"state":"settled"`) || !strings.Contains(b, `\"order\": 1`) || !strings.Contains(b, `\"slow\": 2`) {
		t.Fatalf("the resumed run: %s", b)
	}
	if s.orders.Load() != 1 || s.slows.Load() != 2 {
		t.Fatalf("orders %d, slow reads %d; want the order once and the read again", s.orders.Load(), s.slows.Load())
	}
}

// TestResumedRunSurvivesSIGKILL: a suspended run is answered and resumes;
// its server is killed while the resumed program runs past the log; after
// the restart it resumes again, exactly: the order is not placed twice, the
// read it was in runs again.
func TestResumedRunSurvivesSIGKILL(t *testing.T) {
	s := newShop(t)
	store := "sqlite://" + filepath.Join(t.TempDir(), "log.db")
	base, kill := serveOn(t, shopYAML(s, true), store)
	code := `const stock = await tools["shop.stock"]({ item: "tea" });
const order = await tools["shop.order"]({ item: "tea" });
const slow = await tools["shop.slow"]({ item: "milk" });
return { stock: stock.count, order: order.count, slow: slow.count };`
	var run runReply
	if status := postJSON(t, base+"/v1/run", fmt.Sprintf(`{"code": %q}`, code), &run); status != http.StatusOK || run.Status != "suspended" || len(run.PendingApprovals) != 1 {
		t.Fatalf("the run did not suspend: %d %+v", status, run)
	}
	url := fmt.Sprintf("%s/v1/sessions/%s", base, run.SessionID)
	if status := postJSON(t, url+"/approvals/"+run.PendingApprovals[0].ID, `{"decision": "allow"}`, nil); status != http.StatusOK {
		t.Fatalf("answer: %d", status)
	}
	select {
	case <-s.slowing: // the resumed program placed the order and is in the slow read
	case <-time.After(30 * time.Second):
		t.Fatal("the resumed run never reached the slow read")
	}
	time.Sleep(300 * time.Millisecond) // its events linger a moment before they are written
	kill()
	base, _ = serveOn(t, shopYAML(s, true), store)
	_, b := testkit.Get(t, fmt.Sprintf("%s/v1/sessions/%s/calls/%s?wait=30s", base, run.SessionID, run.CallID))
	if !strings.Contains(b, `"state":"settled"`) || !strings.Contains(b, `\"order\": 1`) || !strings.Contains(b, `\"slow\": 2`) {
		t.Fatalf("the run resumed after the kill: %s", b)
	}
	if s.orders.Load() != 1 || s.reads.Load() != 1 || s.slows.Load() != 2 {
		t.Fatalf("orders %d, stock reads %d, slow reads %d; want 1, 1 and 2", s.orders.Load(), s.reads.Load(), s.slows.Load())
	}
}
