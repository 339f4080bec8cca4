package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/mcp"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sdkgen/tokens"
	"github.com/codemode/codemode/session"
)

// undocumentedRoutes are served but cannot be named by an OpenAPI path.
var undocumentedRoutes = map[string]string{
	"/mcp/*": "a wildcard: the same MCP endpoint as /mcp",
}

// openAPIURL is where the tests' schema compiler finds the document.
const openAPIURL = "https://codemode.test/openapi.json"

// openAPI is the document, decoded, with a schema compiler over it.
type openAPI struct {
	t        *testing.T
	doc      map[string]any
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema // by JSON pointer
}

func loadOpenAPI(t *testing.T) *openAPI {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	if err := c.AddResource(openAPIURL, bytes.NewReader(openAPIDoc)); err != nil {
		t.Fatal(err)
	}
	return &openAPI{t: t, doc: doc, compiler: c, schemas: map[string]*jsonschema.Schema{}}
}

// schema compiles the schema at a JSON pointer of the document.
func (o *openAPI) schema(ptr string) (*jsonschema.Schema, error) {
	if s, ok := o.schemas[ptr]; ok {
		return s, nil
	}
	s, err := o.compiler.Compile(openAPIURL + "#" + ptr)
	if err != nil {
		return nil, err
	}
	o.schemas[ptr] = s
	return s, nil
}

// at returns the value at a JSON pointer, or nil.
func (o *openAPI) at(ptr string) any {
	var v any = o.doc
	if ptr == "" {
		return v
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// deref follows a $ref at ptr (once, as the document only refers to
// components), returning the pointer of the object it names.
func (o *openAPI) deref(ptr string) string {
	if m, ok := o.at(ptr).(map[string]any); ok {
		if r, ok := m["$ref"].(string); ok {
			return strings.TrimPrefix(r, "#")
		}
	}
	return ptr
}

func escape(tok string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operations lists the documented "METHOD /path" pairs.
func (o *openAPI) operations() []string {
	var out []string
	paths, _ := o.doc["paths"].(map[string]any)
	for path, item := range paths {
		for method := range item.(map[string]any) {
			if slices.Contains(httpMethods, method) {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(out)
	return out
}

// newOpenAPIServer serves the whole API: /v1, /mcp and the rest, with
// these upstreams.
func newOpenAPIServer(t *testing.T, yml string, ups Upstreams) *testServer {
	t.Helper()
	a, logs := newTestApp(t, yml, nil)
	mh := mcp.Handler(a, mcp.HandlerOptions{Logger: discardLogger()})
	t.Cleanup(func() { mh.Close() })
	srv, err := New(a, Options{Logger: discardLogger(), MCP: mh, Upstreams: ups})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &testServer{t: t, app: a, srv: srv, url: hs.URL, logs: logs}
}

// TestOpenAPIRoutes: every route the router serves is documented with its
// method, and every documented operation is served: the router knows it
// and a request for it reaches a handler (not the router's 404 or 405), with
// a status the document lists and a body that matches it.
func TestOpenAPIRoutes(t *testing.T) {
	o := loadOpenAPI(t)
	ts := newOpenAPIServer(t, scopesYAML, nil)
	documented := o.operations()

	router, ok := ts.srv.router.(chi.Routes)
	if !ok {
		t.Fatalf("the router is a %T, not a chi router", ts.srv.router)
	}
	served := map[string][]string{} // path → methods
	err := chi.Walk(router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		served[route] = append(served[route], method)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(served) < 10 {
		t.Fatalf("chi.Walk found only %v", served)
	}
	isServed := map[string]bool{}
	for route, methods := range served {
		if why, ok := undocumentedRoutes[route]; ok {
			t.Logf("%s is not documented: %s", route, why)
			continue
		}
		// A handler mounted for every method (Handle) is documented with
		// the methods it answers.
		anyMethod := slices.Contains(methods, http.MethodConnect) && slices.Contains(methods, http.MethodTrace)
		for _, m := range methods {
			op := m + " " + route
			isServed[op] = true
			if !anyMethod && !slices.Contains(documented, op) {
				t.Errorf("%s is served but not documented", op)
			}
		}
		if _, ok := o.doc["paths"].(map[string]any)[route]; anyMethod && !ok {
			t.Errorf("%s (every method) is served but not documented", route)
		}
	}
	for _, op := range documented {
		if !isServed[op] {
			t.Errorf("%s is documented but not served", op)
			continue
		}
		method, path, _ := strings.Cut(op, " ")
		url := strings.NewReplacer("{id}", "nope", "{aid}", "nope").Replace(path)
		req := request{method: method, path: url}
		if method == http.MethodPost {
			req.body = "{}"
		}
		resp, b := ts.do(req)
		var e apiErrorBody
		_ = json.Unmarshal(b, &e)
		if (resp.StatusCode == http.StatusNotFound && e.Error.Code == CodeNotFound) ||
			(resp.StatusCode == http.StatusMethodNotAllowed && e.Error.Code == CodeMethodNotAllowed) {
			t.Errorf("%s: the router answers %d %s", op, resp.StatusCode, b)
			continue
		}
		o.checkReply(t, method, path, resp, b)
	}
}

// checkReply checks a reply against the documented response for its status:
// the status is documented, the content type is one documented for it, its
// required headers are present, and a JSON body matches the schema.
func (o *openAPI) checkReply(t *testing.T, method, path string, resp *http.Response, body []byte) {
	t.Helper()
	op := method + " " + path
	opPtr := "/paths/" + escape(path) + "/" + strings.ToLower(method)
	if o.at(opPtr) == nil {
		t.Errorf("%s is not documented", op)
		return
	}
	status := strconv.Itoa(resp.StatusCode)
	ptr := opPtr + "/responses/" + status
	if o.at(ptr) == nil {
		t.Errorf("%s answered %s, which is not documented; body %s", op, status, body)
		return
	}
	ptr = o.deref(ptr)
	if hs, ok := o.at(ptr + "/headers").(map[string]any); ok {
		for name := range hs {
			hptr := o.deref(ptr + "/headers/" + escape(name))
			if required, _ := o.at(hptr + "/required").(bool); required && resp.Header.Get(name) == "" {
				t.Errorf("%s %s: no %s header", op, status, name)
			}
		}
	}
	content, _ := o.at(ptr + "/content").(map[string]any)
	if len(content) == 0 {
		if len(bytes.TrimSpace(body)) > 0 {
			t.Errorf("%s %s: a body %q where none is documented", op, status, body)
		}
		return
	}
	ct, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		t.Errorf("%s %s: Content-Type %q: %v", op, status, resp.Header.Get("Content-Type"), err)
		return
	}
	if content[ct] == nil {
		t.Errorf("%s %s: Content-Type %s is not documented (%v)", op, status, ct, content)
		return
	}
	if ct != "application/json" {
		return
	}
	s, err := o.schema(ptr + "/content/" + escape(ct) + "/schema")
	if err != nil {
		t.Errorf("%s %s: compile the schema: %v", op, status, err)
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s %s: the body is not JSON: %v", op, status, err)
		return
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s %s: the reply does not match the document: %v\nbody: %s", op, status, err, body)
	}
}

// TestOpenAPIDocument: the document is structurally OpenAPI 3.1: every $ref
// resolves, every operation has an id and responses with descriptions, path
// parameters match the path templates, and every schema compiles (JSON
// Schema 2020-12).
func TestOpenAPIDocument(t *testing.T) {
	o := loadOpenAPI(t)
	if v, _ := o.doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi %q, want 3.1.x", v)
	}
	info, _ := o.doc["info"].(map[string]any)
	if info["title"] == "" || info["version"] == "" || info["title"] == nil || info["version"] == nil {
		t.Errorf("info %v: want title and version", info)
	}

	var refs []string
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				refs = append(refs, ptr+" → "+r)
				if !strings.HasPrefix(r, "#/") || o.at(strings.TrimPrefix(r, "#")) == nil {
					t.Errorf("%s: $ref %q does not resolve", ptr, r)
				}
			}
			for k, e := range x {
				walk(ptr+"/"+escape(k), e)
			}
		case []any:
			for i, e := range x {
				walk(ptr+"/"+strconv.Itoa(i), e)
			}
		}
	}
	walk("", o.doc)
	if len(refs) < 50 {
		t.Errorf("only %d $refs: the walk is broken", len(refs))
	}

	tags := map[string]bool{}
	for _, tag := range o.doc["tags"].([]any) {
		tags[tag.(map[string]any)["name"].(string)] = true
	}
	schemes, _ := o.at("/components/securitySchemes").(map[string]any)
	statusKey := regexp.MustCompile(`^([1-5][0-9][0-9]|[1-5]XX|default)$`)
	pathParam := regexp.MustCompile(`\{([^}]+)\}`)
	ids := map[string]string{}
	ops := o.operations()
	if len(ops) < 15 {
		t.Fatalf("only %d operations: %v", len(ops), ops)
	}
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		if !strings.HasPrefix(path, "/") {
			t.Errorf("path %q does not start with /", path)
		}
		ptr := "/paths/" + escape(path) + "/" + strings.ToLower(method)
		m := o.at(ptr).(map[string]any)
		id, _ := m["operationId"].(string)
		if id == "" || ids[id] != "" {
			t.Errorf("%s: operationId %q missing or also used by %s", op, id, ids[id])
		}
		ids[id] = op
		for _, tag := range m["tags"].([]any) {
			if !tags[tag.(string)] {
				t.Errorf("%s: tag %q is not declared", op, tag)
			}
		}
		if sec, ok := m["security"].([]any); ok {
			for _, req := range sec {
				for name := range req.(map[string]any) {
					if schemes[name] == nil {
						t.Errorf("%s: security scheme %q is not declared", op, name)
					}
				}
			}
		}
		responses, _ := m["responses"].(map[string]any)
		if len(responses) == 0 {
			t.Errorf("%s: no responses", op)
		}
		for status := range responses {
			if !statusKey.MatchString(status) {
				t.Errorf("%s: response key %q", op, status)
			}
			rptr := o.deref(ptr + "/responses/" + status)
			if d, _ := o.at(rptr + "/description").(string); d == "" {
				t.Errorf("%s %s: no description", op, status)
			}
		}
		inPath := map[string]bool{}
		for i := range m["parameters"].([]any) {
			pm := o.at(o.deref(ptr + "/parameters/" + strconv.Itoa(i))).(map[string]any)
			switch pm["in"] {
			case "path":
				if pm["required"] != true {
					t.Errorf("%s: path parameter %v is not required", op, pm["name"])
				}
				inPath[pm["name"].(string)] = true
			case "query", "header", "cookie":
			default:
				t.Errorf("%s: parameter %v in %v", op, pm["name"], pm["in"])
			}
			if pm["schema"] == nil {
				t.Errorf("%s: parameter %v has no schema", op, pm["name"])
			}
		}
		for _, sub := range pathParam.FindAllStringSubmatch(path, -1) {
			if !inPath[sub[1]] {
				t.Errorf("%s: path parameter {%s} is not declared", op, sub[1])
			}
			delete(inPath, sub[1])
		}
		for name := range inPath {
			t.Errorf("%s: path parameter %q is not in the path", op, name)
		}
	}

	// Every schema compiles: the named ones, and each one of a body, a
	// parameter or a header.
	n := 0
	for name := range o.at("/components/schemas").(map[string]any) {
		if _, err := o.schema("/components/schemas/" + escape(name)); err != nil {
			t.Errorf("schema %s: %v", name, err)
		}
		n++
	}
	var compileAll func(ptr string, v any)
	compileAll = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["schema"]; ok && !strings.HasPrefix(ptr, "/components/schemas") {
				if _, err := o.schema(ptr + "/schema"); err != nil {
					t.Errorf("%s/schema: %v", ptr, err)
				}
				n++
			}
			for k, e := range x {
				if k != "schema" {
					compileAll(ptr+"/"+escape(k), e)
				}
			}
		case []any:
			for i, e := range x {
				compileAll(ptr+"/"+strconv.Itoa(i), e)
			}
		}
	}
	compileAll("", o.doc)
	if n < 100 {
		t.Errorf("compiled only %d schemas", n)
	}
}

// TestOpenAPIExamples: every example in the document matches its schema:
// a body's or parameter's example (and examples' values), and a schema's
// examples.
func TestOpenAPIExamples(t *testing.T) {
	o := loadOpenAPI(t)
	n := 0
	check := func(where, schemaPtr string, example any) {
		n++
		s, err := o.schema(schemaPtr)
		if err != nil {
			t.Errorf("%s: compile %s: %v", where, schemaPtr, err)
			return
		}
		if err := s.Validate(example); err != nil {
			t.Errorf("%s: the example does not match the schema: %v", where, err)
		}
	}
	var walk func(ptr string, v any, inSchema bool)
	walk = func(ptr string, v any, inSchema bool) {
		switch x := v.(type) {
		case map[string]any:
			if inSchema {
				if exs, ok := x["examples"].([]any); ok {
					for i, ex := range exs {
						check(fmt.Sprintf("%s/examples/%d", ptr, i), ptr, ex)
					}
				}
				if ex, ok := x["example"]; ok {
					check(ptr+"/example", ptr, ex)
				}
			} else if _, ok := x["schema"]; ok {
				if ex, ok := x["example"]; ok {
					check(ptr+"/example", ptr+"/schema", ex)
				}
				if exs, ok := x["examples"].(map[string]any); ok {
					for name := range exs {
						check(ptr+"/examples/"+name, ptr+"/schema", o.at(o.deref(ptr+"/examples/"+escape(name))+"/value"))
					}
				}
			}
			for k, e := range x {
				if inSchema && slices.Contains([]string{"example", "examples", "const", "enum", "default"}, k) {
					continue // values, not schemas
				}
				walk(ptr+"/"+escape(k), e, inSchema || k == "schema")
			}
		case []any:
			for i, e := range x {
				walk(ptr+"/"+strconv.Itoa(i), e, inSchema)
			}
		}
	}
	for name, s := range o.at("/components/schemas").(map[string]any) {
		walk("/components/schemas/"+escape(name), s, true)
	}
	for k, v := range o.doc {
		if k != "components" {
			walk("/"+escape(k), v, false)
		}
	}
	for k, v := range o.at("/components").(map[string]any) {
		if k != "schemas" {
			walk("/components/"+escape(k), v, false)
		}
	}
	if n < 20 {
		t.Errorf("checked only %d examples", n)
	}
}

// TestOpenAPIErrorCodes: the documented error codes are exactly the Code
// constants of errors.go.
func TestOpenAPIErrorCodes(t *testing.T) {
	o := loadOpenAPI(t)
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Code") || len(vs.Values) != 1 {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			codes = append(codes, s)
		}
		return true
	})
	var documented []string
	for _, c := range o.at("/components/schemas/ErrorCode/enum").([]any) {
		documented = append(documented, c.(string))
	}
	sort.Strings(codes)
	sort.Strings(documented)
	if len(codes) < 10 || !slices.Equal(codes, documented) {
		t.Errorf("documented error codes %v,\nerrors.go has %v", documented, codes)
	}
}

// TestOpenAPIReplies: real replies of the main routes match the documented
// responses.
func TestOpenAPIReplies(t *testing.T) {
	o := loadOpenAPI(t)
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	retry := since.Add(time.Minute)
	ts := newOpenAPIServer(t, approvalYAML, fakeUpstreams{
		{Name: "notes", Scope: "default", Transport: "stdio", State: mcp.StateReady, Since: since, Tools: 3, Restarts: 1,
			Server:  &mcp.ServerInfo{Name: "notes", Version: "1.0", ProtocolVersion: "2025-06-18", Capabilities: []string{"tools"}, Instructions: "be brief"},
			Renamed: []mcp.RenamedTool{{Tool: "read-note", As: "read_note", Why: "not a JavaScript identifier"}}},
		{Name: "remote", Scope: "default", Transport: "streamable-http", State: mcp.StateFailed, Since: since, LastError: "connect: connection refused",
			Attempts: 4, NextRetry: &retry, Rejected: []mcp.RejectedTool{{Tool: "long_job", Reason: "requires task-augmented calls"}}},
	})
	check := func(method, path string, resp *http.Response, body []byte) {
		t.Helper()
		o.checkReply(t, method, path, resp, body)
	}

	resp, b := ts.post("/v1/run", map[string]any{"code": `console.log("hi"); const a = await tools.math_add({a: 2, b: 3}); await tools.util_swatch({color: "#ff0000"}); return a`})
	run := decode[runResult](t, resp, b, http.StatusOK)
	run.result(t)
	if len(run.Calls) != 2 {
		t.Fatalf("run: calls %s", b)
	}
	check("POST", "/v1/run", resp, b)
	resp, b = ts.post("/v1/run", map[string]any{"code": "return (", "session_id": run.SessionID})
	if failed := decode[runResult](t, resp, b, http.StatusOK); !failed.IsError || failed.Error == nil {
		t.Fatalf("run error: %s", b)
	}
	check("POST", "/v1/run", resp, b)
	resp, b = ts.post("/v1/run", map[string]any{"code": `await tools.util_fail({message: "boom"})`})
	check("POST", "/v1/run", resp, b)
	resp, b = ts.post("/v1/run", map[string]any{})
	wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
	check("POST", "/v1/run", resp, b)
	resp, b = ts.post("/v1/run", map[string]any{"code": "return 1", "scope": "nope"})
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownScope)
	check("POST", "/v1/run", resp, b)
	resp, b = ts.do(request{method: http.MethodPost, path: "/v1/run", body: "{}", header: map[string]string{"Content-Type": "text/plain"}})
	wantError(t, resp, b, http.StatusUnsupportedMediaType, CodeUnsupportedMediaType)
	check("POST", "/v1/run", resp, b)

	resp, b = ts.post("/v1/sessions", map[string]any{"scope": "readonly"})
	sess := decode[sessionJSON](t, resp, b, http.StatusCreated)
	check("POST", "/v1/sessions", resp, b)
	resp, b = ts.get("/v1/sessions/" + sess.ID)
	check("GET", "/v1/sessions/{id}", resp, b)
	resp, b = ts.get("/v1/sessions/nope")
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownSession)
	check("GET", "/v1/sessions/{id}", resp, b)

	// The session list, a page at a time.
	type sessionPage struct {
		Sessions   []sessionJSON `json:"sessions"`
		NextCursor string        `json:"next_cursor"`
	}
	resp, b = ts.get("/v1/sessions")
	if all := decode[sessionPage](t, resp, b, http.StatusOK); len(all.Sessions) < 3 || all.NextCursor != "" {
		t.Fatalf("sessions %s", b)
	}
	check("GET", "/v1/sessions", resp, b)
	resp, b = ts.get("/v1/sessions?limit=1")
	first := decode[sessionPage](t, resp, b, http.StatusOK)
	if len(first.Sessions) != 1 || first.NextCursor == "" {
		t.Fatalf("sessions?limit=1 %s", b)
	}
	check("GET", "/v1/sessions", resp, b)
	resp, b = ts.get("/v1/sessions?limit=1&cursor=" + url.QueryEscape(first.NextCursor))
	if next := decode[sessionPage](t, resp, b, http.StatusOK); len(next.Sessions) != 1 || next.Sessions[0].ID == first.Sessions[0].ID {
		t.Fatalf("the second page %s after %s", b, first.Sessions[0].ID)
	}
	check("GET", "/v1/sessions", resp, b)
	for _, q := range []string{"cursor=nope", "limit=0"} {
		resp, b = ts.get("/v1/sessions?" + q)
		wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
		check("GET", "/v1/sessions", resp, b)
	}

	resp, b = ts.post("/v1/sessions/"+sess.ID+"/steps", map[string]any{"tool_calls": []map[string]any{
		{"id": "c1", "name": "math_add", "arguments": `{"a": 1, "b": 2}`},
		{"id": "c2", "name": "math_add", "arguments": `{"a": "x"}`},
		{"id": "c3", "name": "run_code", "arguments": map[string]any{"code": "return await tools.util_echo({value: [1]})"}},
	}})
	decode[stepResponseJSON](t, resp, b, http.StatusOK)
	check("POST", "/v1/sessions/{id}/steps", resp, b)

	for _, id := range []string{run.SessionID, sess.ID} {
		resp, b = ts.get("/v1/sessions/" + id + "/events")
		if ev := decode[struct{ Events []eventJSON }](t, resp, b, http.StatusOK); len(ev.Events) < 4 {
			t.Fatalf("events %s", b)
		}
		check("GET", "/v1/sessions/{id}/events", resp, b)
		resp, b = ts.get("/v1/sessions/" + id + "/events?after=1&limit=2")
		page := decode[struct {
			Events    []eventJSON `json:"events"`
			More      bool        `json:"more"`
			NextAfter int64       `json:"next_after"`
		}](t, resp, b, http.StatusOK)
		if len(page.Events) != 2 || !page.More || page.NextAfter != page.Events[1].Seq {
			t.Errorf("events?after=1&limit=2 %s: want 2 events and next_after the seq of the last", b)
		}
		check("GET", "/v1/sessions/{id}/events", resp, b)
		resp, b = ts.get("/v1/sessions/" + id + "/messages")
		check("GET", "/v1/sessions/{id}/messages", resp, b)
	}
	// The live form: each event's data is an Event.
	if o.at("/paths/~1v1~1sessions~1{id}~1events/get/responses/200/content/text~1event-stream") == nil {
		t.Error("the event stream is not documented")
	}
	eventSchema, err := o.schema("/components/schemas/Event")
	if err != nil {
		t.Fatal(err)
	}
	stream := ts.openStream("/v1/sessions/"+run.SessionID+"/events", nil)
	for _, ev := range stream.until("tool/result") {
		var v any
		if err := json.Unmarshal(ev.data, &v); err != nil {
			t.Fatalf("stream event %s: %v", ev.data, err)
		}
		if err := eventSchema.Validate(v); err != nil {
			t.Errorf("stream event %s does not match Event: %v", ev.data, err)
		}
	}
	stream.close()
	resp, b = ts.get("/v1/sessions/" + sess.ID + "/events?limit=0")
	wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
	check("GET", "/v1/sessions/{id}/events", resp, b)

	// An approval: asked, listed, answered.
	askID := ts.newSession("", "")
	done := ts.sendAsync(request{method: http.MethodPost, path: "/v1/run",
		body: map[string]any{"session_id": askID, "code": `return await tools.files_write({path: "a.txt", content: "hi"})`}})
	var pending []pendingJSON
	testkit.Eventually(t, "a pending approval", func() bool {
		resp, b = ts.get("/v1/sessions/" + askID + "/approvals")
		pending = approvalsOf(t, b)
		return len(pending) > 0
	})
	check("GET", "/v1/sessions/{id}/approvals", resp, b)
	resp, b = ts.post("/v1/sessions/"+askID+"/approvals/"+pending[0].ID, map[string]any{"decision": "deny", "reason": "not today"})
	check("POST", "/v1/sessions/{id}/approvals/{aid}", resp, b)
	resp, b = ts.post("/v1/sessions/"+askID+"/approvals/"+pending[0].ID, map[string]any{"decision": "allow"})
	wantError(t, resp, b, http.StatusConflict, CodeApprovalAnswered)
	check("POST", "/v1/sessions/{id}/approvals/{aid}", resp, b)
	select {
	case out := <-done:
		if out.err != nil {
			t.Fatal(out.err)
		}
		check("POST", "/v1/run", out.resp, out.body)
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end after the answer")
	}
	resp, b = ts.get("/v1/sessions/" + askID + "/events")
	check("GET", "/v1/sessions/{id}/events", resp, b)

	// Deleting a session, and a run whose session is not kept.
	resp, b = ts.do(request{method: http.MethodDelete, path: "/v1/sessions/" + askID})
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE a session: %d %s", resp.StatusCode, b)
	}
	check("DELETE", "/v1/sessions/{id}", resp, b)
	resp, b = ts.do(request{method: http.MethodDelete, path: "/v1/sessions/" + askID})
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownSession)
	check("DELETE", "/v1/sessions/{id}", resp, b)
	resp, b = ts.post("/v1/run", map[string]any{"code": "return 1", "ephemeral": true})
	if eph := decode[struct {
		SessionID      string `json:"session_id"`
		SessionDeleted bool   `json:"session_deleted"`
	}](t, resp, b, http.StatusOK); !eph.SessionDeleted || eph.SessionID == "" {
		t.Errorf("an ephemeral run: %s", b)
	}
	check("POST", "/v1/run", resp, b)
	resp, b = ts.post("/v1/run", map[string]any{"code": "return 1", "ephemeral": true, "session_id": sess.ID})
	wantError(t, resp, b, http.StatusBadRequest, CodeInvalidRequest)
	check("POST", "/v1/run", resp, b)

	// Readiness: the failed upstream makes the server not ready.
	resp, b = ts.get("/readyz")
	ready := decode[struct {
		Status string           `json:"status"`
		Checks map[string]Check `json:"checks"`
	}](t, resp, b, http.StatusServiceUnavailable)
	if ready.Status != "not_ready" || ready.Checks["upstream:remote"].OK || !ready.Checks["upstream:notes"].OK || !ready.Checks["store"].OK {
		t.Errorf("readyz with a failed upstream: %s", b)
	}
	check("GET", "/readyz", resp, b)

	for _, path := range []string{"/v1/tools", "/v1/tools?scope=agent", "/v1/scopes", "/v1/upstreams", "/healthz", "/openapi.json"} {
		resp, b = ts.get(path)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		check("GET", strings.Split(path, "?")[0], resp, b)
	}
	resp, b = ts.get("/v1/tools?scope=nope")
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownScope)
	check("GET", "/v1/tools", resp, b)

	for _, format := range []string{"ts", "js", "prompt"} {
		resp, b = ts.get("/v1/sdk?format=" + format)
		check("GET", "/v1/sdk", resp, b)
		resp, b = ts.do(request{method: http.MethodGet, path: "/v1/sdk?format=" + format, header: map[string]string{"If-None-Match": resp.Header.Get("ETag")}})
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("sdk with its ETag: %d", resp.StatusCode)
		}
		check("GET", "/v1/sdk", resp, b)
	}
	resp, b = ts.get("/v1/sdk?format=python")
	check("GET", "/v1/sdk", resp, b)

	resp, b = ts.get("/v1/sdk/tokens?scope=agent")
	if counts := decode[sdkTokens](t, resp, b, http.StatusOK); counts.Scope != "agent" || counts.TS.Total == 0 {
		t.Errorf("sdk tokens %s", b)
	}
	check("GET", "/v1/sdk/tokens", resp, b)
	resp, b = ts.do(request{method: http.MethodGet, path: "/v1/sdk/tokens?scope=agent", header: map[string]string{"If-None-Match": resp.Header.Get("ETag")}})
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("sdk tokens with their ETag: %d", resp.StatusCode)
	}
	check("GET", "/v1/sdk/tokens", resp, b)
	resp, b = ts.get("/v1/sdk/tokens?scope=nope")
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownScope)
	check("GET", "/v1/sdk/tokens", resp, b)
}

// approvalsOf reads a list of pending approvals, {"approvals": [...]}.
func approvalsOf(t *testing.T, b []byte) []pendingJSON {
	t.Helper()
	var obj struct{ Approvals []pendingJSON }
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatalf("approvals %s: %v", b, err)
	}
	return obj.Approvals
}

// TestOpenAPIServed: GET /openapi.json serves the document with an ETag,
// and a 304 for a matching If-None-Match.
func TestOpenAPIServed(t *testing.T) {
	ts := newTestServer(t, "")
	resp, b := ts.get("/openapi.json")
	if resp.StatusCode != http.StatusOK || !bytes.Equal(b, openAPIDoc) {
		t.Fatalf("GET /openapi.json: %d, %d bytes", resp.StatusCode, len(b))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	resp, b = ts.do(request{method: http.MethodGet, path: "/openapi.json", header: map[string]string{"If-None-Match": etag}})
	if resp.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Errorf("with If-None-Match: %d %q", resp.StatusCode, b)
	}
}

// TestOpenAPIFields: the documented members of each body are exactly the
// JSON fields of the Go type that encodes or decodes it, and, for replies,
// the required ones are exactly those always sent (no omitempty).
func TestOpenAPIFields(t *testing.T) {
	o := loadOpenAPI(t)
	// Members of a type that a reply never carries.
	neverSent := map[string]string{"StepResult.contexts": "a step lists its contexts once, beside its results"}
	tests := []struct {
		schema string
		v      any
		reply  bool
	}{
		{"RunRequest", runRequest{}, false},
		{"RunResult", app.RunResult{}, true},
		{"SubCall", session.CodeDispatch{}, true},
		{"ResultError", runtime.ErrorInfo{}, true},
		{"ContentBlock", registry.ContentBlock{}, true},
		{"Resource", registry.Resource{}, true},
		{"Context", registry.Context{}, true},
		{"Session", sessionJSON{}, true},
		{"StepRequest", stepRequest{}, false},
		{"StepCall", stepCall{}, false},
		{"StepResult", stepResult{}, true},
		{"StepReply", stepResponse{}, true},
		{"Message", session.Message{}, true},
		{"MessageToolCall", session.MessageToolCall{}, true},
		{"PendingApproval", agent.PendingApproval{}, true},
		{"AnswerRequest", answerRequest{}, false},
		{"Tool", registry.ModelSchema{}, true},
		{"Scope", scopeJSON{}, true},
		{"Upstream", mcp.UpstreamState{}, true},
		{"UpstreamServerInfo", mcp.ServerInfo{}, true},
		{"ToolCallEvent", session.ToolCall{}, true},
		{"ToolResultEvent", session.ToolResult{}, true},
		{"CodeDispatchStartEvent", session.CodeDispatchStart{}, true},
		{"UserContextEvent", session.UserContext{}, true},
		{"ApprovalAskedEvent", session.ApprovalAsked{}, true},
		{"ApprovalAnsweredEvent", session.ApprovalAnswered{}, true},
		{"ToolNoticeEvent", session.ToolNotice{}, true},
		{"Error", apiError{}, true},
		{"ReadinessCheck", Check{}, true},
		{"SDKTokens", sdkTokens{}, true},
		{"TokenSplit", tokens.Split{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			ptr := "/components/schemas/" + tt.schema
			props, _ := o.at(ptr + "/properties").(map[string]any)
			if props == nil {
				t.Fatalf("%s has no properties", tt.schema)
			}
			required := map[string]bool{}
			if req, ok := o.at(ptr + "/required").([]any); ok {
				for _, r := range req {
					required[r.(string)] = true
				}
			}
			fields := jsonFields(reflect.TypeOf(tt.v))
			for name, omitempty := range fields {
				key := tt.schema + "." + name
				if _, ok := neverSent[key]; ok {
					continue
				}
				if props[name] == nil {
					t.Errorf("%s: the Go field is not documented", key)
					continue
				}
				if tt.reply && required[name] == omitempty {
					t.Errorf("%s: required is %v, but the field is always sent: %v", key, required[name], !omitempty)
				}
			}
			for name := range props {
				if _, inGo := fields[name]; !inGo {
					t.Errorf("%s.%s is documented but the Go type has no such field", tt.schema, name)
				}
			}
		})
	}
}

// TestOpenAPIPageLimits: the documented default and maximum page sizes are
// the handlers'.
func TestOpenAPIPageLimits(t *testing.T) {
	o := loadOpenAPI(t)
	tests := []struct {
		op       string // a pointer to the operation
		def, max int
	}{
		{"/paths/~1v1~1sessions~1{id}~1events/get", defaultEventsPage, maxEventsPage},
		{"/paths/~1v1~1sessions/get", session.DefaultPageSize, session.MaxPageSize},
	}
	for _, tt := range tests {
		var limit map[string]any
		params, _ := o.at(tt.op + "/parameters").([]any)
		for i := range params {
			if pm := o.at(o.deref(tt.op + "/parameters/" + strconv.Itoa(i))).(map[string]any); pm["name"] == "limit" {
				limit, _ = pm["schema"].(map[string]any)
			}
		}
		if limit == nil {
			t.Errorf("%s: the limit parameter is not documented", tt.op)
			continue
		}
		if limit["default"] != float64(tt.def) || limit["maximum"] != float64(tt.max) {
			t.Errorf("%s: limit %v, want default %d and maximum %d", tt.op, limit, tt.def, tt.max)
		}
	}
}

// jsonFields maps the JSON member names of a struct type (embedded structs
// flattened) to whether they are omitted when empty.
func jsonFields(rt reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range rt.NumField() {
		f := rt.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			for k, v := range jsonFields(ft) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = slices.Contains(strings.Split(opts, ","), "omitempty")
	}
	return out
}

// TestOpenAPIErrorReplies: the replies of the guards in front of the
// handlers (keys, body limit, rate limit, origin) and of /mcp match the
// document too.
func TestOpenAPIErrorReplies(t *testing.T) {
	o := loadOpenAPI(t)
	ts := newOpenAPIServer(t, keysYAML+"server: {max_body_bytes: 1KiB, rate_limit: 4, rate_window: 1m}", nil)

	resp, b := ts.get("/v1/scopes")
	wantError(t, resp, b, http.StatusUnauthorized, CodeUnauthorized)
	o.checkReply(t, "GET", "/v1/scopes", resp, b)
	var e struct {
		Error struct {
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil || e.Error.RequestID == "" || e.Error.RequestID != resp.Header.Get("X-Request-Id") {
		t.Errorf("an error's request_id: %s, X-Request-Id %q", b, resp.Header.Get("X-Request-Id"))
	}
	resp, b = ts.get("/metrics")
	wantError(t, resp, b, http.StatusUnauthorized, CodeUnauthorized)
	o.checkReply(t, "GET", "/metrics", resp, b)
	resp, b = ts.do(request{method: http.MethodGet, path: "/metrics", key: keyB})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics with a key: %d %s", resp.StatusCode, b)
	}
	o.checkReply(t, "GET", "/metrics", resp, b)
	resp, b = ts.do(request{method: http.MethodGet, path: "/v1/sessions?scope=readonly", key: keyA})
	wantError(t, resp, b, http.StatusNotFound, CodeUnknownScope)
	o.checkReply(t, "GET", "/v1/sessions", resp, b)
	resp, b = ts.get("/readyz") // open, keys or not
	if ready := decode[struct{ Status string }](t, resp, b, http.StatusOK); ready.Status != "ready" {
		t.Errorf("readyz %s", b)
	}
	o.checkReply(t, "GET", "/readyz", resp, b)
	resp, b = ts.get("/openapi.json") // open, keys or not
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /openapi.json on a server with keys: %d %s", resp.StatusCode, b)
	}
	o.checkReply(t, "GET", "/openapi.json", resp, b)
	resp, b = ts.do(request{method: http.MethodPost, path: "/v1/run", key: keyA, body: map[string]any{"code": strings.Repeat("x", 2048)}})
	wantError(t, resp, b, http.StatusRequestEntityTooLarge, CodeBodyTooLarge)
	o.checkReply(t, "POST", "/v1/run", resp, b)
	resp, b = ts.do(request{method: http.MethodPost, path: "/v1/sessions", key: keyA, body: "{}", header: map[string]string{"Origin": "https://example.com", "Sec-Fetch-Site": "cross-site"}})
	wantError(t, resp, b, http.StatusForbidden, CodeCrossOrigin)
	o.checkReply(t, "POST", "/v1/sessions", resp, b)

	// MCP: initialize, then end the session.
	init := `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}`
	resp, b = ts.do(request{method: http.MethodPost, path: "/mcp", key: keyA, body: init, header: map[string]string{"Accept": "application/json, text/event-stream"}})
	o.checkReply(t, "POST", "/mcp", resp, b)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, b)
	}
	resp, b = ts.do(request{method: http.MethodDelete, path: "/mcp", key: keyA, header: map[string]string{"Mcp-Session-Id": sid}})
	o.checkReply(t, "DELETE", "/mcp", resp, b)
	resp, b = ts.do(request{method: http.MethodGet, path: "/mcp", key: keyA, header: map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}})
	o.checkReply(t, "GET", "/mcp", resp, b)

	for range 4 {
		resp, b = ts.do(request{method: http.MethodGet, path: "/v1/scopes", key: keyA})
	}
	wantError(t, resp, b, http.StatusTooManyRequests, CodeRateLimited)
	o.checkReply(t, "GET", "/v1/scopes", resp, b)
}
