package httpapi

import (
	"net/http"
	"testing"

	"github.com/codemode/codemode/sdkgen/tokens"
)

// TestSDKTokens checks GET /v1/sdk/tokens: real token counts of the SDK
// texts (the whole text as the tokenizer counts it), per tool, with the
// SDK's version as its ETag and a 304 on a match.
func TestSDKTokens(t *testing.T) {
	ts := newTestServer(t, scopesYAML)
	resp, body := ts.get("/v1/sdk/tokens?scope=readonly")
	got := decode[sdkTokens](t, resp, body, http.StatusOK)
	if got.Scope != "readonly" || got.Encoding != "o200k_base" {
		t.Fatalf("scope %q encoding %q", got.Scope, got.Encoding)
	}
	_, text := ts.get("/v1/sdk?format=ts&scope=readonly")
	if got.TS.Total != tokens.Count(string(text)) || got.TS.Total == len(text)/4 {
		t.Errorf("ts total %d: want the tokenizer's count %d of %d bytes", got.TS.Total, tokens.Count(string(text)), len(text))
	}
	for _, split := range []tokens.Split{got.TS, got.Prompt, got.Native} {
		if split.Tools["math_add"] == 0 || split.Tools["files_write"] != 0 {
			t.Errorf("per tool %v: want math_add counted and no files_write (not in readonly)", split.Tools)
		}
	}
	if got.Prompt.Total <= got.TS.Shared {
		t.Errorf("prompt total %d", got.Prompt.Total)
	}
	etag := resp.Header.Get("ETag")
	if etag != `"`+got.Version+`-tokens"` {
		t.Errorf("ETag %q, version %q", etag, got.Version)
	}
	resp, _ = ts.do(request{method: http.MethodGet, path: "/v1/sdk/tokens?scope=readonly", header: map[string]string{"If-None-Match": etag}})
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", resp.StatusCode)
	}
	resp, body = ts.get("/v1/sdk/tokens?scope=nope")
	wantError(t, resp, body, http.StatusNotFound, CodeUnknownScope)
}

// BenchmarkSDKTokens measures GET /v1/sdk/tokens once its counts are
// memoized for the tool set (the path every poll after the first takes);
// BenchmarkSDKTokensUncached is the counting itself, what one SDK version
// costs once.
func BenchmarkSDKTokens(b *testing.B) {
	srv := benchServer(b)
	serve(b, srv, http.MethodGet, "/v1/sdk/tokens", "", nil, http.StatusOK)
	b.ReportAllocs()
	for b.Loop() {
		serve(b, srv, http.MethodGet, "/v1/sdk/tokens", "", nil, http.StatusOK)
	}
}

func BenchmarkSDKTokensUncached(b *testing.B) {
	srv := benchServer(b)
	ts := serve(b, srv, http.MethodGet, "/v1/sdk?format=ts", "", nil, http.StatusOK).Body.String()
	prompt := serve(b, srv, http.MethodGet, "/v1/sdk?format=prompt", "", nil, http.StatusOK).Body.String()
	b.SetBytes(int64(len(ts) + len(prompt)))
	b.ReportAllocs()
	for b.Loop() {
		tokens.PerTool(ts)
		tokens.PerTool(prompt)
	}
}
