package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/registry"
)

// clientNotifier forwards the notices of one tools/call to the MCP client
// that made it: progress as notifications/progress with the request's
// progress token (when it sent one), log lines as notifications/message
// (which the go-sdk filters by the level the client set with
// logging/setLevel).
//
// Progress of the call itself (a re-exported upstream tool called
// directly) is forwarded as the upstream reported it. Progress of the
// sub-calls of a run_code program is forwarded as steps of the run: the
// progress value counts the notices, there is no total, and the message
// names the tool and carries its own progress.
type clientNotifier struct {
	ss     *sdk.ServerSession
	token  any    // the client's progress token; nil: none
	callID string // the tools/call's call id

	mu   sync.Mutex // orders and guards the progress sent
	sent bool       // some progress was sent
	last float64    // the last progress sent
}

func newClientNotifier(ss *sdk.ServerSession, token any, callID string) *clientNotifier {
	return &clientNotifier{ss: ss, token: token, callID: callID}
}

func (n *clientNotifier) Notify(ctx context.Context, no registry.Notice) {
	switch no.Kind {
	case registry.NoticeProgress:
		if n.token == nil {
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		p := &sdk.ProgressNotificationParams{ProgressToken: n.token, Progress: no.Progress, Total: no.Total, Message: no.Message}
		if no.CallID != n.callID {
			p.Progress, p.Total, p.Message = n.last+1, 0, stepMessage(no)
		} else if n.sent && no.Progress <= n.last {
			return // MCP's progress must increase
		}
		n.sent, n.last = true, p.Progress
		_ = n.ss.NotifyProgress(ctx, p)
	case registry.NoticeLog:
		var data any = json.RawMessage(no.Data)
		if len(no.Data) == 0 {
			data = no.Message
		}
		_ = n.ss.Log(ctx, &sdk.LoggingMessageParams{Level: sdk.LoggingLevel(orDefault(no.Level, "info")), Logger: no.Logger, Data: data})
	}
}

// stepMessage describes a sub-call's progress in one line.
func stepMessage(no registry.Notice) string {
	var b strings.Builder
	b.WriteString(no.Tool)
	if no.Message != "" {
		b.WriteString(": ")
		b.WriteString(no.Message)
	}
	if no.Total > 0 {
		fmt.Fprintf(&b, " (%g/%g)", no.Progress, no.Total)
	} else {
		fmt.Fprintf(&b, " (%g)", no.Progress)
	}
	return b.String()
}

// cancelTransport drops the response to a request the client cancelled:
// the spec says the receiver of notifications/cancelled should not respond.
// (The go-sdk answers every request it handled.)
type cancelTransport struct{ sdk.Transport }

func (t *cancelTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelConn{Connection: c, pending: map[jsonrpc.ID]bool{}}, nil
}

type cancelConn struct {
	sdk.Connection
	mu sync.Mutex
	// pending are the client's requests not yet answered, true once
	// cancelled; guarded by mu.
	pending map[jsonrpc.ID]bool
}

func (c *cancelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	r, ok := msg.(*jsonrpc.Request)
	if !ok || err != nil {
		return msg, err
	}
	if r.IsCall() {
		c.mu.Lock()
		c.pending[r.ID] = false
		c.mu.Unlock()
		return msg, nil
	}
	if r.Method == "notifications/cancelled" {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(r.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
				c.mu.Lock()
				if _, ok := c.pending[id]; ok {
					c.pending[id] = true
				}
				c.mu.Unlock()
			}
		}
	}
	return msg, err
}

func (c *cancelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		drop := c.pending[r.ID]
		delete(c.pending, r.ID)
		c.mu.Unlock()
		if drop {
			return nil
		}
	}
	return c.Connection.Write(ctx, msg)
}
