package session

import (
	"github.com/codemode/codemode/registry"
)

// The roles of a Message.
const (
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleUser      = "user"
)

// Message is one model-facing message rebuilt from the log: an assistant
// message carrying the model's tool calls, a tool message carrying one call's
// durable result, or a user message carrying an additional context.
type Message struct {
	Role       string                  `json:"role"`
	ToolCalls  []MessageToolCall       `json:"tool_calls,omitempty"`   // assistant
	ToolCallID string                  `json:"tool_call_id,omitempty"` // tool
	Content    []registry.ContentBlock `json:"content,omitempty"`      // tool, user
	IsError    bool                    `json:"is_error,omitempty"`     // tool
	Source     string                  `json:"source,omitempty"`       // user: the context's source
}

// MessageToolCall is one tool call of an assistant message; Arguments is the
// model's raw argument string.
type MessageToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Messages rebuilds the model-facing messages from a session's events, in log
// order:
//
//   - the tool/call events of one model response, identified by (turn, step),
//     become one assistant message with the calls in log (= model) order, at
//     the place of the first; a call joins the open response while its (turn,
//     step) matches and no user/context came between, even if results of the
//     same step were logged in between (calls of a step may overlap);
//   - each tool/result becomes a tool message with its content and is_error;
//   - each user/context becomes a user message with its text, keeping its
//     source.
//
// Nested Code Mode dispatches (tool/code-dispatch-start, tool/code-dispatch)
// and approval events never become messages; nor do event types this package
// does not know. An event whose data does not decode as its type is skipped:
// the store only holds JSON objects, so that takes a writer that broke the
// payload types.
func Messages(events []Event) []Message {
	var b MessageBuilder
	b.Add(events...)
	return b.Rest()
}

// MessageBuilder is Messages over a log read in pages: it holds only the
// messages a later event can still change, from the open step's assistant
// message on (the calls and results of one step), and hands the others out
// as they settle. The zero value is ready; its messages, Settled's and then
// Rest's in order, are Messages' of the same events.
type MessageBuilder struct {
	out                []Message
	open               int // 1 + index in out of the open step's assistant message; 0 for none
	openTurn, openStep int
}

// Add folds events, in log order, into the conversation. It decodes only
// the events that become messages.
func (b *MessageBuilder) Add(events ...Event) {
	for _, e := range events {
		switch e.Type {
		case TypeToolCall, TypeToolResult, TypeUserContext:
		default:
			continue // the nested dispatches, a run's most events, are not decoded
		}
		switch p := e.Payload().(type) {
		case *ToolCall:
			call := MessageToolCall{ID: p.CallID, Name: p.Name, Arguments: p.Arguments}
			if b.open > 0 && p.Turn == b.openTurn && p.Step == b.openStep {
				m := &b.out[b.open-1]
				m.ToolCalls = append(m.ToolCalls, call)
				continue
			}
			b.out = append(b.out, Message{Role: RoleAssistant, ToolCalls: []MessageToolCall{call}})
			b.open, b.openTurn, b.openStep = len(b.out), p.Turn, p.Step
		case *ToolResult:
			b.out = append(b.out, Message{Role: RoleTool, ToolCallID: p.CallID,
				Content: registry.CloneContent(p.Content), IsError: p.IsError})
		case *UserContext:
			content := make([]registry.ContentBlock, 0, 1+len(p.Content))
			if p.Text != "" || len(p.Content) == 0 {
				content = append(content, registry.Text(p.Text))
			}
			content = append(content, p.Content...) // images a Code Mode sub-call deferred
			b.out = append(b.out, Message{Role: RoleUser, Source: p.Source, Content: content})
			b.open = 0 // a context is committed at a step boundary
		}
	}
}

// Settled returns, and lets go of, the messages that no later event can
// change: those before the open step's assistant message (all of them when
// no step is open).
func (b *MessageBuilder) Settled() []Message {
	n := len(b.out)
	if b.open > 0 {
		n = b.open - 1
	}
	if n == 0 {
		return nil
	}
	settled := b.out[:n]
	b.out = append([]Message(nil), b.out[n:]...) // the settled ones are not held
	if b.open > 0 {
		b.open -= n
	}
	return settled
}

// Rest returns the messages Settled has not returned, and starts over.
func (b *MessageBuilder) Rest() []Message {
	out := b.out
	*b = MessageBuilder{}
	return out
}
