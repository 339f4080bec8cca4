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
	var out []Message
	open := -1 // index in out of the assistant message of the open step
	var openTurn, openStep int
	for _, e := range events {
		switch p := e.Payload().(type) {
		case *ToolCall:
			call := MessageToolCall{ID: p.CallID, Name: p.Name, Arguments: p.Arguments}
			if open >= 0 && p.Turn == openTurn && p.Step == openStep {
				out[open].ToolCalls = append(out[open].ToolCalls, call)
				continue
			}
			out = append(out, Message{Role: RoleAssistant, ToolCalls: []MessageToolCall{call}})
			open, openTurn, openStep = len(out)-1, p.Turn, p.Step
		case *ToolResult:
			out = append(out, Message{Role: RoleTool, ToolCallID: p.CallID,
				Content: registry.CloneContent(p.Content), IsError: p.IsError})
		case *UserContext:
			content := make([]registry.ContentBlock, 0, 1+len(p.Content))
			if p.Text != "" || len(p.Content) == 0 {
				content = append(content, registry.Text(p.Text))
			}
			content = append(content, p.Content...) // images a Code Mode sub-call deferred
			out = append(out, Message{Role: RoleUser, Source: p.Source, Content: content})
			open = -1 // a context is committed at a step boundary
		}
	}
	return out
}
