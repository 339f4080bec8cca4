package session

import (
	"reflect"
	"testing"
)

// Every payload type of the log marshals without an envelope member, so
// NewEvent need not look for one in its output.
func TestPayloadTypesAreEnvelopeFree(t *testing.T) {
	for _, v := range []any{ToolCall{}, ToolResult{}, &ToolResult{}, CodeDispatchStart{}, CodeDispatch{}, UserContext{},
		ApprovalAsked{}, ApprovalAnswered{}, ToolNotice{}, struct{}{}} {
		if !envelopeFree(reflect.TypeOf(v)) {
			t.Errorf("%T is not envelope-free", v)
		}
	}
	for _, v := range []any{map[string]any{}, []int{}, "s", struct{ Time int }{}} {
		if envelopeFree(reflect.TypeOf(v)) {
			t.Errorf("%T is envelope-free", v)
		}
	}
}
