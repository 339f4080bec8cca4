package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/codemode/codemode/registry"
)

// admitMCP holds an MCP tool call to the same admission as a run over the
// REST API: a POST whose JSON-RPC message (or any message of a batch) is a
// tools/call takes a run slot, and for run_code the run's memory from the
// memory budget, for as long as its request is served; when neither is
// free it is refused with the same 503 (the MCP client sees an HTTP error
// it may retry). Other messages (initialize, list, notifications) pass
// untouched. The body was bounded by limitBody; it is read here and handed
// on whole.
func (s *Server) admitMCP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		if calls, runCode := mcpToolCalls(body); calls {
			memory := int64(0)
			if runCode {
				memory = int64(s.app.Config.Limits.Memory)
			}
			release, ok := s.admit(w, r, entryMCP, memory)
			if !ok {
				return
			}
			defer release()
		}
		next.ServeHTTP(w, r)
	})
}

// mcpToolCalls reports whether a JSON-RPC body (one message or a batch) holds a
// tools/call, and whether one of them calls run_code.
func mcpToolCalls(body []byte) (calls, runCode bool) {
	type message struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var batch []message
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &batch) != nil {
			return false, false
		}
	} else {
		var one message
		if json.Unmarshal(body, &one) != nil {
			return false, false
		}
		batch = []message{one}
	}
	for _, m := range batch {
		if m.Method == "tools/call" {
			calls = true
			runCode = runCode || m.Params.Name == registry.RunCode
		}
	}
	return calls, runCode
}
