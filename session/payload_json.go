package session

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/codemode/codemode/internal/jsontext"
	"github.com/codemode/codemode/registry"
)

// jsonAppender is a payload that writes its own JSON, byte for byte as
// json.Marshal writes it, without its reflection; false leaves the value to
// json.Marshal (one whose encoding would fail, say).
type jsonAppender interface {
	appendJSON(b []byte) ([]byte, bool)
}

// The nested dispatch events are the log's most frequent: two per SDK call.
// Their payloads are jsonAppenders (FuzzDispatchJSON holds them to
// json.Marshal); they leave to it a content block with more than a type and
// a text.

func (s *CodeDispatchStart) appendFields(b []byte) ([]byte, bool) {
	b = append(b, `"root_call_id":`...)
	b = jsontext.AppendStringHTML(b, s.RootCallID)
	b = append(b, `,"parent_call_id":`...)
	b = jsontext.AppendStringHTML(b, s.ParentCallID)
	b = append(b, `,"sub_call_id":`...)
	b = jsontext.AppendStringHTML(b, s.SubCallID)
	if s.Number != 0 {
		b = append(b, `,"number":`...)
		b = strconv.AppendInt(b, int64(s.Number), 10)
	}
	b = append(b, `,"name":`...)
	b = jsontext.AppendStringHTML(b, s.Name)
	b = append(b, `,"arguments":`...)
	b, ok := appendRaw(b, s.Arguments)
	if s.Journal != "" {
		b = append(b, `,"journal":`...)
		b = jsontext.AppendStringHTML(b, s.Journal)
	}
	return b, ok
}

// size is room for the start's fields, so that writing them grows nothing.
func (s *CodeDispatchStart) size() int {
	return 96 + len(s.RootCallID) + len(s.ParentCallID) + len(s.SubCallID) + len(s.Name) + len(s.Arguments) + len(s.Journal)
}

func (s CodeDispatchStart) appendJSON(b []byte) ([]byte, bool) {
	b = slices.Grow(b, s.size())
	b = append(b, '{')
	b, ok := s.appendFields(b)
	return append(b, '}'), ok
}

func (d CodeDispatch) appendJSON(b []byte) ([]byte, bool) {
	if d.Contexts != nil {
		return b, false // rare: json.Marshal's
	}
	n := d.CodeDispatchStart.size() + 128 + len(d.Value)
	for i := range d.Content {
		n += 32 + len(d.Content[i].Type) + len(d.Content[i].Text)
	}
	if d.Error != nil {
		n += 48 + len(d.Error.Code) + len(d.Error.Kind) + len(d.Error.Message)
	}
	b = slices.Grow(b, n)
	b = append(b, '{')
	b, ok := d.CodeDispatchStart.appendFields(b)
	if !ok {
		return b, false
	}
	b = append(b, `,"is_error":`...)
	b = strconv.AppendBool(b, d.IsError)
	b = append(b, `,"content":`...)
	if b, ok = appendTextBlocks(b, d.Content); !ok {
		return b, false
	}
	if e := d.Error; e != nil {
		b = appendMessageObject(b, `,"error":{"code":`, string(e.Code), `,"kind":`, e.Kind, e.Message)
	}
	b = append(b, `,"started_at":`...)
	if b, ok = appendTime(b, d.StartedAt); !ok {
		return b, false
	}
	b = append(b, `,"ended_at":`...)
	if b, ok = appendTime(b, d.EndedAt); !ok {
		return b, false
	}
	if len(d.Value) > 0 {
		b = append(b, `,"value":`...)
		if b, ok = appendRaw(b, d.Value); !ok {
			return b, false
		}
	}
	if t := d.Thrown; t != nil {
		b = appendMessageObject(b, `,"thrown":{"tool":`, t.Tool, `,"code":`, t.Code, t.Message)
	}
	if d.ConcludesTurn {
		b = append(b, `,"concludes_turn":true`...)
	}
	return append(b, '}'), true
}

// appendMessageObject appends an error's object from open (its key and its
// first field's, `,"error":{"code":`) on: first, then opt with optKey unless
// it is empty, then the message.
func appendMessageObject(b []byte, open, first, optKey, opt, message string) []byte {
	b = append(b, open...)
	b = jsontext.AppendStringHTML(b, first)
	if opt != "" {
		b = append(b, optKey...)
		b = jsontext.AppendStringHTML(b, opt)
	}
	b = append(b, `,"message":`...)
	b = jsontext.AppendStringHTML(b, message)
	return append(b, '}')
}

// appendRaw appends raw as json.Marshal writes a json.RawMessage: null when
// nil, else compacted with HTML characters escaped; false when it is not JSON.
func appendRaw(b []byte, raw json.RawMessage) ([]byte, bool) {
	if raw == nil {
		return append(b, "null"...), true
	}
	if bytes.IndexFunc(raw, needsRewrite) < 0 { // compact already, and nothing to escape
		return append(b, raw...), json.Valid(raw)
	}
	var c bytes.Buffer
	if json.Compact(&c, raw) != nil {
		return b, false
	}
	buf := bytes.NewBuffer(b)
	json.HTMLEscape(buf, c.Bytes())
	return buf.Bytes(), true
}

// needsRewrite reports the runes json.Marshal changes in a raw message:
// whitespace (compacted away outside strings) and what HTML escaping quotes;
// and U+FFFD, as which invalid UTF-8 decodes, so that it takes the exact path.
func needsRewrite(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '<', '>', '&', '\u2028', '\u2029', '\uFFFD':
		return true
	}
	return false
}

// appendTextBlocks appends blocks as json.Marshal writes them when each has
// only a type and a text; false otherwise.
func appendTextBlocks(b []byte, blocks []registry.ContentBlock) ([]byte, bool) {
	if blocks == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i := range blocks {
		c := &blocks[i]
		if c.Data != "" || c.MimeType != "" || c.URI != "" || c.Name != "" || c.Title != "" || c.Description != "" ||
			c.Size != nil || c.Resource != nil || c.Annotations != "" || c.Meta != "" {
			return b, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = jsontext.AppendStringHTML(b, c.Type)
		if c.Text != "" {
			b = append(b, `,"text":`...)
			b = jsontext.AppendStringHTML(b, c.Text)
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// appendTime appends t as time.Time.MarshalJSON does; false for what it
// refuses (a year outside 0–9999, a zone offset of seconds or of a day).
func appendTime(b []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}
