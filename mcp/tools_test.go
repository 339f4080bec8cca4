package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolNames(t *testing.T) {
	long := strings.Repeat("x", 140)
	tools := func(names ...string) []*sdk.Tool {
		out := make([]*sdk.Tool, 0, len(names))
		for _, n := range names {
			out = append(out, &sdk.Tool{Name: n})
		}
		return out
	}
	tests := []struct {
		name     string
		tools    []string
		reserved []string
		want     map[string]string // upstream name → registry name
	}{
		{"valid names are kept", []string{"echo", "get-sum", "a.b_c"}, nil,
			map[string]string{"echo": "s.echo", "get-sum": "s.get-sum", "a.b_c": "s.a.b_c"}},
		{"other characters become one underscore a run", []string{"my tool", "a/b//c", "café au lait", "  "}, nil,
			map[string]string{"my tool": "s.my_tool", "a/b//c": "s.a_b_c", "café au lait": "s.caf_au_lait", "  ": "s._"}},
		{"the valid name wins a collision", []string{"a/b", "a_b", "a b"}, nil,
			map[string]string{"a_b": "s.a_b", "a b": withSuffix("s.a_b", "a b"), "a/b": withSuffix("s.a_b", "a/b")}},
		{"a long name is cut with a hash", []string{long}, nil, map[string]string{long: withSuffix("s."+long, long)}},
		{"a reserved name is not taken", []string{"resources_list"}, []string{"s.resources_list"},
			map[string]string{"resources_list": withSuffix("s.resources_list", "resources_list")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reserved := map[string]bool{}
			for _, r := range tt.reserved {
				reserved[r] = true
			}
			planned, renamed := planNames("s", tools(tt.tools...), reserved)
			got := map[string]string{}
			for _, p := range planned {
				got[p.tool.Name] = p.name
				if len(p.name) > maxToolName || !validName(p.name) {
					t.Errorf("%q → %q is not a valid MCP tool name", p.tool.Name, p.name)
				}
			}
			for up, want := range tt.want {
				if got[up] != want {
					t.Errorf("%q → %q, want %q", up, got[up], want)
				}
			}
			changed := 0
			for up, name := range got {
				if name != "s."+up {
					changed++
				}
			}
			if len(renamed) != changed {
				t.Errorf("renamed %+v, want %d entries", renamed, changed)
			}
		})
	}
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !validToolRune(r) {
			return false
		}
	}
	return true
}

func FuzzToolName(f *testing.F) {
	for _, s := range []string{"echo", "a b", "ünï/cödé", "", strings.Repeat("y", 300), "\x00\xff"} {
		f.Add(s, "other")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		planned, _ := planNames("srv", []*sdk.Tool{{Name: a}, {Name: b}}, map[string]bool{"srv.resources_list": true})
		seen := map[string]bool{}
		for _, p := range planned {
			if len(p.name) > maxToolName || !validName(p.name) || !utf8.ValidString(p.name) {
				t.Fatalf("%q → %q is not a valid MCP tool name", p.tool.Name, p.name)
			}
			if a != b && seen[p.name] {
				t.Fatalf("%q and %q both map to %q", a, b, p.name)
			}
			if p.name == "srv.resources_list" {
				t.Fatalf("%q took a reserved name", p.tool.Name)
			}
			seen[p.name] = true
		}
	})
}

// TestUpstreamExoticNames registers tools whose names MCP clients would
// refuse, and one the go-sdk excludes, and checks each is reported.
func TestUpstreamExoticNames(t *testing.T) {
	f := newFakeUpstream()
	for _, n := range []string{"look up", "look_up", "señal"} {
		f.srv.AddTool(&sdk.Tool{Name: n, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "called"}}}, nil
		})
	}
	a := newApp(t)
	ups := startFake(t, a, f, 0)
	v, _ := a.Registry.View("default")
	for _, name := range []string{"up.look_up", withSuffix("up.look_up", "look up"), "up.se_al"} {
		if !v.HasSDKTool(name) {
			t.Errorf("%s missing: %v", name, v.Names())
		}
	}
	st := ups.States()[0]
	if len(st.Renamed) != 2 {
		t.Errorf("renamed %+v", st.Renamed)
	}
	// A renamed tool is called by its upstream name, and says so.
	tool, _ := v.Get(withSuffix("up.look_up", "look up"))
	if !strings.Contains(tool.Description(), `"look up"`) {
		t.Errorf("description %q", tool.Description())
	}
	if res := execute(a, withSuffix("up.look_up", "look up"), `{}`); res.IsError() || res.Value().String() != `[{"type":"text","text":"called"}]` {
		t.Errorf("call: %s %+v", res.Value(), res.Error())
	}
}
