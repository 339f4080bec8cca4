package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
)

// TestUpstreamNotificationBounds: one call's thousands of progress
// notifications reach its caller coalesced, the last one kept, the rest
// counted; an upstream's flood of log messages writes a bounded number of
// lines of the server's log, and one line saying how many were dropped.
func TestUpstreamNotificationBounds(t *testing.T) {
	const sent = 3000
	f := newFakeUpstream()
	f.srv.AddTool(&sdk.Tool{Name: "chatty", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			for i := range sent {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: sent})
				_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Data: i})
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
		})
	a := newApp(t)
	logs := &testkit.Logs{}
	opts := testOptions(logs.Logger())
	opts.dial = f.dial
	ups := startSettled(t, a, []config.MCPServer{{Name: "up", Scope: "default"}}, opts)

	ctx, recorded := recordNotices()
	res := a.Runtime.Execute(ctx, runtime.Request{CallID: "c1", Name: "up.chatty", Arguments: `{}`, Scope: "default"})
	if res.IsError() {
		t.Fatal(res.Error())
	}
	var progress []float64
	for _, n := range recorded() {
		if n.Kind == registry.NoticeProgress {
			progress = append(progress, n.Progress)
		}
	}
	if len(progress) == 0 || len(progress) > sent/10 || progress[len(progress)-1] != sent {
		t.Errorf("%d progress notices forwarded of %d (last %v), want a few, the last kept", len(progress), sent, progress[len(progress)-1:])
	}
	st := ups.States()[0]
	if st.ProgressDropped != int64(sent-len(progress)) {
		t.Errorf("progress_dropped %d, want %d", st.ProgressDropped, sent-len(progress))
	}
	if n := strings.Count(logs.String(), "upstream log message"); n > logBurst+logRate*10 || n == 0 || st.LogsDropped == 0 {
		t.Errorf("%d upstream log lines of %d sent, %d dropped", n, sent, st.LogsDropped)
	}
}
