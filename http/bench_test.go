package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// benchServer is a Server over a memory store, driven in-process.
func benchServer(b *testing.B) *Server {
	b.Helper()
	a, _ := newTestApp(b, "", nil)
	srv, err := New(a, Options{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}

func serve(b *testing.B, srv *Server, method, path, body string, header map[string]string, want int) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	return rec
}

// BenchmarkRun measures POST /v1/run end to end in-process (a new session
// per run, one SDK call).
func BenchmarkRun(b *testing.B) {
	srv := benchServer(b)
	body := `{"code": "return (await tools.math_add({a: 1, b: 2})).sum"}`
	b.ReportAllocs()
	for b.Loop() {
		serve(b, srv, http.MethodPost, "/v1/run", body, nil, http.StatusOK)
	}
}

// BenchmarkSDKNotModified measures the revalidation path a client polling
// the SDK takes.
func BenchmarkSDKNotModified(b *testing.B) {
	srv := benchServer(b)
	etag := serve(b, srv, http.MethodGet, "/v1/sdk?format=ts", "", nil, http.StatusOK).Header().Get("ETag")
	h := map[string]string{"If-None-Match": etag}
	b.ReportAllocs()
	for b.Loop() {
		serve(b, srv, http.MethodGet, "/v1/sdk?format=ts", "", h, http.StatusNotModified)
	}
}

// BenchmarkAuthenticatedTools measures a cheap authenticated read: key
// lookup, rate limiting and the tools listing.
func BenchmarkAuthenticatedTools(b *testing.B) {
	a, _ := newTestApp(b, keysYAML+"server: {rate_limit: 1000000000, rate_window: 1m}", nil)
	srv, err := New(a, Options{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	h := map[string]string{"Authorization": "Bearer " + keyA}
	b.ReportAllocs()
	for b.Loop() {
		serve(b, srv, http.MethodGet, "/v1/tools", "", h, http.StatusOK)
	}
}

// BenchmarkRunTrivial is BenchmarkRun without the SDK call: the difference of the two is one
// nested call over HTTP (memory store, so without the log's I/O).
func BenchmarkRunTrivial(b *testing.B) {
	srv := benchServer(b)
	body := `{"code": "return 3"}`
	b.ReportAllocs()
	for b.Loop() {
		serve(b, srv, http.MethodPost, "/v1/run", body, nil, http.StatusOK)
	}
}
