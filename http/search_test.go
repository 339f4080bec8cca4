package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/catalog"
)

// searchJSON is GET /v1/tools/search's answer as a client reads it.
type searchJSON struct {
	Total   *int `json:"total"` // pointers: a field left out is an error, not a zero
	Matched *int `json:"matched"`
	Tools   []struct {
		Name      string   `json:"name"`
		Summary   string   `json:"summary"`
		Signature string   `json:"signature"`
		Also      []string `json:"also"`
	} `json:"tools"`
}

func (s searchJSON) names() []string {
	out := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		out[i] = t.Name
	}
	return out
}

// searchYAML has a scope that restricts tools away, one whose guard vetoes util_* (withheld),
// and a key that may use only readonly.
var searchYAML = scopesYAML + fmt.Sprintf(`  ro: {parent: default}
guards:
  - {scope: ro, tool: "util_*", reason: owner veto}
api_keys:
  - {sha256: %s, scopes: [default, readonly, agent, other, ro]}
  - {sha256: %s, scopes: [readonly]}
`, digest(keyA), digest(keyB))

// search sends GET /v1/tools/search with params as keyA.
func (ts *testServer) search(params url.Values) (*http.Response, []byte) {
	ts.t.Helper()
	return ts.do(request{method: http.MethodGet, path: "/v1/tools/search?" + params.Encode(), key: keyA})
}

// sdkToolCount is how many tools a scope's programs can reach: the catalog's total.
func (ts *testServer) sdkToolCount(scope string) int {
	ts.t.Helper()
	v, err := ts.app.Registry.View(scope)
	if err != nil {
		ts.t.Fatal(err)
	}
	return len(v.SDKTools())
}

func TestSearchRanking(t *testing.T) {
	ts := newTestServer(t, searchYAML)
	resp, body := ts.search(url.Values{"q": {"add two numbers"}})
	got := decode[searchJSON](t, resp, body, http.StatusOK)
	if got.Total == nil || got.Matched == nil {
		t.Fatalf("total or matched missing: %s", body)
	}
	if want := ts.sdkToolCount("default"); *got.Total != want {
		t.Errorf("total = %d, want the scope's %d tools", *got.Total, want)
	}
	if len(got.Tools) == 0 || got.Tools[0].Name != "math_add" {
		t.Fatalf("add two numbers: %v, want math_add first", got.names())
	}
	if *got.Matched < len(got.Tools) || *got.Matched > *got.Total {
		t.Errorf("matched = %d with %d hits of %d", *got.Matched, len(got.Tools), *got.Total)
	}
	hit := got.Tools[0]
	if hit.Summary != "Adds two numbers and returns their sum." {
		t.Errorf("summary %q", hit.Summary)
	}
	v, _ := ts.app.Registry.View("default")
	if sig, _ := bridge.SDK(v).Signature("math_add"); hit.Signature != sig || !strings.HasPrefix(sig, "math_add(args: {") {
		t.Errorf("signature %q, want the SDK's %q", hit.Signature, sig)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}

	// The same query ranks the same through tools.$search in a program.
	resp, body = ts.do(request{method: http.MethodPost, path: "/v1/run", key: keyA, body: map[string]any{
		"code": `return (await tools.$search("add two numbers")).tools.map(t => t.name)`,
	}})
	res := decode[runResult](t, resp, body, http.StatusOK)
	var inProgram []string
	if err := json.Unmarshal(res.result(t), &inProgram); err != nil || !slices.Equal(inProgram, got.names()) {
		t.Errorf("$search in a program: %s (%v), want %v", res.result(t), err, got.names())
	}
}

func TestSearchLimit(t *testing.T) {
	ts := newTestServer(t, searchYAML)
	for _, tt := range []struct {
		limit string
		want  int // hits at most
	}{
		{"1", 1},
		{"3", 3},
		{"50", catalog.MaxLimit},
		{"1000", catalog.MaxLimit},
		{"", catalog.DefaultLimit},
	} {
		t.Run("limit="+tt.limit, func(t *testing.T) {
			params := url.Values{"q": {"tool"}}
			if tt.limit != "" {
				params.Set("limit", tt.limit)
			}
			resp, body := ts.search(params)
			got := decode[searchJSON](t, resp, body, http.StatusOK)
			if len(got.Tools) > tt.want {
				t.Errorf("%d hits, want at most %d", len(got.Tools), tt.want)
			}
		})
	}
	// An empty query lists every tool up to the limit: the clamp is what bounds it.
	resp, body := ts.search(url.Values{"limit": {"1000"}})
	got := decode[searchJSON](t, resp, body, http.StatusOK)
	if n := ts.sdkToolCount("default"); len(got.Tools) != min(n, catalog.MaxLimit) {
		t.Errorf("limit=1000, empty query: %d hits of %d tools", len(got.Tools), n)
	}
	resp, body = ts.search(url.Values{"limit": {"1"}})
	if got := decode[searchJSON](t, resp, body, http.StatusOK); len(got.Tools) != 1 || *got.Matched != ts.sdkToolCount("default") {
		t.Errorf("limit=1: %v, matched %d", got.names(), *got.Matched)
	}
}

func TestSearchEmptyQueryInNameOrder(t *testing.T) {
	ts := newTestServer(t, searchYAML)
	for _, q := range []string{"", "   "} {
		resp, body := ts.search(url.Values{"q": {q}, "limit": {"50"}})
		got := decode[searchJSON](t, resp, body, http.StatusOK)
		names := got.names()
		if !slices.IsSorted(names) {
			t.Errorf("q=%q: not in name order: %v", q, names)
		}
		if len(names) != ts.sdkToolCount("default") || *got.Matched != len(names) || *got.Total != len(names) {
			t.Errorf("q=%q: %d tools, matched %d, total %d; want all %d", q, len(names), *got.Matched, *got.Total, ts.sdkToolCount("default"))
		}
		if slices.Contains(names, "run_code") {
			t.Errorf("q=%q: run_code is listed: programs cannot call it", q)
		}
	}
	// A group keeps its prefix, still in name order.
	resp, body := ts.search(url.Values{"group": {"util"}})
	got := decode[searchJSON](t, resp, body, http.StatusOK)
	if len(got.Tools) == 0 || !slices.IsSorted(got.names()) {
		t.Fatalf("group util: %v", got.names())
	}
	for _, n := range got.names() {
		if !strings.HasPrefix(n, "util_") {
			t.Errorf("group util lists %s", n)
		}
	}
}

func TestSearchBadRequests(t *testing.T) {
	ts := newTestServer(t, searchYAML)
	for _, tt := range []struct {
		name   string
		params url.Values
		status int
		code   string
		says   string // in the message
	}{
		{"limit 0", url.Values{"q": {"add"}, "limit": {"0"}}, 400, CodeInvalidRequest, "limit"},
		{"limit -1", url.Values{"limit": {"-1"}}, 400, CodeInvalidRequest, "limit"},
		{"limit x", url.Values{"q": {"add"}, "limit": {"x"}}, 400, CodeInvalidRequest, "limit"},
		{"limit 1.5", url.Values{"limit": {"1.5"}}, 400, CodeInvalidRequest, "limit"},
		{"limit overflows", url.Values{"limit": {"99999999999999999999999"}}, 400, CodeInvalidRequest, "limit"},
		{"unknown group", url.Values{"q": {"add"}, "group": {"nope"}}, 400, CodeInvalidRequest, `"nope"`},
		{"unknown scope", url.Values{"q": {"add"}, "scope": {"nope"}}, 404, CodeUnknownScope, `"nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := ts.search(tt.params)
			if msg := wantError(t, resp, body, tt.status, tt.code); !strings.Contains(msg, tt.says) {
				t.Errorf("message %q does not say %s", msg, tt.says)
			}
		})
	}
	// The unknown group's message names the groups there are.
	_, body := ts.search(url.Values{"group": {"nope"}})
	if !strings.Contains(string(body), "math") {
		t.Errorf("unknown group: %s does not list the groups", body)
	}
	// A scope the key may not use is a 404 exactly like one that does not exist.
	resp, body := ts.do(request{method: http.MethodGet, path: "/v1/tools/search?scope=default&q=add", key: keyB})
	wantError(t, resp, body, http.StatusNotFound, CodeUnknownScope)
	resp, body = ts.do(request{method: http.MethodGet, path: "/v1/tools/search?scope=readonly&q=add", key: keyB})
	decode[searchJSON](t, resp, body, http.StatusOK)
	resp, body = ts.get("/v1/tools/search?q=add")
	wantError(t, resp, body, http.StatusUnauthorized, CodeUnauthorized)
}

// TestSearchScopeBounds: a scope's search finds only what its programs can call: never a tool
// its restrictions take away or its guards withhold, whatever the query names.
func TestSearchScopeBounds(t *testing.T) {
	ts := newTestServer(t, searchYAML)
	for _, tt := range []struct {
		scope string
		never []string
	}{
		{"readonly", []string{"kv_set", "files_write", "files_edit"}},
		{"ro", []string{"util_echo", "util_fail", "util_sleep", "util_swatch"}},
	} {
		t.Run(tt.scope, func(t *testing.T) {
			queries := []string{"", "write a file", "edit a file", "set a key", "echo a value", "fail", "sleep", "swatch"}
			queries = append(queries, tt.never...)
			for _, name := range tt.never {
				queries = append(queries, strings.ReplaceAll(name, "_", " "))
			}
			for _, q := range queries {
				resp, body := ts.search(url.Values{"scope": {tt.scope}, "q": {q}, "limit": {"50"}})
				got := decode[searchJSON](t, resp, body, http.StatusOK)
				if *got.Total != ts.sdkToolCount(tt.scope) {
					t.Errorf("q=%q: total %d, want %d", q, *got.Total, ts.sdkToolCount(tt.scope))
				}
				for _, hit := range got.Tools {
					if slices.Contains(tt.never, hit.Name) || slices.ContainsFunc(hit.Also, func(a string) bool { return slices.Contains(tt.never, a) }) {
						t.Errorf("q=%q finds %s (also %v) in %s", q, hit.Name, hit.Also, tt.scope)
					}
				}
			}
			// Control: in default, where they are, the same queries find them.
			for _, name := range tt.never {
				resp, body := ts.search(url.Values{"q": {name}})
				if got := decode[searchJSON](t, resp, body, http.StatusOK); !slices.Contains(got.names(), name) {
					t.Errorf("default: q=%q does not find it: %v", name, got.names())
				}
			}
			// The group of withheld tools is no group at all.
			if tt.scope == "ro" {
				resp, body := ts.search(url.Values{"scope": {"ro"}, "group": {"util"}})
				wantError(t, resp, body, http.StatusBadRequest, CodeInvalidRequest)
			}
		})
	}
	if ts.sdkToolCount("readonly") >= ts.sdkToolCount("default") || ts.sdkToolCount("ro") >= ts.sdkToolCount("default") {
		t.Fatal("the restricted scopes have as many tools as default: the test proves nothing")
	}
}

// FuzzToolSearchQuery sends any query text and limit to GET /v1/tools/search: the server
// never answers 5xx, always answers JSON, a 200 is a search result within the limit, and
// anything else an error with a code and a message.
func FuzzToolSearchQuery(f *testing.F) {
	for _, seed := range []struct{ q, limit string }{
		{"add two numbers", ""},
		{"", "1"},
		{"   ", "1000"},
		{"write a file", "0"},
		{"\x00\xff\ufffd", "x"},
		{strings.Repeat("word ", 400), "-3"},
		{`"quoted" (parens) [brackets] {braces} $search tools.math_add`, "50"},
		{"ünïcödé 数字 🙂", "9223372036854775808"},
		{"a%20b&limit=2", " 3"},
	} {
		f.Add(seed.q, seed.limit)
	}
	a, _ := newTestApp(f, fuzzYAML, nil)
	srv, err := New(a, Options{Logger: discardLogger()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q, limit string) {
		params := url.Values{"q": {q}}
		if limit != "" {
			params.Set("limit", limit)
		}
		target := "/v1/tools/search?" + params.Encode()
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code >= 500 {
			t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("GET %s: %d: not JSON: %s", target, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK {
			var e apiErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("GET %s: %d: error body %s", target, rec.Code, rec.Body)
			}
			return
		}
		var res searchJSON
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || res.Total == nil || res.Matched == nil || res.Tools == nil {
			t.Fatalf("GET %s: result %s (%v)", target, rec.Body, err)
		}
		if len(res.Tools) > catalog.MaxLimit || len(res.Tools) > *res.Matched || *res.Matched > *res.Total {
			t.Fatalf("GET %s: %d hits, matched %d, total %d", target, len(res.Tools), *res.Matched, *res.Total)
		}
	})
}
