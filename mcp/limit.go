package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/codemode/codemode/config"
)

// This file bounds one message read from an upstream (max_message_bytes,
// config.MaxMessageDepth). The transports feed a message's bytes to a
// msgScan as they read them and keep at most the bound: a message over it
// is read on and dropped, never held whole, and when it is a response (its
// top-level "id" found on the way) it is replaced by a JSON-RPC error for
// that id, so that the call it answers fails at once, naming the upstream
// and the size, rather than waiting out its timeout. "At once" is as soon as
// the bound is crossed when the id came first (as every SDK writes it), so a
// reply that never ends fails its call too; else when the message ends.

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
	rpc        bool // a top-level "jsonrpc" key was read
}

// maxIDBytes bounds the id kept: JSON-RPC ids are short strings or numbers.
const maxIDBytes = 256

func (s *msgScan) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		if s.inStr && !s.esc && !s.inKey && !s.inID {
			// Inside a string nothing is kept: skip to its next quote or escape.
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				break
			}
			i += j
		}
		s.byte(p[i])
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
				s.rpc = s.rpc || string(s.key) == "jsonrpc"
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
			if s.inID {
				s.id = s.id[:0] // a repeated key: the last wins, as in encoding/json
			}
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

// over reports whether the message has broken a bound in the bytes read so far.
func (s *msgScan) over(limit int64) bool { return s.n > limit || s.tooDeep() }

// scannedID is the message's top-level id, once read whole.
func (s *msgScan) scannedID() (jsonrpc.ID, bool) {
	if s.inID || len(s.id) == 0 {
		return jsonrpc.ID{}, false
	}
	var raw any
	if json.Unmarshal(bytes.TrimSpace(s.id), &raw) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil || !id.IsValid() {
		return jsonrpc.ID{}, false
	}
	return id, true
}

// refusal is the JSON-RPC error that stands for a message over a bound, as
// the answer to the request it answered; nil when the message named no
// request (a notification, a request of the server's, or no id found).
func (s *msgScan) refusal(server string, limit int64) *jsonrpc.Response {
	id, ok := s.scannedID()
	if !ok {
		return nil
	}
	return s.refusalFor(id, server, limit)
}

// refusalFor is the refusal as the answer to the request id.
func (s *msgScan) refusalFor(id jsonrpc.ID, server string, limit int64) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: s.why(server, limit)}}
}

// undecodable is the JSON-RPC error that stands for a reply that did not
// decode (err), as the answer to the request it answered, so that the call
// fails at once rather than at its timeout; nil unless the message looked
// like JSON-RPC (a "jsonrpc" key beside its id), for a stray print that
// happens to be JSON must fail no call.
func (s *msgScan) undecodable(server string, err error) *jsonrpc.Response {
	id, ok := s.scannedID()
	if !ok || !s.rpc {
		return nil
	}
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("upstream %s sent a reply that is not valid JSON-RPC (%v); it was dropped", server, err)}}
}

// why says which bound the message broke.
func (s *msgScan) why(server string, limit int64) string {
	if s.n > limit {
		return fmt.Sprintf("upstream %s sent a reply larger than its max_message_bytes (%d bytes); it was dropped", server, limit)
	}
	return fmt.Sprintf("upstream %s sent a reply nested deeper than %d levels; it was dropped", server, config.MaxMessageDepth)
}

// replyBound bounds the messages in a url upstream's response bodies as
// readLine bounds a stdio server's lines. A body is read before the go-sdk
// sees it: a JSON body is kept whole up to the bound (the go-sdk reads it
// whole anyway), an event stream an event at a time. A message over the
// bound becomes the refusal of the request it answers: the id read before
// the bound was crossed, else the call the POST carried (the only request a
// POST's reply answers). A POST's reply ends there, so a reply that never
// ends fails its call as soon as it is over the bound; on a GET stream the
// rest of the event is read on without being kept.
type replyBound struct {
	server string
	limit  int64
	log    *slog.Logger
}

// wrap bounds resp's body, the reply to req.
func (b *replyBound) wrap(req *http.Request, resp *http.Response) {
	call := postedCall(req)
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "text/event-stream" {
		resp.Body = &sseBody{src: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10), bound: b, call: call}
		return
	}
	resp.Body = &jsonBody{src: resp.Body, bound: b, call: call}
}

// postedCall is the id of the request a POST carries; invalid when it
// carries none (a GET, a notification, a response, a batch).
func postedCall(req *http.Request) jsonrpc.ID {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return jsonrpc.ID{}
	}
	body, err := req.GetBody()
	if err != nil {
		return jsonrpc.ID{}
	}
	defer body.Close()
	scan := &msgScan{}
	if _, err := io.Copy(scan, body); err != nil {
		return jsonrpc.ID{}
	}
	id, _ := scan.scannedID()
	return id
}

// refuse is the refusal of a message over the bound, logged: as the
// answer to the id scanned, else to call; nil when there is neither.
func (b *replyBound) refuse(scan *msgScan, call jsonrpc.ID) *jsonrpc.Response {
	id, ok := scan.scannedID()
	if !ok {
		id = call
	}
	if !id.IsValid() {
		b.log.Warn("upstream sent a message over the message bounds; skipped", "bytes", scan.n, "limit", b.limit, "max_depth", config.MaxMessageDepth)
		return nil
	}
	resp := scan.refusalFor(id, b.server, b.limit)
	b.log.Warn("upstream reply dropped", "error", resp.Error)
	return resp
}

// jsonBody is a JSON reply, read whole within the bound on its first Read.
type jsonBody struct {
	src   io.ReadCloser
	bound *replyBound
	call  jsonrpc.ID
	out   *bytes.Reader // what the reader gets; nil until the first Read
	err   error         // after out
}

func (j *jsonBody) Read(p []byte) (int, error) {
	if j.out == nil {
		j.fill()
	}
	if j.out.Len() == 0 && j.err != nil {
		return 0, j.err
	}
	return j.out.Read(p)
}

func (j *jsonBody) fill() {
	var buf bytes.Buffer
	scan := &msgScan{}
	chunk := make([]byte, 32<<10)
	for {
		n, err := j.src.Read(chunk)
		scan.Write(chunk[:n])
		if scan.over(j.bound.limit) {
			j.src.Close()
			j.err = io.EOF
			resp := j.bound.refuse(scan, j.call)
			if resp == nil {
				j.out, j.err = bytes.NewReader(nil), errors.New(scan.why(j.bound.server, j.bound.limit))
				return
			}
			data, _ := jsonrpc.EncodeMessage(resp)
			j.out = bytes.NewReader(data)
			return
		}
		buf.Write(chunk[:n])
		if err != nil {
			j.out, j.err = bytes.NewReader(buf.Bytes()), err
			return
		}
	}
}

func (j *jsonBody) Close() error { return j.src.Close() }

// sseBody is an event stream passed on an event at a time, each event's
// data (the message) bounded. Events end at a blank line; lines end at
// "\n" (with any "\r" before it), as the go-sdk reads them.
type sseBody struct {
	src   io.ReadCloser
	r     *bufio.Reader
	bound *replyBound
	call  jsonrpc.ID

	out   []byte   // what the reader gets next
	err   error    // after out
	event []byte   // the event being read, while within the bound
	id    []byte   // the event's id line, kept for a refusal (Last-Event-ID)
	scan  *msgScan // the event's data
	skip  bool     // reading on, without keeping, an event over the bound
	done  bool     // the event over the bound was refused
	data  bool     // the line being read is a data line
	mid   bool     // a line is partly read
}

// sseSlack bounds an event's lines other than its data, beside the
// message's own bound.
const sseSlack = 64 << 10

func (s *sseBody) Read(p []byte) (int, error) {
	for len(s.out) == 0 && s.err == nil {
		s.err = s.next()
	}
	if len(s.out) == 0 {
		return 0, s.err
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *sseBody) Close() error { return s.src.Close() }

// next reads one piece of a line, appending what is ready to out.
func (s *sseBody) next() error {
	if s.scan == nil {
		s.scan = &msgScan{}
	}
	chunk, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		err = nil
	}
	start := !s.mid
	s.mid = len(chunk) > 0 && chunk[len(chunk)-1] != '\n'
	blank := start && len(bytes.TrimRight(chunk, "\r\n")) == 0 && len(chunk) > 0
	switch {
	case blank && s.skip:
		// The end of an event over the bound: its refusal, when its id
		// came only after the bound was crossed.
		if !s.done {
			if resp := s.bound.refuse(s.scan, jsonrpc.ID{}); resp != nil {
				s.refusal(resp)
			}
		}
		s.endEvent()
	case blank:
		if len(s.event) > 0 {
			s.out = append(s.event, '\n') // out is empty: Read drains it before calling next
		}
		s.endEvent()
	default:
		if start {
			s.data = bytes.HasPrefix(chunk, []byte("data:"))
			if bytes.HasPrefix(chunk, []byte("id:")) && len(chunk) <= maxIDBytes {
				s.id = append(s.id[:0], chunk...)
			}
		}
		if s.data {
			value := chunk
			if start {
				value = bytes.TrimPrefix(value[len("data:"):], []byte(" "))
			}
			s.scan.Write(value)
		}
		if !s.skip {
			s.event = append(s.event, chunk...)
			if (s.scan.over(s.bound.limit) || int64(len(s.event)) > s.bound.limit+sseSlack) && s.crossed() {
				return io.EOF
			}
		}
	}
	if err != nil && len(s.event) > 0 && !s.skip {
		s.out = append(s.out, s.event...)
		s.event = nil
	}
	return err
}

// crossed drops the event that went over the bound, and reports whether
// the body ends: a POST's reply ends with the refusal; a GET stream's event
// is read on, and refused now when its id is known, else at its end.
func (s *sseBody) crossed() (end bool) {
	s.event, s.skip = nil, true
	if !s.scan.over(s.bound.limit) {
		s.scan.n = s.bound.limit + 1 // over by its other lines: too large all the same
	}
	if _, known := s.scan.scannedID(); known || s.call.IsValid() {
		if resp := s.bound.refuse(s.scan, s.call); resp != nil {
			s.refusal(resp)
		}
		s.done = true
	}
	if s.call.IsValid() {
		s.src.Close()
		return true
	}
	return false
}

// refusal appends the event carrying resp.
func (s *sseBody) refusal(resp *jsonrpc.Response) {
	data, _ := jsonrpc.EncodeMessage(resp)
	s.out = append(s.out, s.id...)
	s.out = append(append(append(s.out, "event: message\ndata: "...), data...), "\n\n"...)
}

// endEvent starts the next event.
func (s *sseBody) endEvent() {
	s.event, s.id, s.scan, s.skip, s.done, s.data = nil, s.id[:0], nil, false, false, false
}
