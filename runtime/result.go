package runtime

import (
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

// ErrorInfo describes a failed result.
type ErrorInfo struct {
	Code    registry.Code `json:"code"`
	Kind    string        `json:"kind,omitempty"`
	Message string        `json:"message"`
}

// Result is the frozen outcome of one execution. Its fields are unexported
// and every accessor returns a copy, so observers, the log and the caller
// all see the same result and none can change it.
type Result struct {
	callID        string
	name          string
	value         frozen.Value // absent on failure
	content       []registry.ContentBlock
	err           *ErrorInfo
	meta          frozen.Value
	contexts      []registry.Context
	concludesTurn bool
	bodyStarted   bool
}

// CallID is the caller's id for the call.
func (r *Result) CallID() string { return r.callID }

// Name is the tool name the call asked for.
func (r *Result) Name() string { return r.name }

// Value is the canonical value (absent on failure).
func (r *Result) Value() frozen.Value { return r.value }

// Content is the final model-facing content (a copy).
func (r *Result) Content() []registry.ContentBlock { return registry.CloneContent(r.content) }

// Images returns copies of the content's image blocks in order (nil when
// there are none).
func (r *Result) Images() []registry.ContentBlock { return registry.Images(r.content) }

// IsError reports whether the call failed.
func (r *Result) IsError() bool { return r.err != nil }

// Error describes the failure (nil on success). The returned value is a copy.
func (r *Result) Error() *ErrorInfo {
	if r.err == nil {
		return nil
	}
	e := *r.err
	return &e
}

// Code is the failure code ("" on success).
func (r *Result) Code() registry.Code {
	if r.err == nil {
		return ""
	}
	return r.err.Code
}

// Meta is the presentationMeta (absent when none).
func (r *Result) Meta() frozen.Value { return r.meta }

// Contexts are the additional contexts in order: tool-deferred, then
// wrapper-supplied, then post-policy (an independent copy, content included).
func (r *Result) Contexts() []registry.Context { return registry.CloneContexts(r.contexts) }

// ConcludesTurn reports whether the call asked to end the turn.
func (r *Result) ConcludesTurn() bool { return r.concludesTurn }

// BodyStarted reports whether the tool body (or its wrapper chain's
// innermost step) ran.
func (r *Result) BodyStarted() bool { return r.bodyStarted }

// NotStarted returns the result of a call that never entered the pipeline
// (a step cancelled before its turn): ABORTED_BEFORE_DISPATCH with message
// as its text. No stage, finalizer or observer runs for it.
func NotStarted(callID, name, message string) *Result {
	return Failed(callID, name, registry.CodeAbortedBeforeDispatch, message)
}

// Failed returns a failed result made outside the pipeline (a call that
// never entered it, or a suspended run that cannot resume): code, with
// message as its text. No stage, finalizer or observer runs for it.
func Failed(callID, name string, code registry.Code, message string) *Result {
	return &Result{
		callID:  callID,
		name:    name,
		err:     &ErrorInfo{Code: code, Message: message},
		content: []registry.ContentBlock{registry.Text(message)},
	}
}
