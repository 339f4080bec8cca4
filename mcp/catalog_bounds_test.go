package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
)

// pagedUpstream is a fake upstream of n tools, listed pageSize at a time;
// endless, it answers every page with another cursor (and the first page
// again).
func pagedUpstream(n, pageSize int, endless bool) *fakeUpstream {
	f := &fakeUpstream{srv: sdk.NewServer(&sdk.Implementation{Name: "paged", Version: "1"}, &sdk.ServerOptions{Logger: discard, PageSize: pageSize})}
	for i := range n {
		f.srv.AddTool(&sdk.Tool{Name: fmt.Sprintf("t%03d", i), InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
	}
	if endless {
		f.srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if p, ok := req.GetParams().(*sdk.ListToolsParams); ok {
					p.Cursor = ""
				}
				res, err := next(ctx, method, req)
				if r, ok := res.(*sdk.ListToolsResult); ok {
					r.NextCursor = "more"
				}
				return res, err
			}
		})
	}
	return f
}

// TestUpstreamCatalogBounds: past max_tools the first tools in the
// server's order are registered and the state counts the rest; a listing
// that never ends (always another cursor) stops at max_list_pages or
// max_list_bytes, within the connect timeout, and the upstream is ready.
// Each bound is logged once, not again at every reconnection.
func TestUpstreamCatalogBounds(t *testing.T) {
	for _, c := range []struct {
		name     string
		f        *fakeUpstream
		s        config.MCPServer
		tools    int
		leftOut  int
		cut, log string
	}{
		{"max_tools", pagedUpstream(12, 5, false), config.MCPServer{MaxTools: 7}, 7, 5, "", "more tools than max_tools"},
		{"max_list_pages", pagedUpstream(3, 3, true), config.MCPServer{MaxListPages: 10}, 3, 0, "max_list_pages (10)", "listing cut short"},
		{"max_list_bytes", pagedUpstream(3, 3, true), config.MCPServer{MaxListBytes: 2000}, 3, 0, "max_list_bytes (2000)", "listing cut short"},
		{"endless, defaults", pagedUpstream(3, 3, true), config.MCPServer{}, 3, 0, "max_list_pages (100)", "listing cut short"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newApp(t)
			logs := &testkit.Logs{}
			opts := testOptions(logs.Logger())
			opts.dial = c.f.dial
			s := c.s
			s.Name, s.Scope, s.ConnectTimeout = "up", "default", config.Duration(20*time.Second)
			ups := startSettled(t, a, []config.MCPServer{s}, opts)
			st := ups.States()[0]
			if st.State != StateReady || st.Tools != c.tools || st.ToolsLeftOut != c.leftOut || !strings.HasPrefix(st.ListingCut, c.cut) || (c.cut == "") != (st.ListingCut == "") {
				t.Fatalf("state %+v, want ready, %d tools, %d left out, cut %q", st, c.tools, c.leftOut, c.cut)
			}
			v, _ := a.Registry.View("default")
			for i := range c.tools {
				if name := fmt.Sprintf("up.t%03d", i); !v.HasSDKTool(name) {
					t.Errorf("%s, among the first %d, is not registered", name, c.tools)
				}
			}
			c.f.dropSessions()
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				st := ups.States()[0]
				if st.State == StateReady && st.Restarts == 1 {
					if st.ToolsLeftOut != c.leftOut {
						t.Errorf("after reconnecting: %+v", st)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not reconnected: %+v", st)
				}
			}
			logged := logs.String()
			if n := strings.Count(logged, c.log); n != 1 {
				t.Errorf("%d lines %q, want one:\n%s", n, c.log, logged)
			}
		})
	}
}
