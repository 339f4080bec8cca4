package session

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
)

// The event types of the log (docs/contract.md).
const (
	// TypeToolCall is appended before a top-level call runs; payload ToolCall.
	TypeToolCall = "tool/call"
	// TypeToolResult closes a tool/call with the durable result; payload ToolResult.
	TypeToolResult = "tool/result"
	// TypeCodeDispatchStart is appended when a run_code program's SDK call
	// starts; payload CodeDispatchStart. Log-only: never a model message.
	TypeCodeDispatchStart = "tool/code-dispatch-start"
	// TypeCodeDispatch is appended when that SDK call settles; payload
	// CodeDispatch. Log-only: never a model message.
	TypeCodeDispatch = "tool/code-dispatch"
	// TypeUserContext is an additional context committed as a user message;
	// payload UserContext.
	TypeUserContext = "user/context"
	// TypeApprovalAsked records a policy ask waiting for a person; payload
	// ApprovalAsked.
	TypeApprovalAsked = "approval/asked"
	// TypeApprovalAnswered records how an ask ended; payload ApprovalAnswered.
	TypeApprovalAnswered = "approval/answered"
	// TypeToolNotice is a running tool's progress or log line (an upstream
	// MCP server's notifications); payload ToolNotice. Log-only: never a
	// model message.
	TypeToolNotice = "tool/notice"
	// TypeCodeSuspended is appended when a run_code program suspends: its
	// tool/call stays open, waiting for the asks of the sub-calls it names,
	// until it resumes by replay; payload CodeSuspended. Log-only.
	TypeCodeSuspended = "tool/code-suspended"
	// TypeCodeResumed is appended when a suspended run_code call resumes by
	// replay; payload CodeResumed. Log-only.
	TypeCodeResumed = "tool/code-resumed"
)

// The decisions an approval/answered event records.
const (
	DecisionAllow     = "allow"
	DecisionDeny      = "deny"
	DecisionTimeout   = "timeout"
	DecisionCancelled = "cancelled"
)

// Event is one entry of a session log.
//
// Seq and Time are assigned by the Store on append (Seq always; Time when
// zero). Data holds the type-specific fields as one JSON object; the store
// keeps its bytes verbatim. An event marshals flat, the Data members beside
// seq, type and time.
type Event struct {
	Seq  int64
	Type string
	Time time.Time
	Data json.RawMessage

	// checked is set by NewEvent: Data, as long as it is these bytes (not
	// replaced, not resliced), is a JSON object without envelope members, and
	// the store's append need not check it again. Data is not to be changed
	// in place after NewEvent.
	checked checkedData
}

// checkedData identifies the bytes NewEvent checked.
type checkedData struct {
	p *byte
	n int
}

func (c checkedData) covers(data []byte) bool {
	return c.p != nil && len(data) == c.n && unsafe.SliceData(data) == c.p
}

// NewEvent returns an unsequenced event of type typ whose Data is payload
// marshalled to JSON. A json.RawMessage or []byte payload is used verbatim.
// The payload must be a JSON object without seq, type or time members.
func NewEvent(typ string, payload any) (Event, error) {
	if err := checkType(typ); err != nil {
		return Event{}, fmt.Errorf("session: %w", err)
	}
	var data []byte
	var err error
	switch p := payload.(type) {
	case json.RawMessage:
		data = bytes.Clone(p)
		_, err = checkData(data)
	case []byte:
		data = bytes.Clone(p)
		_, err = checkData(data)
	case jsonAppender:
		var ok bool
		if data, ok = p.appendJSON(nil); !ok {
			data, err = marshalPayload(payload)
		}
	default:
		data, err = marshalPayload(payload)
	}
	if err != nil {
		return Event{}, fmt.Errorf("session: %s payload: %w", typ, err)
	}
	e := Event{Type: typ, Data: data}
	if len(data) > 0 && data[0] == '{' { // not space-padded: what prepare keeps verbatim
		e.checked = checkedData{p: unsafe.SliceData(data), n: len(data)}
	}
	return e, nil
}

// marshalPayload marshals a payload that must make an event's data.
func marshalPayload(payload any) ([]byte, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	// json.Marshal's output is valid JSON; a struct whose members cannot be the
	// envelope's makes an object without them.
	if len(data) == 0 || data[0] != '{' || !envelopeFree(reflect.TypeOf(payload)) {
		if err := checkObject(data); err != nil { // a nil pointer to a struct marshals to null
			return nil, err
		}
	}
	return data, nil
}

// Decode unmarshals the event's Data into dst (typically a pointer to the
// payload type that matches e.Type). Empty Data decodes as {}.
func (e Event) Decode(dst any) error {
	data := []byte(e.Data)
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return fmt.Errorf("session: decode %s event %d: %w", e.Type, e.Seq, err)
	}
	return nil
}

// MarshalJSON renders the event flat: {"seq":…,"type":…,"time":…, data members…}.
// The data members are copied verbatim. It fails when Data is not a JSON object
// or repeats one of the envelope fields.
func (e Event) MarshalJSON() ([]byte, error) {
	data, err := checkData(e.Data)
	if err != nil {
		return nil, fmt.Errorf("session: marshal event %d: %w", e.Seq, err)
	}
	typ, err := json.Marshal(e.Type)
	if err != nil {
		return nil, err
	}
	tm, err := e.Time.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("session: marshal event %d: %w", e.Seq, err)
	}
	inner := bytes.TrimSpace(data[1 : len(data)-1])
	buf := make([]byte, 0, len(inner)+len(typ)+len(tm)+40)
	buf = append(buf, `{"seq":`...)
	buf = strconv.AppendInt(buf, e.Seq, 10)
	buf = append(buf, `,"type":`...)
	buf = append(buf, typ...)
	buf = append(buf, `,"time":`...)
	buf = append(buf, tm...)
	if len(inner) > 0 {
		buf = append(buf, ',')
		buf = append(buf, inner...)
	}
	return append(buf, '}'), nil
}

// UnmarshalJSON reads the flat form MarshalJSON writes. seq, type and time
// fill the envelope (absent ones stay zero); every other member goes into Data,
// keys and values verbatim, in order.
func (e *Event) UnmarshalJSON(b []byte) error {
	if !json.Valid(b) {
		return errors.New("session: event is not valid JSON")
	}
	var out Event
	var seen [3]bool
	data := make([]byte, 0, len(b))
	data = append(data, '{')
	err := objectMembers(b, func(key, value []byte) error {
		var field int
		switch {
		case keyIs(key, "seq"):
			field = 0
		case keyIs(key, "type"):
			field = 1
		case keyIs(key, "time"):
			field = 2
		default:
			if len(data) > 1 {
				data = append(data, ',')
			}
			data = append(data, key...)
			data = append(data, ':')
			data = append(data, value...)
			return nil
		}
		if seen[field] {
			return fmt.Errorf("duplicate %s field", key)
		}
		seen[field] = true
		var err error
		switch field {
		case 0:
			err = json.Unmarshal(value, &out.Seq)
		case 1:
			err = json.Unmarshal(value, &out.Type)
		default:
			err = json.Unmarshal(value, &out.Time)
		}
		if err != nil {
			return fmt.Errorf("field %s: %w", key, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("session: unmarshal event: %w", err)
	}
	out.Data = append(data, '}')
	*e = out
	return nil
}

// checkData validates event data and returns it with the space around it
// trimmed; empty data stands for {}.
func checkData(data []byte) ([]byte, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return []byte("{}"), nil
	}
	if !json.Valid(data) {
		return nil, errors.New("data is not valid JSON")
	}
	return data, checkObject(data)
}

// envelopeFreeTypes caches envelopeFree's answers by type.
var envelopeFreeTypes sync.Map // reflect.Type → bool

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// envelopeFree reports whether every value of type t marshals to a JSON object
// without an envelope member (seq, type, time): a struct, or a pointer to one,
// that marshals itself in no custom way and none of whose members, its embedded
// structs' included, is named like one.
func envelopeFree(t reflect.Type) bool {
	if t == nil {
		return false
	}
	if v, ok := envelopeFreeTypes.Load(t); ok {
		return v.(bool)
	}
	free := structEnvelopeFree(t, 0)
	envelopeFreeTypes.Store(t, free)
	return free
}

func structEnvelopeFree(t reflect.Type, depth int) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || depth > 8 {
		return false
	}
	for _, m := range []reflect.Type{jsonMarshaler, textMarshaler} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return false
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if ft := f.Type; ft.Kind() == reflect.Struct || ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
				if !structEnvelopeFree(ft, depth+1) {
					return false
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, "seq") || strings.EqualFold(name, "type") || strings.EqualFold(name, "time") {
			return false
		}
	}
	return true
}

// checkObject reports whether valid JSON data is an object that does not
// repeat an envelope field.
func checkObject(data []byte) error {
	if len(data) == 0 || data[0] != '{' {
		return errors.New("data is not a JSON object")
	}
	return objectMembers(data, func(key, _ []byte) error {
		if keyIs(key, "seq") || keyIs(key, "type") || keyIs(key, "time") {
			return fmt.Errorf("data repeats the envelope field %s", key)
		}
		return nil
	})
}

// maxTypeLen bounds an event type; types are short identifiers like "tool/call".
const maxTypeLen = 64

// checkType accepts the types above and any other short, printable, ASCII
// identifier without spaces, so a newer writer's events still round-trip.
func checkType(typ string) error {
	if typ == "" {
		return errors.New("event type is empty")
	}
	if len(typ) > maxTypeLen {
		return fmt.Errorf("event type is longer than %d bytes", maxTypeLen)
	}
	for i := 0; i < len(typ); i++ {
		if c := typ[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return fmt.Errorf("event type %q has a character outside printable ASCII", typ)
		}
	}
	return nil
}

// Prepared is an event checked for appending (see [PrepareWrite]), with
// what a store indexes: Type is valid, Time is in UTC with microsecond
// precision, Data is a private copy of a UTF-8 JSON object. Seq is not set.
type Prepared struct {
	Event
	CallID string // for tool/call and tool/result; "" otherwise
}

// prepare validates events for appending and normalizes them: Time in UTC,
// microsecond precision (what every backend keeps), now when zero, within the
// years 1 to 9999 (what JSON can carry); empty Data
// becomes {}. tool/call and tool/result events must carry a non-empty string
// call_id. Seq is ignored: the store assigns it.
func prepare(events []Event, now time.Time) ([]Prepared, error) {
	out := make([]Prepared, len(events))
	for i, e := range events {
		if err := checkType(e.Type); err != nil {
			return nil, fmt.Errorf("session: event %d: %w", i, err)
		}
		data := []byte(e.Data)
		if !e.checked.covers(data) {
			var err error
			if data, err = checkData(e.Data); err != nil {
				return nil, fmt.Errorf("session: event %d (%s): %w", i, e.Type, err)
			}
			if len(bytes.TrimSpace(e.Data)) != 0 {
				data = e.Data // keep the caller's bytes exactly
			}
		}
		if !utf8.Valid(data) {
			return nil, fmt.Errorf("session: event %d (%s): data is not valid UTF-8", i, e.Type)
		}
		p := Prepared{Event: Event{Type: e.Type, Time: e.Time, Data: bytes.Clone(data)}}
		if p.Time.IsZero() {
			p.Time = now
		}
		p.Time = p.Time.UTC().Truncate(time.Microsecond)
		if y := p.Time.Year(); y < 1 || y > 9999 {
			return nil, fmt.Errorf("session: event %d (%s): time %v is outside the years 1 to 9999", i, e.Type, e.Time)
		}
		if e.Type == TypeToolCall || e.Type == TypeToolResult {
			var err error
			if p.CallID, err = callIDOf(data); err != nil {
				return nil, fmt.Errorf("session: event %d (%s): %w", i, e.Type, err)
			}
		}
		out[i] = p
	}
	return out, nil
}

// callIDOf returns the call_id string member of a checked data object.
func callIDOf(data []byte) (string, error) {
	var id string
	found := false
	err := objectMembers(data, func(key, value []byte) error {
		if !keyIs(key, "call_id") {
			return nil
		}
		found = true
		if len(value) >= 2 && value[0] == '"' && bytes.IndexByte(value, '\\') < 0 {
			id = string(value[1 : len(value)-1]) // valid JSON without escapes: the bytes are the string
			return nil
		}
		return json.Unmarshal(value, &id)
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("call_id: %w", err)
	case !found || id == "":
		return "", errors.New("call_id is missing or empty")
	}
	return id, nil
}

// ToolCall is the payload of tool/call: one call of the model, logged before
// it runs. Arguments is the model's raw argument string, verbatim.
type ToolCall struct {
	Turn      int    `json:"turn"`
	Step      int    `json:"step"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// RequestID is the id of the API request that made the call (its
	// X-Request-Id), when one did.
	RequestID string `json:"request_id,omitempty"`
}

// ToolResult is the payload of tool/result: the durable result of a call.
type ToolResult struct {
	CallID string `json:"call_id"`
	Result
}

// Result is a call's durable wire form: what tool/result records, and what
// HTTP and MCP clients receive. [ResultOf] is the one mapping from a runtime
// result to it.
type Result struct {
	Content []registry.ContentBlock `json:"content"` // never nil from ResultOf
	IsError bool                    `json:"is_error"`
	Error   *ErrorInfo              `json:"error,omitempty"`
	Meta    json.RawMessage         `json:"meta,omitempty"`
	// Contexts are the result's additional contexts, which the next step
	// commits as user/context events; ConcludesTurn is the result's request
	// to end the turn. Both live in the log so any replica can continue.
	Contexts      []registry.Context `json:"contexts,omitempty"`
	ConcludesTurn bool               `json:"concludes_turn,omitempty"`
}

// ErrorInfo describes a failed result: a registry result code (e.g.
// "ABORTED"), the kind for CODE_RUN_FAILED, and a message. It is the
// runtime's own type: the log records what the pipeline produced.
type ErrorInfo = runtime.ErrorInfo

// CodeDispatchStart is the payload of tool/code-dispatch-start: an SDK call of
// a run_code program has started. ParentCallID is the call that made it (the
// run_code call, or a sub-call for nested runs); RootCallID the top-level call.
// Number is the call's place in the program's submission order (1, 2, 3…);
// SubCallID is "<parent call id>:code:<Number>".
type CodeDispatchStart struct {
	RootCallID   string          `json:"root_call_id"`
	ParentCallID string          `json:"parent_call_id"`
	SubCallID    string          `json:"sub_call_id"`
	Number       int             `json:"number,omitempty"`
	Name         string          `json:"name"`
	Arguments    json.RawMessage `json:"arguments"`
	// Journal is the piece of the program's journal recorded since the
	// last piece logged (sandbox.Replayer), for a run that may resume.
	Journal string `json:"journal,omitempty"`
}

// CodeDispatch is the payload of tool/code-dispatch: an SDK call settled. It
// repeats its start's fields, so a settlement reads on its own.
type CodeDispatch struct {
	CodeDispatchStart
	IsError   bool                    `json:"is_error"`
	Content   []registry.ContentBlock `json:"content"`
	Error     *ErrorInfo              `json:"error,omitempty"`
	StartedAt time.Time               `json:"started_at"`
	EndedAt   time.Time               `json:"ended_at"`
	// For a run that may resume, what the program received, to replay it:
	// Value, the call's value as JSON (absent for undefined), or Thrown,
	// the ToolCallError it threw; and the call's contexts and conclusion,
	// which the run's result carries.
	Value         json.RawMessage    `json:"value,omitempty"`
	Thrown        *Thrown            `json:"thrown,omitempty"`
	Contexts      []registry.Context `json:"contexts,omitempty"`
	ConcludesTurn bool               `json:"concludes_turn,omitempty"`
}

// Thrown is the ToolCallError a program received for a failed SDK call.
type Thrown struct {
	Tool    string `json:"tool"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// CodeSuspended is the payload of tool/code-suspended. CallID is the run_code
// call; Waiting are its sub-calls whose asks it waits for; Journal is the
// program's journal since the last piece logged.
type CodeSuspended struct {
	CallID  string   `json:"call_id"`
	Waiting []string `json:"waiting"`
	Journal string   `json:"journal,omitempty"`
}

// CodeResumed is the payload of tool/code-resumed: the run_code call resumes
// by replay.
type CodeResumed struct {
	CallID string `json:"call_id"`
}

// UserContext is the payload of user/context: an additional context committed
// as a user message that keeps its source. CallID is the call whose result
// carried it.
type UserContext struct {
	Source  string                  `json:"source"`
	Text    string                  `json:"text"`
	Content []registry.ContentBlock `json:"content,omitempty"`
	CallID  string                  `json:"call_id,omitempty"`
}

// ApprovalAsked is the payload of approval/asked: a call waits for a person.
type ApprovalAsked struct {
	ApprovalID string          `json:"approval_id"`
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Reason     string          `json:"reason"`
}

// ToolNotice is the payload of tool/notice: what a call reported while it
// ran. CallID is the reporting call (a sub-call id for a program's SDK
// call); RootCallID the top-level call it belongs to.
type ToolNotice struct {
	RootCallID string          `json:"root_call_id"`
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	Kind       string          `json:"kind"` // "progress" or "log"
	Progress   float64         `json:"progress,omitempty"`
	Total      float64         `json:"total,omitempty"`
	Message    string          `json:"message,omitempty"`
	Level      string          `json:"level,omitempty"`
	Logger     string          `json:"logger,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// ApprovalAnswered is the payload of approval/answered. Decision is one of
// DecisionAllow, DecisionDeny, DecisionTimeout, DecisionCancelled.
type ApprovalAnswered struct {
	ApprovalID string `json:"approval_id"`
	CallID     string `json:"call_id"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason,omitempty"`
	// RequestID is the id of the API request that answered (its
	// X-Request-Id), when one did.
	RequestID string `json:"request_id,omitempty"`
}
