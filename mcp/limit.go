package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/codemode/codemode/config"
)

// This file bounds one message read from an upstream (max_message_bytes,
// config.MaxMessageDepth). The transports feed a message's bytes to a
// msgScan as they read them and keep at most the bound: a message over it
// is read on and dropped, never held whole, and when it is a response (its
// top-level "id" found on the way) it is replaced by a JSON-RPC error for
// that id, so that the call it answers fails at once, naming the upstream
// and the size, rather than waiting out its timeout.

// msgScan follows a JSON message a byte at a time without keeping it: its
// size, the deepest nesting reached, and the raw top-level "id".
type msgScan struct {
	n       int64
	depth   int
	deepest int

	inStr, esc bool
	expectKey  bool   // at depth 1, the next string is a key
	inKey      bool   // reading a top-level key
	key        []byte // the last top-level key (its first bytes)
	inID       bool   // reading the top-level id's value
	id         []byte
}

// maxIDBytes bounds the id kept: JSON-RPC ids are short strings or numbers.
const maxIDBytes = 256

func (s *msgScan) Write(p []byte) (int, error) {
	for _, b := range p {
		s.byte(b)
	}
	s.n += int64(len(p))
	return len(p), nil
}

func (s *msgScan) byte(b byte) {
	if s.inStr {
		switch {
		case s.esc:
			s.esc = false
		case b == '\\':
			s.esc = true
		case b == '"':
			s.inStr = false
			if s.inKey {
				s.inKey = false
				return
			}
		}
		s.record(b)
		return
	}
	switch b {
	case '"':
		s.inStr = true
		if s.depth == 1 && s.expectKey {
			s.inKey, s.key = true, s.key[:0]
			return
		}
	case '{', '[':
		s.depth++
		s.deepest = max(s.deepest, s.depth)
		if s.depth == 1 {
			s.expectKey = b == '{'
			return
		}
	case '}', ']':
		s.depth--
		if s.depth == 0 {
			s.inID = false
			return
		}
	case ':':
		if s.depth == 1 {
			s.expectKey = false
			s.inID = string(s.key) == "id"
			return
		}
	case ',':
		if s.depth == 1 {
			s.expectKey, s.inID = true, false
			return
		}
	}
	s.record(b)
}

func (s *msgScan) record(b byte) {
	switch {
	case s.inKey:
		if len(s.key) < 8 {
			s.key = append(s.key, b)
		}
	case s.inID:
		if len(s.id) < maxIDBytes {
			s.id = append(s.id, b)
		}
	}
}

// tooDeep reports whether the message nests deeper than config.MaxMessageDepth.
func (s *msgScan) tooDeep() bool { return s.deepest > config.MaxMessageDepth }

// refusal is the JSON-RPC error that stands for a message over a bound, as
// the answer to the request it answered; nil when the message named no
// request (a notification, a request of the server's, or no id found).
func (s *msgScan) refusal(server string, limit int64) *jsonrpc.Response {
	var raw any
	if json.Unmarshal(bytes.TrimSpace(s.id), &raw) != nil {
		return nil
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil || !id.IsValid() {
		return nil
	}
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: s.why(server, limit)}}
}

// why says which bound the message broke.
func (s *msgScan) why(server string, limit int64) string {
	if s.n > limit {
		return fmt.Sprintf("upstream %s sent a reply larger than its max_message_bytes (%d bytes); it was dropped", server, limit)
	}
	return fmt.Sprintf("upstream %s sent a reply nested deeper than %d levels; it was dropped", server, config.MaxMessageDepth)
}
