package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/codemode/codemode/session"
)

// failingWrites is a store whose writes fail for the store's own reasons
// (a full disk) while failing is set; reads keep working.
type failingWrites struct {
	*session.Memory
	failing atomic.Bool
}

var errDiskFull = fmt.Errorf("write log: no space left on device: %w", session.ErrUnavailable)

func (f *failingWrites) CreateSession(ctx context.Context, s session.Session) error {
	if f.failing.Load() {
		return errDiskFull
	}
	return f.Memory.CreateSession(ctx, s)
}

func (f *failingWrites) Append(ctx context.Context, id string, events ...session.Event) ([]session.Event, error) {
	if f.failing.Load() {
		return nil, errDiskFull
	}
	return f.Memory.Append(ctx, id, events...)
}

func (f *failingWrites) Submit(ctx context.Context, w session.Write) *session.Ticket {
	if f.failing.Load() {
		return session.FailedTicket(errDiskFull)
	}
	return f.Memory.Submit(ctx, w)
}

// WriteErr implements session.WriteHealth as the SQL stores do: the
// latest write's failure, nil once one succeeds.
func (f *failingWrites) WriteErr() error {
	if f.failing.Load() {
		return errDiskFull
	}
	return nil
}

// A store that refuses writes: writes are 503 STORE_UNAVAILABLE, reads
// keep working, /readyz is not ready; once writes succeed again all is
// back, and nothing acknowledged before was lost.
func TestStoreFailureIs503AndNotReady(t *testing.T) {
	o := loadOpenAPI(t)
	st := &failingWrites{Memory: session.NewMemory()}
	ts := newTestServer(t, "", func(su *serverSetup) { su.store = st })
	id := ts.newSession("", "")
	step := `{"tool_calls": [{"id": "%s", "name": "math_add", "arguments": "{\"a\":1,\"b\":2}"}]}`
	resp, b := ts.post("/v1/sessions/"+id+"/steps", fmt.Sprintf(step, "before"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a step: %d %s", resp.StatusCode, b)
	}
	ready := func(want int) string {
		t.Helper()
		resp, b := ts.get("/readyz")
		if resp.StatusCode != want {
			t.Fatalf("readyz: %d %s, want %d", resp.StatusCode, b, want)
		}
		o.checkReply(t, "GET", "/readyz", resp, b)
		return string(b)
	}
	ready(http.StatusOK)

	st.failing.Store(true)
	for _, c := range []struct{ path, route, body string }{
		{"/v1/sessions", "/v1/sessions", `{}`},
		{"/v1/sessions/" + id + "/steps", "/v1/sessions/{id}/steps", fmt.Sprintf(step, "during")},
		{"/v1/run", "/v1/run", `{"code": "return 1"}`},
		{"/v1/run", "/v1/run", `{"code": "return 1", "session_id": "` + id + `"}`},
	} {
		resp, b := ts.post(c.path, c.body)
		msg := wantError(t, resp, b, http.StatusServiceUnavailable, CodeStoreUnavailable)
		if !strings.Contains(msg, "session store") || strings.Contains(msg, "no space") {
			t.Errorf("POST %s: message %q (the details are logged, not sent)", c.path, msg)
		}
		o.checkReply(t, "POST", c.route, resp, b)
	}
	if !strings.Contains(ts.logs.String(), "no space left on device") {
		t.Error("the store's failure is not logged")
	}
	// Reads keep working, and show what was acknowledged.
	resp, b = ts.get("/v1/sessions/" + id + "/events")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"call_id":"before"`) {
		t.Fatalf("events while writes fail: %d %s", resp.StatusCode, b)
	}
	if body := ready(http.StatusServiceUnavailable); !strings.Contains(body, "writes fail") {
		t.Fatalf("readyz while writes fail: %s", body)
	}

	st.failing.Store(false)
	resp, b = ts.post("/v1/sessions/"+id+"/steps", fmt.Sprintf(step, "after"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a step once writes succeed: %d %s", resp.StatusCode, b)
	}
	ready(http.StatusOK)
	evs, err := st.Events(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, e := range evs {
		if e.Type == session.TypeToolCall {
			var c session.ToolCall
			if err := e.Decode(&c); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, c.CallID)
		}
	}
	if got := strings.Join(calls, ","); got != "before,after" {
		t.Fatalf("calls in the log: %s, want before,after", got)
	}
}
