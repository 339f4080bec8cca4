package session

import (
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
)

// Payload decodes the event's Data as the payload type of its Type, returned
// by pointer: *ToolCall, *ToolResult, *CodeDispatchStart, *CodeDispatch,
// *UserContext, *ApprovalAsked, *ApprovalAnswered, *ToolNotice, *CodeSuspended or
// *CodeResumed. It returns nil for a type
// this package does not know (a newer writer's) and for data that does not
// decode as its type (the store holds only JSON objects, so that takes a
// writer that broke the payload types). Readers fold a log with one type
// switch over it.
func (e Event) Payload() any {
	p, err := e.DecodePayload()
	if err != nil {
		return nil
	}
	return p
}

// DecodePayload is Payload with the decoding error: nil, nil for an unknown
// type.
func (e Event) DecodePayload() (any, error) {
	newPayload, ok := payloadTypes[e.Type]
	if !ok {
		return nil, nil
	}
	p := newPayload()
	if err := e.Decode(p); err != nil {
		return nil, err
	}
	return p, nil
}

// payloadTypes makes the payload of each event type, to decode into.
var payloadTypes = map[string]func() any{
	TypeToolCall:          func() any { return new(ToolCall) },
	TypeToolResult:        func() any { return new(ToolResult) },
	TypeCodeDispatchStart: func() any { return new(CodeDispatchStart) },
	TypeCodeDispatch:      func() any { return new(CodeDispatch) },
	TypeUserContext:       func() any { return new(UserContext) },
	TypeApprovalAsked:     func() any { return new(ApprovalAsked) },
	TypeApprovalAnswered:  func() any { return new(ApprovalAnswered) },
	TypeToolNotice:        func() any { return new(ToolNotice) },
	TypeCodeSuspended:     func() any { return new(CodeSuspended) },
	TypeCodeResumed:       func() any { return new(CodeResumed) },
}

// ResultOf maps a runtime result to its durable wire form. It is the only
// such mapping: the log, the HTTP API and MCP all use it. Content and
// Contexts are never nil.
func ResultOf(r *runtime.Result) Result {
	out := Result{
		Content:       r.Content(),
		IsError:       r.IsError(),
		Error:         r.Error(),
		Contexts:      r.Contexts(),
		ConcludesTurn: r.ConcludesTurn(),
	}
	if out.Content == nil {
		out.Content = []registry.ContentBlock{}
	}
	if out.Contexts == nil {
		out.Contexts = []registry.Context{}
	}
	if m := r.Meta(); !m.IsZero() {
		out.Meta = m.Bytes()
	}
	return out
}

// ToolResultOf is the tool/result payload of a call's result.
func ToolResultOf(callID string, r *runtime.Result) ToolResult {
	return ToolResult{CallID: callID, Result: ResultOf(r)}
}
