package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// heldStore holds the durability of every write until released, as a
// group commit waiting for its flush would; with fail set, held writes fail
// instead.
type heldStore struct {
	session.Store

	mu      sync.Mutex
	holding bool
	fail    bool
	held    []func() // guarded by mu
}

func (s *heldStore) Submit(ctx context.Context, w session.Write) *session.Ticket {
	t := s.Store.Submit(ctx, w)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holding {
		return t
	}
	out, resolve := session.NewTicket()
	fail := s.fail
	s.held = append(s.held, func() {
		events, err := t.Wait(context.Background())
		if fail {
			events, err = nil, errors.New("the flush failed")
		}
		resolve(events, err)
	})
	return out
}

func (s *heldStore) hold(on, fail bool) {
	s.mu.Lock()
	s.holding, s.fail = on, fail
	s.mu.Unlock()
}

func (s *heldStore) release() {
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.mu.Unlock()
	for _, r := range held {
		r()
	}
}

// Output gating at the edge: a run's or a step's reply is built while its
// log is flushed and sent only once the log is durable; a flush that fails
// turns it into an error, and the result never leaves.
func TestRepliesWaitForTheirLog(t *testing.T) {
	store := &heldStore{Store: session.NewMemory()}
	ts := newTestServer(t, "", func(su *serverSetup) { su.store = store })
	sid := ts.newSession("default", "")
	for _, tc := range []struct {
		name, path string
		body       string
	}{
		{"run", "/v1/run", `{"code": "return (await tools.math_add({a: 40, b: 2})).sum"}`},
		{"step", "/v1/sessions/" + sid + "/steps", `{"tool_calls": [{"id": "c1", "name": "math_add", "arguments": "{\"a\":40,\"b\":2}"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.hold(true, false)
			reply := ts.sendAsync(request{method: http.MethodPost, path: tc.path, body: tc.body})
			select {
			case r := <-reply:
				t.Fatalf("replied (%v %s) before the log was durable", r.err, r.body)
			case <-time.After(100 * time.Millisecond):
			}
			store.hold(false, false)
			store.release()
			r := <-reply
			if r.err != nil || r.resp.StatusCode != http.StatusOK || !strings.Contains(string(r.body), "42") {
				t.Fatalf("reply: %v %+v %s", r.err, r.resp, r.body)
			}
			if r.resp.ContentLength != int64(len(r.body)) {
				t.Errorf("Content-Length %d for a body of %d bytes", r.resp.ContentLength, len(r.body))
			}
		})
		t.Run(tc.name+" whose flush fails", func(t *testing.T) {
			store.hold(true, true)
			reply := ts.sendAsync(request{method: http.MethodPost, path: tc.path, body: strings.ReplaceAll(tc.body, `"c1"`, `"c2"`)})
			defer store.hold(false, false)
			var r response
			for done := false; !done; {
				select {
				case r = <-reply:
					done = true
				case <-time.After(10 * time.Millisecond):
					store.release() // what was held so far fails
				}
			}
			if r.err != nil || r.resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(r.body), `"code":"INTERNAL"`) ||
				strings.Contains(string(r.body), `"results"`) || strings.Contains(string(r.body), `"value"`) {
				t.Fatalf("reply: %v %+v %s; want a 500 without the result", r.err, r.resp, r.body)
			}
		})
	}
}
