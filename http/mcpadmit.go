package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/codemode/codemode/registry"
)

// admitMCP holds an MCP tool call to the same admission as a run over the
// REST API: a POST whose JSON-RPC message (or any message of a batch) is a
// tools/call takes a run slot, and for run_code the run's memory from the
// memory budget; when neither is free it is refused with the same 503 (the
// MCP client sees an HTTP error it may retry). What it takes, with its
// body's reservation, is held until the request's calls end (the MCP
// handler claims it through the ticket in mcpTicketHeader, see mcpTickets),
// and for calls that never start until the request ends. Other messages
// (initialize, list, notifications) pass untouched. The body was bounded by
// limitBody; it is read here and handed on whole.
func (s *Server) admitMCP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(mcpTicketHeader) // only this server issues tickets
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			s.writeError(w, badRequest("reading the body: %v", err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if calls, runCode := mcpToolCalls(body); calls > 0 {
			memory := int64(0)
			if runCode {
				memory = int64(s.app.Config.Limits.Memory)
			}
			release, ok := s.admit(w, r, entryMCP, memory)
			if !ok {
				return
			}
			token := s.mcpTickets.issue(calls, func() { releaseBefore(r, release) })
			defer s.mcpTickets.served(token)
			r.Header.Set(mcpTicketHeader, token)
		}
		next.ServeHTTP(w, r)
	})
}

// mcpTicketHeader carries an admitted /mcp request's ticket to the MCP
// handler, which hands a tool call the request's header.
const mcpTicketHeader = "Codemode-Admission-Ticket"

// mcpTickets link the admission of an /mcp POST to the tool calls it
// carries. A ticket counts the request's calls: each claims it as it starts
// and is done when it ends, and what the request was admitted with is
// released once every call has been claimed and is done, or, once the
// request has ended (served), when the calls already claimed are done;
// a call that claims after its request ended is refused (its client has
// gone, or the MCP handler answered the request without it).
type mcpTickets struct {
	mu   sync.Mutex
	last uint64
	open map[string]*mcpTicket
}

type mcpTicket struct {
	release            func()
	unclaimed, running int
	served             bool
}

// issue opens a ticket for a request of calls tool calls admitted with
// release, and returns its token.
func (t *mcpTickets) issue(calls int, release func()) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open == nil {
		t.open = map[string]*mcpTicket{}
	}
	t.last++
	token := strconv.FormatUint(t.last, 10)
	t.open[token] = &mcpTicket{release: release, unclaimed: calls}
	return token
}

// claim is the MCP handler's Admission: a call claims the ticket of the
// request that carried it.
func (t *mcpTickets) claim(header http.Header) (done func(), ok bool) {
	token := header.Get(mcpTicketHeader)
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.open[token]
	if k == nil || k.served || k.unclaimed == 0 {
		return nil, false
	}
	k.unclaimed--
	k.running++
	return sync.OnceFunc(func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		k.running--
		t.settle(token, k)
	}), true
}

// served marks the end of the request of token.
func (t *mcpTickets) served(token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k := t.open[token]; k != nil {
		k.served = true
		t.settle(token, k)
	}
}

// settle releases and closes a ticket none of whose calls runs or can
// still start. t.mu is held.
func (t *mcpTickets) settle(token string, k *mcpTicket) {
	if k.running == 0 && (k.unclaimed == 0 || k.served) {
		delete(t.open, token)
		k.release()
	}
}

// mcpToolCalls counts the tools/call messages of a JSON-RPC body (one
// message or a batch), and reports whether one of them calls run_code.
func mcpToolCalls(body []byte) (calls int, runCode bool) {
	type message struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var batch []message
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &batch) != nil {
			return 0, false
		}
	} else {
		var one message
		if json.Unmarshal(body, &one) != nil {
			return 0, false
		}
		batch = []message{one}
	}
	for _, m := range batch {
		if m.Method == "tools/call" {
			calls++
			runCode = runCode || m.Params.Name == registry.RunCode
		}
	}
	return calls, runCode
}
