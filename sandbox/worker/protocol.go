package worker

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/codemode/codemode/internal/jsontext"
	"github.com/codemode/codemode/sandbox"
)

// The protocol between the pool and a worker: frames over the worker's stdin (parent →
// worker) and stdout (worker → parent). A frame is a 4-byte big-endian payload length, then
// the payload: a 4-byte big-endian length J, J bytes of one JSON object (a message), and the
// rest of the payload raw: the one JSON value the message carries, if any (a call's
// argument, a settlement's value, a result's value). Raw values cross byte for byte and
// outside the message's JSON, so that their nesting (up to sandbox.MaxDataDepth) does not add
// to the message's (encoding/json refuses more than 10,000 levels in one document). The worker says hello once; then
// the parent sends run, the worker sends a call for each tool call and the parent a settle for
// each call, the parent may send cancel, and the worker ends the run with done. A worker runs
// one program at a time. Anything else, or a frame over MaxFrameBytes, is a protocol error
// that ends the worker.

// MaxFrameBytes bounds a frame's payload in either direction. The pool keeps a run's limits
// within it (MaxResultBytes, MaxArgBytes, MaxLogBytes) and refuses a tool value that would
// not fit.
const MaxFrameBytes = 64 << 20

// protocolVersion is sent in hello; a worker speaking another version is refused.
const protocolVersion = 4

// Message types.
const (
	msgHello  = "hello"  // worker → parent, once, when ready
	msgRun    = "run"    // parent → worker: start a program
	msgCall   = "call"   // worker → parent: a tool call of the run
	msgSettle = "settle" // parent → worker: a call's outcome
	msgCancel = "cancel" // parent → worker: stop the run
	msgDone   = "done"   // worker → parent: the run's result
)

// message is every frame's payload; Type says which fields are set.
type message struct {
	Type string `json:"t"`
	Run  uint64 `json:"run,omitempty"`
	Seq  int    `json:"seq,omitempty"`
	// run and settle: the worker may spin while it awaits the next settlement (see
	// rawConn.spinRead); the pool says so while few runs share the CPUs.
	Spin bool `json:"spin,omitempty"`

	// hello
	Version int    `json:"version,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Limits  string `json:"limits,omitempty"` // the caps the worker applied, for the log
	Hard    int64  `json:"hard,omitempty"`   // the hard memory cap it applied, bytes; 0 for none

	// run
	Source  string           `json:"source,omitempty"`
	Options *sandbox.Options `json:"options,omitempty"`
	Names   []string         `json:"names,omitempty"`    // the host's tool names, when NamesID is new to the worker
	NamesID uint64           `json:"names_id,omitempty"` // identifies the set of names
	Hold    bool             `json:"hold,omitempty"`     // the host holds calls (sandbox.Holder): the worker says which it may run inline
	// run: the journal to replay (sandbox.Replayer); call: the piece of the run's journal
	// recorded since its previous call (sandbox.Call.Journal)
	Journal string `json:"journal,omitempty"`
	// run: the host keeps the run's journal (sandbox.Replayer)
	Journaled bool `json:"journaled,omitempty"`

	// call
	Name   string          `json:"name,omitempty"`
	Args   json.RawMessage `json:"-"` // raw
	Line   int             `json:"line,omitempty"`
	Column int             `json:"col,omitempty"`
	// Inline: the program awaits this call and nothing else, so the parent may run it on the
	// goroutine that reads the frames (sandbox.Holder): nothing will come from the worker
	// before its settlement but a done (after a cancel).
	Inline bool `json:"inline,omitempty"`

	// settle: Value (empty means undefined; raw) or Error
	Value json.RawMessage `json:"-"`
	Error *callError      `json:"error,omitempty"`

	// cancel
	Reason string `json:"reason,omitempty"` // reasonTimeout or reasonCancelled
	Detail string `json:"detail,omitempty"` // why, for the failure message

	// done
	Result *result `json:"result,omitempty"`
	Memory int64   `json:"memory,omitempty"` // what the worker's Go runtime holds after the run, bytes
}

const (
	reasonTimeout   = "timeout"
	reasonCancelled = "cancelled"
)

type callError struct {
	ToolName string `json:"tool,omitempty"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message"`
}

type failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// result is a sandbox.Result on the wire.
type result struct {
	Logs      []string        `json:"logs,omitempty"`
	Value     json.RawMessage `json:"-"` // raw
	Err       *failure        `json:"error,omitempty"`
	Abandoned bool            `json:"abandoned,omitempty"`
	Journal   string          `json:"journal,omitempty"`
}

func toWire(r sandbox.Result) *result {
	w := &result{Logs: r.Logs, Value: r.Value, Abandoned: r.Abandoned, Journal: r.Journal}
	if r.Err != nil {
		w.Err = &failure{Kind: r.Err.Kind, Message: r.Err.Message}
	}
	return w
}

func (w *result) sandbox() sandbox.Result {
	r := sandbox.Result{Logs: w.Logs, Value: w.Value, Abandoned: w.Abandoned, Journal: w.Journal}
	if len(r.Value) == 0 {
		r.Value = nil
	}
	if w.Err != nil {
		r.Err = &sandbox.Failure{Kind: w.Err.Kind, Message: w.Err.Message}
		r.Value = nil
	}
	return r
}

// raw is the JSON value a message carries outside its JSON.
func (m *message) raw() []byte {
	switch {
	case m.Type == msgCall:
		return m.Args
	case m.Type == msgSettle:
		return m.Value
	case m.Type == msgDone && m.Result != nil:
		return m.Result.Value
	}
	return nil
}

// setRaw puts a frame's raw value in place.
func (m *message) setRaw(b []byte) error {
	switch {
	case len(b) == 0:
	case m.Type == msgCall:
		m.Args = b
	case m.Type == msgSettle:
		m.Value = b
	case m.Type == msgDone && m.Result != nil:
		m.Result.Value = b
	default:
		return fmt.Errorf("a %q frame carries no value", m.Type)
	}
	return nil
}

// validate checks the fields a message of its type needs.
func (m *message) validate() error {
	switch m.Type {
	case msgHello:
		if m.Version != protocolVersion {
			return fmt.Errorf("protocol version %d, want %d", m.Version, protocolVersion)
		}
	case msgRun:
		if m.Run == 0 || m.Options == nil {
			return errors.New("run without id or options")
		}
	case msgCall:
		if m.Run == 0 || m.Seq <= 0 || m.Name == "" || len(m.Args) == 0 {
			return errors.New("call without run, seq, name or args")
		}
	case msgSettle:
		if m.Run == 0 || m.Seq <= 0 {
			return errors.New("settle without run or seq")
		}
	case msgCancel:
		if m.Run == 0 || (m.Reason != reasonTimeout && m.Reason != reasonCancelled) {
			return errors.New("cancel without run or a known reason")
		}
	case msgDone:
		if m.Run == 0 || m.Result == nil {
			return errors.New("done without run or result")
		}
	default:
		return fmt.Errorf("unknown message type %q", m.Type)
	}
	return nil
}

// errFrameTooLarge reports a frame over the limit.
var errFrameTooLarge = errors.New("frame too large")

// frameReader reads frames from one stream. Not safe for concurrent use.
type frameReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// read returns the next message. io.EOF means the stream ended cleanly between frames; any
// other error means the stream is unusable.
func (fr *frameReader) read() (*message, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(fr.r, hdr[:1]); err != nil {
		return nil, err // io.EOF between frames
	}
	if _, err := io.ReadFull(fr.r, hdr[1:]); err != nil {
		return nil, fmt.Errorf("read frame header: %w", noEOF(err))
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n < 4 || uint64(n) > uint64(fr.max) {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", errFrameTooLarge, n, fr.max)
	}
	if cap(fr.buf) < int(n) {
		fr.buf = make([]byte, n)
	}
	b := fr.buf[:n]
	if _, err := io.ReadFull(fr.r, b); err != nil {
		return nil, fmt.Errorf("read frame: %w", noEOF(err))
	}
	// A large buffer is not kept between frames: one big result must not pin its size.
	if cap(fr.buf) > 1<<20 {
		fr.buf = nil
	}
	j := binary.BigEndian.Uint32(b)
	if uint64(j) > uint64(n-4) {
		return nil, fmt.Errorf("decode frame: a %d-byte message in a %d-byte frame", j, n)
	}
	m := new(message)
	if err := json.Unmarshal(b[4:4+j], m); err != nil {
		return nil, fmt.Errorf("decode frame: %w", err)
	}
	if err := m.setRaw(bytes.Clone(b[4+j:])); err != nil {
		return nil, fmt.Errorf("bad %q frame: %w", m.Type, err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("bad %q frame: %w", m.Type, err)
	}
	return m, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// frameWriter writes frames to one stream. Safe for concurrent use; each frame is written
// whole with one flush.
type frameWriter struct {
	max int // the largest payload written, MaxFrameBytes
	mu  sync.Mutex
	w   *bufio.Writer // guarded by mu
	err error         // the first write error; guarded by mu
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{max: MaxFrameBytes, w: bufio.NewWriterSize(w, 64<<10)}
}

// write encodes and sends m. A message over the limit is refused with errFrameTooLarge and
// nothing is written.
func (fw *frameWriter) write(m *message) error {
	msg, err := jsontext.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %s frame: %w", m.Type, err)
	}
	raw := m.raw()
	size := 4 + len(msg) + len(raw)
	if size > fw.max {
		return fmt.Errorf("%w: %s frame of %d bytes (limit %d)", errFrameTooLarge, m.Type, size, fw.max)
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.err != nil {
		return fw.err
	}
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(size))
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(msg)))
	for _, part := range [][]byte{hdr[:], msg, raw} {
		if _, err := fw.w.Write(part); err != nil {
			fw.err = err
			return err
		}
	}
	if err := fw.w.Flush(); err != nil {
		fw.err = err
		return err
	}
	return nil
}
