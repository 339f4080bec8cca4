package httpsource_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/httpsource"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
)

// hugeDoc is a document of n operations whose schemas are recursive (a
// node holds nodes), the shape of a generated API description.
func hugeDoc(n int) string {
	var b strings.Builder
	b.WriteString(`{"openapi": "3.1.0", "components": {"schemas": {"Node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}, "parent": {"$ref": "#/components/schemas/Node"}}}}}, "paths": {`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/nodes%d/{id}": {"get": {"operationId": "getNode%d", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}], "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}}}`, i, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// TestTenThousandOperations: a 10,000-operation document with recursive
// schemas registers its first max_operations (5,000 by default), counts
// the rest, and its tools answer.
func TestTenThousandOperations(t *testing.T) {
	if testing.Short() {
		t.Skip("registers 5,000 tools")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name": %q, "children": [{"name": "leaf", "children": []}]}`, r.URL.Path)
	}))
	defer srv.Close()
	doc := testkit.WriteFile(t, "huge.json", hugeDoc(10_000))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a, src := setup(t, fmt.Sprintf("openapi_sources:\n  - {name: huge, file: %q, base_url: %q}\n", doc, srv.URL), app.Options{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := src.States()[0]
	if st.Operations != config.DefaultMaxTools || st.OverLimit != 10_000-config.DefaultMaxTools {
		t.Fatalf("state: %d operations, %d over the limit", st.Operations, st.OverLimit)
	}
	t.Logf("5,000 of 10,000 operations registered; heap %+d MiB", (int64(after.HeapInuse)-int64(before.HeapInuse))>>20)
	got := result(t, run(t, a, `return (await tools["huge.getNode4999"]({id: "x"})).children[0].name`))
	if got != "leaf" {
		t.Fatalf("result %v", got)
	}
}

// TestDocumentBound: a document past max_document_bytes is refused at
// start without being read whole.
func TestDocumentBound(t *testing.T) {
	doc := testkit.WriteFile(t, "big.json", hugeDoc(2000))
	_, err := startOnly(t, fmt.Sprintf("openapi_sources:\n  - {name: api, file: %q, base_url: 'http://127.0.0.1:1', max_document_bytes: 64KiB}\n", doc))
	if err == nil || !strings.Contains(err.Error(), "the document is larger than 64 KiB") {
		t.Fatalf("err = %v", err)
	}
}

// TestURLDocumentRetriedUntilServed: a URL document whose server is not
// up leaves the source failed (and /readyz unready) without failing the
// start; once served, the source loads in the background.
func TestURLDocumentRetriedUntilServed(t *testing.T) {
	up := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-up:
			w.Header().Set("Content-Type", "application/yaml")
			fmt.Fprint(w, "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: /api}]\npaths:\n  /ping:\n    get:\n      operationId: ping\n      responses:\n        '200': {description: ok}\n")
		default:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	src, err := startOnly(t, fmt.Sprintf("openapi_sources:\n  - {name: api, url: %q}\n", srv.URL+"/openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if st := src.States()[0]; st.State != httpsource.StateFailed || !strings.Contains(st.LastError, "503") {
		t.Fatalf("state %+v", st)
	}
	close(up)
	deadline := time.Now().Add(10 * time.Second)
	for src.States()[0].State != httpsource.StateReady {
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %+v", src.States()[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The document's relative server is resolved against its URL.
	if st := src.States()[0]; st.BaseURL != srv.URL+"/api" || st.Operations != 1 {
		t.Fatalf("state %+v", st)
	}
}

// BenchmarkLoadGitHub loads GitHub's REST description as a source: parse,
// convert and register its 1,200 operations (compiling their schemas).
func BenchmarkLoadGitHub(b *testing.B) {
	doc := "testdata/prism/node_modules/@octokit/openapi/generated/api.github.com.json"
	if _, err := os.Stat(doc); err != nil {
		b.Skip(doc + " is missing: run .ci/node-deps")
	}
	cfg, err := config.Parse(strings.NewReader(fmt.Sprintf("openapi_sources:\n  - {name: gh, file: %q, base_url: 'https://api.github.com'}\n", doc)))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var heap uint64
	for b.Loop() {
		reg := registry.New()
		if err := reg.CreateScope(config.DefaultScope, "", registry.ModeNative); err != nil {
			b.Fatal(err)
		}
		src, err := httpsource.Start(context.Background(), reg, cfg.OpenAPISources, httpsource.Options{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		heap = m.HeapInuse
		src.Close()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB-after")
}

// TestScopeToolBound: past limits.max_tools_per_scope the operations are
// refused by the registry and listed as left out, each with the bound named.
func TestScopeToolBound(t *testing.T) {
	_, _, src := petsSetupWith(t, "", "limits: {max_tools_per_scope: 3}\n", app.Options{})
	st := src.States()[0]
	if st.Operations != 3 || len(st.LeftOut) != 9 || !strings.Contains(st.LeftOut[0].Reason, "limits.max_tools_per_scope") ||
		!strings.HasPrefix(st.LeftOut[0].Pointer, "/paths/~1pets") {
		t.Fatalf("state: %d operations, left out %+v", st.Operations, st.LeftOut)
	}
}
