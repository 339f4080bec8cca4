package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
)

const scopesYAML = `
scopes:
  readonly: {parent: default, restrict: {deny: [kv_set, files_write, files_edit]}}
  agent:    {parent: default, mode: code}
  other:    {}
`

type toolsJSON struct {
	Scope string `json:"scope"`
	Mode  string `json:"mode"`
	Tools []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		Parameters   json.RawMessage `json:"parameters"`
		OutputSchema json.RawMessage `json:"output_schema"`
	} `json:"tools"`
}

func (tj toolsJSON) names() map[string]bool {
	out := map[string]bool{}
	for _, t := range tj.Tools {
		out[t.Name] = true
	}
	return out
}

func TestTools(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	tests := []struct {
		query      string
		scope      string
		mode       string
		has, lacks []string
	}{
		{"", "default", "both", []string{"run_code", "math_add", "kv_set", "files_write"}, nil},
		{"?scope=default", "default", "both", []string{"run_code", "util_echo"}, nil},
		{"?scope=readonly", "readonly", "both", []string{"run_code", "math_add", "kv_get"}, []string{"kv_set", "files_write", "files_edit"}},
		{"?scope=agent", "agent", "code", []string{"run_code"}, []string{"math_add"}},
	}
	for _, tt := range tests {
		t.Run(tt.scope+tt.query, func(t *testing.T) {
			resp, body := ts.get("/v1/tools" + tt.query)
			got := decode[toolsJSON](t, resp, body, http.StatusOK)
			if got.Scope != tt.scope || got.Mode != tt.mode {
				t.Fatalf("scope %q mode %q, want %q %q", got.Scope, got.Mode, tt.scope, tt.mode)
			}
			names := got.names()
			for _, n := range tt.has {
				if !names[n] {
					t.Errorf("missing %s in %v", n, names)
				}
			}
			for _, n := range tt.lacks {
				if names[n] {
					t.Errorf("%s offered in %s", n, tt.scope)
				}
			}
			for _, tool := range got.Tools {
				if tool.Description == "" || len(tool.Parameters) == 0 || string(tool.Parameters) == "null" {
					t.Errorf("tool %s lacks description or parameters: %+v", tool.Name, tool)
				}
			}
		})
	}
	resp, body := ts.get("/v1/tools?scope=nope")
	if msg := wantError(t, resp, body, http.StatusNotFound, CodeUnknownScope); !strings.Contains(msg, `"nope"`) {
		t.Errorf("message %q does not name the scope", msg)
	}
}

func TestSDKFormats(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	tests := []struct {
		query, contentType, contains string
	}{
		{"", "application/typescript", "math_add"},
		{"?format=ts", "application/typescript", "math_add"},
		{"?format=js", "text/javascript", "math_add"},
		{"?format=prompt", "text/markdown", "math_add"},
		{"?format=ts&scope=readonly", "application/typescript", "kv_get"},
	}
	etags := map[string]string{}
	for _, tt := range tests {
		resp, body := ts.get("/v1/sdk" + tt.query)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", tt.query, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.contentType) {
			t.Errorf("%s: Content-Type %q, want %s", tt.query, ct, tt.contentType)
		}
		if !strings.Contains(string(body), tt.contains) {
			t.Errorf("%s: text lacks %s", tt.query, tt.contains)
		}
		etag := resp.Header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) {
			t.Errorf("%s: ETag %q is not a quoted string", tt.query, etag)
		}
		// The version is the ETag's alone, so two texts differ only where the tools do.
		if version, _, _ := strings.Cut(strings.Trim(etag, `"`), "-"); version == "" || strings.Contains(string(body), version) {
			t.Errorf("%s: the text carries the tool set's version %q", tt.query, version)
		}
		etags[tt.query] = etag
	}
	if etags[""] != etags["?format=ts"] {
		t.Errorf("default format and ts differ: %s %s", etags[""], etags["?format=ts"])
	}
	if etags["?format=ts"] == etags["?format=js"] || etags["?format=js"] == etags["?format=prompt"] {
		t.Errorf("formats share an ETag: %v", etags)
	}
	if etags["?format=ts"] == etags["?format=ts&scope=readonly"] {
		t.Errorf("different tool sets share an ETag: %v", etags)
	}

	resp, body := ts.get("/v1/sdk?format=py")
	wantError(t, resp, body, http.StatusBadRequest, CodeInvalidRequest)
	resp, body = ts.get("/v1/sdk?scope=nope")
	wantError(t, resp, body, http.StatusNotFound, CodeUnknownScope)
}

// TestSDKETag: the ETag changes exactly when the scope's tool set changes,
// and a matching If-None-Match gets a 304 with no body.
func TestSDKETag(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	etag := func(scope string) string {
		t.Helper()
		resp, body := ts.get("/v1/sdk?format=ts&scope=" + scope)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("sdk %s: %d %s", scope, resp.StatusCode, body)
		}
		return resp.Header.Get("ETag")
	}
	conditional := func(scope, ifNoneMatch string) *http.Response {
		t.Helper()
		resp, body := ts.do(request{method: http.MethodGet, path: "/v1/sdk?format=ts&scope=" + scope, header: map[string]string{"If-None-Match": ifNoneMatch}})
		if resp.StatusCode == http.StatusNotModified && len(body) != 0 {
			t.Fatalf("304 with a body: %q", body)
		}
		return resp
	}

	first := etag("default")
	if again := etag("default"); again != first {
		t.Fatalf("ETag not stable: %s then %s", first, again)
	}
	for _, h := range []string{first, "W/" + first, `"other", ` + first, "*"} {
		if resp := conditional("default", h); resp.StatusCode != http.StatusNotModified || resp.Header.Get("ETag") != first {
			t.Errorf("If-None-Match %s: %d ETag %q, want 304 with the ETag", h, resp.StatusCode, resp.Header.Get("ETag"))
		}
	}
	if resp := conditional("default", `"stale"`); resp.StatusCode != http.StatusOK {
		t.Errorf("stale If-None-Match: %d, want 200", resp.StatusCode)
	}

	// An unrelated scope changes: default's tool set does not.
	unregOther := registerTestTool(t, ts, "other", "probe_other")
	if got := etag("default"); got != first {
		t.Errorf("registering in an unrelated scope changed default's ETag: %s → %s", first, got)
	}
	if resp := conditional("default", first); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match after an unrelated change: %d, want 304", resp.StatusCode)
	}
	unregOther()

	// A child scope changes: the parent's tool set does not.
	readonlyBefore := etag("readonly")
	unregChild := registerTestTool(t, ts, "readonly", "probe_child")
	if got := etag("default"); got != first {
		t.Errorf("registering in a child scope changed default's ETag")
	}
	if got := etag("readonly"); got == readonlyBefore {
		t.Errorf("registering in readonly did not change its ETag")
	}
	unregChild()

	// The scope itself changes: a new ETag, the old one no longer matches,
	// and children that inherit the tool change too.
	unreg := registerTestTool(t, ts, "default", "probe_default")
	changed := etag("default")
	if changed == first {
		t.Fatalf("registering in default kept the ETag %s", first)
	}
	if resp := conditional("default", first); resp.StatusCode != http.StatusOK {
		t.Errorf("old ETag after a change: %d, want 200", resp.StatusCode)
	}
	if got := etag("readonly"); got == readonlyBefore {
		t.Errorf("a tool inherited by readonly did not change its ETag")
	}
	// Removing it restores the same tool set, hence the same ETag.
	unreg()
	if got := etag("default"); got != first {
		t.Errorf("after unregistering: ETag %s, want the original %s", got, first)
	}
}

// registerTestTool registers a trivial tool in a scope and returns its
// unregister function.
func registerTestTool(t *testing.T, ts *testServer, scope, name string) func() {
	t.Helper()
	tool, err := registry.Raw(registry.RawDefinition{
		Name:        name,
		Description: "A probe tool for tests.",
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Output:      json.RawMessage(`{"type":"object"}`),
		Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
			return map[string]any{}, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	unreg, err := ts.app.Registry.Register(scope, tool)
	if err != nil {
		t.Fatal(err)
	}
	return unreg
}

// A scope's withheld tools (its guards veto every call of them) are named with the reason in
// /v1/tools and are neither among its tools nor in its SDK; a scope without any has no
// "withheld" member.
func TestToolsNameWithheldTools(t *testing.T) {
	ts := newTestServer(t, "scopes:\n  ro: {parent: default}\nguards:\n  - {scope: ro, tool: 'util_*', reason: owner veto}\n")
	type reply struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Withheld []struct{ Name, Reason string } `json:"withheld"`
	}
	resp, body := ts.do(request{method: http.MethodGet, path: "/v1/tools?scope=ro"})
	got := decode[reply](t, resp, body, http.StatusOK)
	if len(got.Withheld) == 0 || got.Withheld[0].Name != "util_echo" || got.Withheld[0].Reason != "guard: owner veto" {
		t.Fatalf("withheld = %+v", got.Withheld)
	}
	for _, tool := range got.Tools {
		if strings.HasPrefix(tool.Name, "util_") {
			t.Errorf("%s is offered", tool.Name)
		}
	}
	if _, sdk := ts.do(request{method: http.MethodGet, path: "/v1/sdk?scope=ro"}); strings.Contains(string(sdk), "util_echo") {
		t.Error("the SDK types a withheld tool")
	}
	if _, body := ts.do(request{method: http.MethodGet, path: "/v1/tools?scope=default"}); strings.Contains(string(body), `"withheld"`) {
		t.Errorf("a scope without withheld tools lists some: %s", body)
	}
}
