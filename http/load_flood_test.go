package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/mcp"
)

// floodEnv makes the test binary the flooding upstream of TestLoad
// (serveFlood) on its stdio.
const floodEnv = "CODEMODE_HTTP_FLOOD_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(floodEnv) != "" {
		if err := serveFlood(); err != nil {
			fmt.Fprintln(os.Stderr, "flood:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// floodNotices is how many progress notifications and log messages a call
// of flood sends; hugeBytes is the size of huge's answer, over the default
// max_message_bytes (16 MiB).
const (
	floodNotices = 2000
	hugeBytes    = 20 << 20
)

// serveFlood is an MCP server on stdio whose tool flood sends floodNotices
// progress notifications and as many log messages before it answers, and
// whose tool huge answers hugeBytes of text.
func serveFlood() error {
	s := sdk.NewServer(&sdk.Implementation{Name: "flood", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for i := range floodNotices {
			if token := req.Params.GetProgressToken(); token != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(i + 1), Total: floodNotices})
			}
			_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Data: i})
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "flooded"}}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "huge", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", hugeBytes)}}}, nil
	})
	return s.Run(context.Background(), &sdk.StdioTransport{})
}

// startFlood connects serveFlood, in a process of its own, as the
// upstream "flood" of the default scope of ts.
func startFlood(t *testing.T, ts *testServer) *mcp.Upstreams {
	t.Helper()
	ups, err := mcp.StartUpstreams(context.Background(), ts.app, []config.MCPServer{{
		Name: "flood", Scope: config.DefaultScope, Command: []string{os.Args[0]}, Env: map[string]string{floodEnv: "1"},
	}}, mcp.UpstreamOptions{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ups.Close() })
	if err := ups.Settle(context.Background()); err != nil || !ups.Ready() {
		t.Fatalf("the flooding upstream: %v %+v", err, ups.States())
	}
	return ups
}

// flood sends the n-th request of a flooding upstream's client: a run whose
// call floods notifications and succeeds, or one whose call is answered
// over max_message_bytes and fails at once, which the program catches.
func (c *loadClient) flood(n int) {
	if n%2 == 0 {
		c.run(`{"code": "return (await tools['flood.flood']({}))[0].text"}`, false, `"flooded"`)
		return
	}
	c.run(`{"code": "try { await tools['flood.huge']({}); return 'answered' } catch (e) { return e.message.includes('max_message_bytes') }"}`, false, `true`)
}

// stallReads opens, until deadline, requests for the 8 MiB page of
// events of session id (or, with stream, its event stream) and reads
// nothing of their replies, holding each connection for stallFor.
func stallReads(ts *testServer, id string, stream bool, deadline time.Time, stats *loadStats) {
	const stallFor = 5 * time.Second
	req := fmt.Sprintf("GET /v1/sessions/%s/events?limit=10000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", id)
	if stream {
		req = fmt.Sprintf("GET /v1/sessions/%s/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", id)
	}
	for time.Now().Before(deadline) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
		if err != nil {
			stats.errors = append(stats.errors, fmt.Errorf("stalled reader: %w", err))
			return
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		if _, err := conn.Write([]byte(req)); err != nil {
			stats.errors = append(stats.errors, fmt.Errorf("stalled reader: %w", err))
			conn.Close()
			return
		}
		stats.stalls++
		time.Sleep(min(stallFor, time.Until(deadline)))
		conn.Close()
	}
}
