package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/internal/golden"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

func TestToolListFollowsMode(t *testing.T) {
	a := newApp(t)
	demo := []string{"files_edit", "files_list", "files_read", "files_write", "kv_get", "kv_set", "math_add", "util_echo", "util_fail", "util_sleep", "util_swatch"}
	tests := []struct {
		scope string
		want  []string
	}{
		{"plain", demo},
		{"coder", []string{"run_code"}},
		{"default", append(slices.Clone(demo), "run_code")},
	}
	for _, tt := range tests {
		for _, protocol := range []string{legacyProtocol, latestProtocol} {
			t.Run(tt.scope+"/"+protocol, func(t *testing.T) {
				cs := connect(t, newServer(t, a, tt.scope), clientOptions{protocol: protocol})
				got := toolNames(t, cs)
				slices.Sort(got)
				want := slices.Sorted(slices.Values(tt.want))
				if !slices.Equal(got, want) {
					t.Errorf("tools of %s\n got %v\nwant %v", tt.scope, got, want)
				}
			})
		}
	}
}

func TestNewServerUnknownScope(t *testing.T) {
	_, err := NewServer(newApp(t), "nowhere", Options{})
	if !errors.Is(err, app.ErrUnknownScope) {
		t.Fatalf("err = %v, want ErrUnknownScope", err)
	}
}

// TestSchemasAreStrict lists every tool, raw ones with awkward schemas
// included, and checks each schema is what strict clients accept.
func TestSchemasAreStrict(t *testing.T) {
	a := newApp(t)
	registerRaw(t, a, "default", "raw_any", `true`, 42)
	registerRaw(t, a, "default", "raw_list", `{"type":"array","items":true}`, []int{1})
	registerRaw(t, a, "default", "raw_obj", `{"type":"object","properties":{"x":true}}`, map[string]int{"x": 1})
	cs := connect(t, newServer(t, a, "default"), clientOptions{protocol: legacyProtocol})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) < 14 {
		t.Fatalf("listed %d tools, want the demo pack, run_code and 3 raw tools", len(res.Tools))
	}
	for _, tool := range res.Tools {
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		t.Run(tool.Name, func(t *testing.T) {
			checkStrictSchema(t, in)
			if tool.OutputSchema == nil {
				t.Fatal("no output schema")
			}
			checkStrictSchema(t, out)
		})
	}
}

func TestRunCodeDescriptionHasTheSDK(t *testing.T) {
	a := newApp(t)
	cs := connect(t, newServer(t, a, "coder"), clientOptions{protocol: legacyProtocol})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "run_code" {
		t.Fatalf("tools = %v, want run_code only", res.Tools)
	}
	v, err := a.Registry.View("coder")
	if err != nil {
		t.Fatal(err)
	}
	want := string(a.Bridge.Prompt(v))
	desc := res.Tools[0].Description
	if desc != want {
		t.Errorf("run_code description is not the scope's prompt:\n%s", desc)
	}
	for _, s := range []string{"declare const tools", "math_add", "ToolCallError", "util_swatch"} {
		if !strings.Contains(desc, s) {
			t.Errorf("run_code description lacks %q", s)
		}
	}
}

// TestToolListGolden pins the tool lists a client sees for the demo pack.
func TestToolListGolden(t *testing.T) {
	a := newApp(t)
	for _, scope := range []string{"plain", "coder"} {
		t.Run(scope, func(t *testing.T) {
			cs := connect(t, newServer(t, a, scope), clientOptions{protocol: legacyProtocol})
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(res.Tools, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "tools_"+scope+".golden.json"), append(got, '\n'))
		})
	}
}

func TestCallResults(t *testing.T) {
	a := newApp(t)
	registerRaw(t, a, "default", "raw_list", `{"type":"array"}`, []int{1, 2})
	tests := []struct {
		scope, name, args string
		isError           bool
		code              string
		text              string // contained in the text content
		structured        string // the structured content as JSON ("" for none)
	}{
		{"default", "math_add", `{"a":2,"b":3}`, false, "", `"sum": 5`, `{"sum":5}`},
		{"default", "raw_list", `{}`, false, "", "1", `{"value":[1,2]}`},
		{"default", "util_fail", `{"message":"boom"}`, true, "TOOL_FAILED", "boom", ""},
		{"default", "math_add", `{"a":"x"}`, true, "INVALID_ARGS", "math_add", ""},
		{"default", "no_such_tool", `{}`, true, "UNKNOWN_TOOL", "no_such_tool", ""},
		{"coder", "math_add", `{"a":2,"b":3}`, true, "UNKNOWN_TOOL", "run_code", ""},
		{"default", "run_code", `{"code":"return 1 +","description":"syntax error"}`, true, "CODE_RUN_FAILED", "syntax", ""},
		{"default", "run_code", `{"code":"throw new Error('kaput')","description":"throws"}`, true, "CODE_RUN_FAILED", "kaput", ""},
		{"coder", "run_code", `{"code":"console.log('hi'); return (await tools.math_add({a: 1, b: 2})).sum","description":"adds"}`, false, "", "hi\n\n3", `{"logs":["hi"],"result":3}`},
		{"coder", "run_code", `{"code":"try { await tools.util_fail({message: 'no'}) } catch (e) { return [e.name, e.toolName, e.message] }","description":"catches"}`, false, "", "ToolCallError", `{"logs":[],"result":["ToolCallError","util_fail","no"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.scope+"/"+tt.name+"/"+tt.args, func(t *testing.T) {
			cs := connect(t, newServer(t, a, tt.scope), clientOptions{protocol: legacyProtocol})
			res := call(t, cs, tt.name, tt.args)
			if res.IsError != tt.isError || errorCode(res) != tt.code {
				t.Fatalf("isError %v code %q, want %v %q: %s", res.IsError, errorCode(res), tt.isError, tt.code, text(res))
			}
			if !strings.Contains(text(res), tt.text) {
				t.Errorf("content %q lacks %q", text(res), tt.text)
			}
			var structured string
			if res.StructuredContent != nil {
				b, _ := json.Marshal(res.StructuredContent)
				structured = string(b)
			}
			if structured != tt.structured {
				t.Errorf("structuredContent = %s, want %s", structured, tt.structured)
			}
		})
	}
}

func TestImageContent(t *testing.T) {
	a := newApp(t)
	cs := connect(t, newServer(t, a, "default"), clientOptions{protocol: legacyProtocol})
	for _, tc := range []struct{ name, args string }{
		{"util_swatch", `{"color":"#ff0000"}`},
		// In a program the value comes back and the image rides along.
		{"run_code", `{"code":"const s = await tools.util_swatch({color: '#00ff00'}); return s.width","description":"swatch"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, tc.name, tc.args)
			if res.IsError {
				t.Fatalf("failed: %s", text(res))
			}
			var images int
			for _, c := range res.Content {
				if img, ok := c.(*sdk.ImageContent); ok {
					images++
					if img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG")) {
						t.Errorf("image block %s with %d bytes is not the PNG", img.MIMEType, len(img.Data))
					}
				}
			}
			if images != 1 {
				t.Errorf("%d image blocks, want 1: %+v", images, res.Content)
			}
		})
	}
}

// TestSessions checks that calls are logged: one codemode session per MCP
// session, its calls numbered in order.
func TestSessions(t *testing.T) {
	a := newApp(t)
	s := newServer(t, a, "default")
	sessionOf := func(res *sdk.CallToolResult) string { id, _ := res.Meta[metaPrefix+"sessionId"].(string); return id }
	for _, protocol := range []string{legacyProtocol, latestProtocol} {
		t.Run(protocol, func(t *testing.T) {
			cs1 := connect(t, s, clientOptions{protocol: protocol})
			cs2 := connect(t, s, clientOptions{protocol: protocol})
			r1 := call(t, cs1, "kv_set", `{"key":"k","value":1}`)
			r2 := call(t, cs1, "kv_get", `{"key":"k"}`)
			r3 := call(t, cs2, "kv_get", `{"key":"k"}`)
			if sessionOf(r1) == "" || sessionOf(r1) != sessionOf(r2) {
				t.Fatalf("calls of one MCP session ran in sessions %q and %q", sessionOf(r1), sessionOf(r2))
			}
			if sessionOf(r3) == sessionOf(r1) {
				t.Fatalf("two MCP sessions share codemode session %q", sessionOf(r1))
			}
			// kv is per session: the second MCP session does not see the key.
			if !strings.Contains(text(r2), `"found": true`) || !strings.Contains(text(r3), `"found": false`) {
				t.Errorf("kv_get: %s / %s", text(r2), text(r3))
			}
			events, err := a.Store.Events(context.Background(), sessionOf(r1), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range events {
				var p struct {
					CallID string `json:"call_id"`
				}
				_ = json.Unmarshal(e.Data, &p)
				got = append(got, e.Type+" "+p.CallID)
			}
			want := []string{"tool/call mcp-1", "tool/result mcp-1", "tool/call mcp-2", "tool/result mcp-2"}
			if !slices.Equal(got, want) {
				t.Errorf("log\n got %v\nwant %v", got, want)
			}
			sess, err := a.Store.GetSession(context.Background(), sessionOf(r1))
			if err != nil || sess.Scope != "default" {
				t.Errorf("session %+v, %v: want scope default", sess, err)
			}
		})
	}
}

func TestListChanged(t *testing.T) {
	for _, protocol := range []string{legacyProtocol, latestProtocol} {
		t.Run(protocol, func(t *testing.T) {
			a := newApp(t)
			changed := newSignal()
			cs := connect(t, newServer(t, a, "default"), clientOptions{protocol: protocol, listChanged: changed.fire})

			remove := registerRaw(t, a, "default", "late_tool", `{"type":"object"}`, map[string]any{})
			changed.wait(t, "notification after a registration")
			if !slices.Contains(toolNames(t, cs), "late_tool") {
				t.Fatal("late_tool not listed after the notification")
			}
			remove()
			changed.wait(t, "notification after an unregistration")
			if slices.Contains(toolNames(t, cs), "late_tool") {
				t.Fatal("late_tool still listed")
			}
			if err := a.Registry.SetMode("default", "native"); err != nil {
				t.Fatal(err)
			}
			changed.wait(t, "notification after a mode change")
			if slices.Contains(toolNames(t, cs), "run_code") {
				t.Fatal("run_code listed in native mode")
			}
		})
	}
}

// TestListChangedOnlyForTheScope changes another scope, which must leave
// the listed tools exactly as they were (nothing re-added, so nothing to
// notify), then this one, which must notify.
func TestListChangedOnlyForTheScope(t *testing.T) {
	a := newApp(t)
	changed := newSignal()
	s := newServer(t, a, "plain")
	cs := connect(t, s, clientOptions{protocol: legacyProtocol, listChanged: changed.fire})
	listed := func() map[string]*sdk.Tool {
		s.listMu.RLock()
		defer s.listMu.RUnlock()
		out := map[string]*sdk.Tool{}
		for name, e := range s.listed {
			out[name] = e.tool
		}
		return out
	}
	before := listed()
	registerRaw(t, a, "coder", "elsewhere", `{"type":"object"}`, map[string]any{}) // not visible in plain
	after := listed()
	if len(after) != len(before) {
		t.Fatalf("a change in another scope changed the list: %d tools, then %d", len(before), len(after))
	}
	for name, tool := range after {
		if before[name] != tool {
			t.Errorf("%s was listed again after a change in another scope", name)
		}
	}
	registerRaw(t, a, "plain", "here", `{"type":"object"}`, map[string]any{})
	changed.wait(t, "notification")
	names := toolNames(t, cs)
	if !slices.Contains(names, "here") || slices.Contains(names, "elsewhere") {
		t.Fatalf("tools %v", names)
	}
}

func TestCancellation(t *testing.T) {
	tests := []struct {
		name, tool, args, code string
	}{
		{"native call", "test_block", `{}`, "ABORTED"},
		{"program", "run_code", `{"code":"await tools.test_block({})","description":"blocks"}`, "CODE_RUN_FAILED"},
	}
	for _, tt := range tests {
		for _, protocol := range []string{legacyProtocol, latestProtocol} {
			t.Run(tt.name+"/"+protocol, func(t *testing.T) {
				a := newApp(t)
				b := registerBlocker(t, a, "default")
				cs := connect(t, newServer(t, a, "default"), clientOptions{protocol: protocol})
				ctx, cancel := context.WithCancel(context.Background())
				errc := make(chan error, 1)
				go func() {
					_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
					errc <- err
				}()
				<-b.started
				cancel()
				if err := <-b.cancelled; !errors.Is(err, context.Canceled) {
					t.Errorf("the tool saw %v, want context.Canceled", err)
				}
				if err := <-errc; err == nil {
					t.Error("the cancelled call returned no error")
				}
				// The run ended and its result is logged; the session goes on.
				res := call(t, cs, "math_add", `{"a":1,"b":1}`)
				sessionID, _ := res.Meta[metaPrefix+"sessionId"].(string)
				events, err := a.Store.Events(context.Background(), sessionID, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				var first session.ToolResult
				for _, e := range events {
					if e.Type == session.TypeToolResult {
						if err := json.Unmarshal(e.Data, &first); err != nil {
							t.Fatal(err)
						}
						break
					}
				}
				if first.CallID != "mcp-1" || !first.IsError || first.Error == nil || string(first.Error.Code) != tt.code {
					t.Errorf("logged result of the cancelled call: %+v, want code %s", first, tt.code)
				}
			})
		}
	}
}

func TestUnlistedToolAfterRemoval(t *testing.T) {
	a := newApp(t)
	remove := registerRaw(t, a, "default", "short_lived", `{"type":"object"}`, map[string]any{})
	cs := connect(t, newServer(t, a, "default"), clientOptions{protocol: legacyProtocol})
	if res := call(t, cs, "short_lived", `{}`); res.IsError {
		t.Fatalf("call failed: %s", text(res))
	}
	remove()
	res := call(t, cs, "short_lived", `{}`)
	if !res.IsError || errorCode(res) != string(registry.CodeUnknownTool) {
		t.Fatalf("call of a removed tool: isError %v code %q", res.IsError, errorCode(res))
	}
}

// TestServeStdio serves a session over pipes; the client closing its end
// is a clean end of ServeStdio.
func TestServeStdio(t *testing.T) {
	a := newApp(t)
	clientToServer, serverIn := io.Pipe()
	serverOut, serverToClient := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeStdio(context.Background(), a, "coder", clientToServer, serverToClient, Options{Logger: discard})
		serverToClient.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{Logger: discard}).
		Connect(context.Background(), &sdk.IOTransport{Reader: serverOut, Writer: serverIn}, &sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNames(t, cs); !slices.Equal(names, []string{"run_code"}) {
		t.Errorf("tools %v", names)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeStdio = %v, want nil after the client closed", err)
	}
	if err := ServeStdio(context.Background(), a, "nowhere", strings.NewReader(""), io.Discard, Options{}); !errors.Is(err, app.ErrUnknownScope) {
		t.Errorf("unknown scope: %v", err)
	}
}

// TestBindingsEndWithSessions checks that a closed MCP session's binding
// is dropped, while its codemode session stays in the log.
func TestBindingsEndWithSessions(t *testing.T) {
	a := newApp(t)
	s := newServer(t, a, "default")
	cs := connect(t, s, clientOptions{protocol: legacyProtocol})
	res := call(t, cs, "math_add", `{"a":1,"b":2}`)
	bindings := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.bindings)
	}
	if bindings() != 1 {
		t.Fatalf("%d bindings, want 1", bindings())
	}
	cs.Close()
	testkit.Eventually(t, "the binding to be dropped", func() bool { return bindings() == 0 })
	sid, _ := res.Meta[metaPrefix+"sessionId"].(string)
	if _, err := a.Store.GetSession(context.Background(), sid); err != nil {
		t.Errorf("codemode session %q: %v", sid, err)
	}
}

// BenchmarkToolsCall measures one tools/call through the MCP server: the
// transport, the agent step with its log appends, and the mapping.
func BenchmarkToolsCall(b *testing.B) {
	a := newApp(b)
	cs := connect(b, newServer(b, a, "default"), clientOptions{protocol: legacyProtocol})
	params := &sdk.CallToolParams{Name: "math_add", Arguments: json.RawMessage(`{"a":1,"b":2}`)}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
	}
}
