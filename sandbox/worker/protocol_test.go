package worker

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/sandbox"
)

// frame builds a frame of a message's JSON and a raw value.
func frame(msg string, raw ...string) []byte {
	r := strings.Join(raw, "")
	b := make([]byte, 8, 8+len(msg)+len(r))
	binary.BigEndian.PutUint32(b, uint32(4+len(msg)+len(r)))
	binary.BigEndian.PutUint32(b[4:], uint32(len(msg)))
	return append(append(b, msg...), r...)
}

func TestFrameRoundTrip(t *testing.T) {
	msgs := []*message{
		{Type: msgHello, Version: protocolVersion, PID: 7, Limits: "stack 1"},
		{Type: msgRun, Run: 1, Source: "return 1\n\u2028\"", Options: &sandbox.Options{Timeout: time.Second, Memory: 1 << 20}, Names: []string{"a", "b.c"}, NamesID: 3, Spin: true},
		{Type: msgCall, Run: 1, Seq: 2, Name: "math_add", Args: json.RawMessage(`{"a":1}`)},
		{Type: msgSettle, Run: 1, Seq: 2, Value: json.RawMessage(`null`), Spin: true},
		{Type: msgSettle, Run: 1, Seq: 3},
		{Type: msgSettle, Run: 1, Seq: 4, Error: &callError{ToolName: "t", Message: "no"}},
		{Type: msgCancel, Run: 1, Reason: reasonCancelled, Detail: "client went away"},
		{Type: msgDone, Run: 1, Memory: 42, Result: &result{Logs: []string{"x"}, Value: json.RawMessage(`{"a":[1]}`), Abandoned: true}},
		{Type: msgDone, Run: 1, Result: &result{Err: &failure{Kind: "limit", Message: "m"}}},
	}
	var buf bytes.Buffer
	w := newFrameWriter(&buf)
	for _, m := range msgs {
		if err := w.write(m); err != nil {
			t.Fatal(err)
		}
	}
	r := newFrameReader(&buf, MaxFrameBytes)
	for i, want := range msgs {
		got, err := r.read()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("frame %d: got %+v, want %+v", i, got, want)
		}
	}
	if _, err := r.read(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestFrameCarriesDeepValues(t *testing.T) {
	// A result as deep as data may be, inside a message: encoding/json alone would refuse
	// the document for its depth.
	deep := []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))
	var buf bytes.Buffer
	if err := newFrameWriter(&buf).write(&message{Type: msgDone, Run: 1, Result: &result{Value: deep}}); err != nil {
		t.Fatal(err)
	}
	m, err := newFrameReader(&buf, MaxFrameBytes).read()
	if err != nil || !bytes.Equal(m.Result.Value, deep) {
		t.Fatalf("read: %v", err)
	}
}

func TestFrameReaderRejects(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"empty frame", []byte{0, 0, 0, 0}, "frame too large: 0 bytes"},
		{"message longer than its frame", []byte{0, 0, 0, 5, 0, 0, 0, 9, '{'}, "a 9-byte message in a 5-byte frame"},
		{"raw value on a frame without one", frame(`{"t":"cancel","run":1,"reason":"timeout"}`, "[1]"), `a "cancel" frame carries no value`},
		{"over the limit", []byte{0, 1, 0, 0}, "frame too large: 65536 bytes (limit 1024)"},
		{"truncated header", []byte{0, 0}, "unexpected EOF"},
		{"truncated payload", frame(`{"t":"hello"}`)[:10], "unexpected EOF"},
		{"not JSON", frame(`{"t":`), "decode frame"},
		{"unknown type", frame(`{"t":"exec"}`), `unknown message type "exec"`},
		{"wrong version", frame(`{"t":"hello","version":9}`), "protocol version 9"},
		{"run without options", frame(`{"t":"run","run":1}`), "run without id or options"},
		{"call without args", frame(`{"t":"call","run":1,"seq":1,"name":"x"}`), "call without"},
		{"settle without seq", frame(`{"t":"settle","run":1}`), "settle without"},
		{"cancel with an unknown reason", frame(`{"t":"cancel","run":1,"reason":"boredom"}`), "cancel without"},
		{"done without result", frame(`{"t":"done","run":1}`), "done without"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newFrameReader(bytes.NewReader(tt.input), 1024).read()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestFrameWriterRefusesLargeFrames(t *testing.T) {
	var buf bytes.Buffer
	w := newFrameWriter(&buf)
	w.max = 1 << 10
	err := w.write(&message{Type: msgRun, Run: 1, Source: strings.Repeat("x", 1<<10)})
	if !errors.Is(err, errFrameTooLarge) || buf.Len() != 0 {
		t.Fatalf("err = %v, %d bytes written; want errFrameTooLarge and nothing written", err, buf.Len())
	}
}

func FuzzFrameReader(f *testing.F) {
	f.Add(frame(`{"t":"hello","version":1,"pid":3}`))
	f.Add(frame(`{"t":"call","run":1,"seq":1,"name":"x"}`, `{}`))
	f.Add(frame(`{"t":"done","run":1,"result":{"logs":["a"],"error":{"kind":"limit","message":"m"}}}`, `[1,{"b":null}]`))
	f.Add(append(frame(`{"t":"settle","run":1,"seq":2}`, `"v"`), frame(`{"t":"cancel","run":1,"reason":"timeout"}`)...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 6, 0, 0, 0, 2, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newFrameReader(bytes.NewReader(data), 1<<16)
		for {
			m, err := r.read()
			if err != nil {
				return
			}
			// Whatever decodes is a valid message, and encodes and decodes to itself.
			var buf bytes.Buffer
			if err := newFrameWriter(&buf).write(m); err != nil {
				t.Fatalf("re-encode %+v: %v", m, err)
			}
			again, err := newFrameReader(&buf, MaxFrameBytes).read()
			if err != nil {
				t.Fatalf("decode the re-encoded %+v: %v", m, err)
			}
			if !reflect.DeepEqual(m, again) {
				t.Fatalf("round trip changed the message: %+v → %+v", m, again)
			}
		}
	})
}
