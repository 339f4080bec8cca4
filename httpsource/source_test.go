package httpsource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/httpsource"
	"github.com/codemode/codemode/internal/testkit"
)

const petsKey = "sk-live-7f3a9c-secret"

// petsAPI is a Go server for the exact behaviours: it checks the key,
// keeps pets, and misbehaves on purpose on /big, /slow, /flaky and /away.
type petsAPI struct {
	mu        sync.Mutex
	pets      []map[string]any
	requests  []*http.Request
	bodies    []string
	flaky     atomic.Int32
	inFlight  atomic.Int32
	maxSeen   atomic.Int32
	elsewhere string // where /away redirects
}

func newPetsAPI() *petsAPI {
	return &petsAPI{pets: []map[string]any{
		{"id": 1, "name": "Rex", "tag": "dog"}, {"id": 2, "name": "Tom", "tag": "cat"}, {"id": 3, "name": "Fido", "tag": "dog"},
	}}
}

func (p *petsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.requests = append(p.requests, r.Clone(context.Background()))
	p.bodies = append(p.bodies, string(body))
	p.mu.Unlock()
	n := p.inFlight.Add(1)
	defer p.inFlight.Add(-1)
	for {
		m := p.maxSeen.Load()
		if n <= m || p.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	if r.Header.Get("X-Pets-Key") != petsKey {
		http.Error(w, `{"message":"bad key `+r.Header.Get("X-Pets-Key")+`"}`, http.StatusUnauthorized)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	w.Header().Set("Content-Type", "application/json")
	switch {
	case path == "/pets" && r.Method == http.MethodGet:
		tags := r.URL.Query()["tag"]
		out := []map[string]any{}
		p.mu.Lock()
		for _, pet := range p.pets {
			if len(tags) == 0 || contains(tags, pet["tag"].(string)) {
				out = append(out, pet)
			}
		}
		p.mu.Unlock()
		json.NewEncoder(w).Encode(out)
	case path == "/pets" && r.Method == http.MethodPost:
		var pet map[string]any
		json.Unmarshal(body, &pet)
		p.mu.Lock()
		pet["id"] = len(p.pets) + 1
		p.pets = append(p.pets, pet)
		p.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(pet)
	case strings.HasPrefix(path, "/pets/") && (r.Method == http.MethodGet || r.Method == http.MethodPut):
		id := strings.TrimPrefix(path, "/pets/")
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, pet := range p.pets {
			if fmt.Sprint(pet["id"]) == id {
				if r.Method == http.MethodPut {
					var patch map[string]any
					json.Unmarshal(body, &patch)
					for k, v := range patch {
						pet[k] = v
					}
				}
				json.NewEncoder(w).Encode(pet)
				return
			}
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"message":"no pet %q (key %s)"}`, id, r.Header.Get("X-Pets-Key"))
	case strings.HasPrefix(path, "/pets/") && r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	case path == "/notes":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "first note\nsecond note")
	case path == "/avatar":
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\nfake"))
	case path == "/big": // 50 MB, streamed
		chunk := strings.Repeat("x", 1<<20)
		w.Header().Set("Content-Type", "text/plain")
		for range 50 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	case path == "/slow":
		<-r.Context().Done()
	case path == "/flaky":
		if p.flaky.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	case path == "/away":
		http.Redirect(w, r, p.elsewhere+"/v1/pets", http.StatusFound)
	default:
		http.NotFound(w, r)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *petsAPI) count(method, path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.requests {
		if r.Method == method && strings.HasSuffix(r.URL.Path, path) {
			n++
		}
	}
	return n
}

// petsSetup serves petsAPI and configures it as the source "pets" with
// the key from the environment.
func petsSetup(t *testing.T, extra string, opts app.Options) (*petsAPI, *app.App, *httpsource.Sources) {
	return petsSetupWith(t, extra, "", opts)
}

// petsSetupWith is petsSetup with more top-level configuration.
func petsSetupWith(t *testing.T, extra, more string, opts app.Options) (*petsAPI, *app.App, *httpsource.Sources) {
	t.Helper()
	api := newPetsAPI()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	t.Setenv("PETS_KEY", petsKey)
	doc := testkit.WriteFile(t, "pets.json", petsDoc)
	yml := fmt.Sprintf("openapi_sources:\n  - {name: pets, file: %q, base_url: %q, auth: {api_key: '${PETS_KEY}'}, timeout: 2s%s}\n%s", doc, srv.URL+"/v1", extra, more)
	a, src := setup(t, yml, opts)
	return api, a, src
}

// TestProgramListsFiltersAndUpdates: a program lists, filters and then
// updates through the API; the values are right, every call is in the
// session log, and the key is in no event (it is added by the host: the
// program's arguments are the operation's only).
func TestProgramListsFiltersAndUpdates(t *testing.T) {
	api, a, _ := petsSetup(t, "", app.Options{})
	res := run(t, a, `
		const dogs = await tools["pets.listPets"]({tag: ["dog"]});
		const names = dogs.map(p => p.name).sort();
		const updated = [];
		for (const d of dogs.filter(p => p.name.startsWith("R"))) {
			updated.push(await tools["pets.updatePet"]({petId: String(d.id), name: d.name + " II"}));
		}
		const one = await tools["pets.showPet"]({petId: "1"});
		return {names, updated, one};
	`)
	got, _ := json.Marshal(result(t, res))
	want := `{"names":["Fido","Rex"],"one":{"id":1,"name":"Rex II","tag":"dog"},"updated":[{"id":1,"name":"Rex II","tag":"dog"}]}`
	if string(got) != want {
		t.Fatalf("result %s\nwant   %s", got, want)
	}
	if len(res.Calls) != 3 {
		t.Fatalf("%d calls in the result, want 3", len(res.Calls))
	}
	log := sessionLog(t, a, res)
	for _, name := range []string{"pets.listPets", "pets.updatePet", "pets.showPet"} {
		if !strings.Contains(log, name) {
			t.Errorf("the session log has no call of %s", name)
		}
	}
	if strings.Contains(log, petsKey) || strings.Contains(log, "X-Pets-Key") {
		t.Errorf("the session log holds the credential:\n%s", log)
	}
	if api.count(http.MethodPut, "/pets/1") != 1 {
		t.Errorf("PUT /pets/1 reached the API %d times, want 1", api.count(http.MethodPut, "/pets/1"))
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if q := api.requests[0].URL.RawQuery; q != "tag=dog" {
		t.Errorf("list query %q, want tag=dog", q)
	}
	// The PUT carries the call's idempotency key, the reads none.
	for _, r := range api.requests {
		if key := r.Header.Get("Idempotency-Key"); (r.Method == http.MethodPut) != strings.HasPrefix(key, "cm1-") {
			t.Errorf("%s %s: Idempotency-Key %q", r.Method, r.URL.Path, key)
		}
	}
}

// TestHTTPErrorsAreToolCallErrors: an error status is a ToolCallError the
// program catches, with the status and an excerpt of the body, the key the
// API echoed redacted.
func TestHTTPErrorsAreToolCallErrors(t *testing.T) {
	_, a, src := petsSetup(t, "", app.Options{})
	res := run(t, a, `
		try { await tools["pets.showPet"]({petId: "99"}); return "no error"; }
		catch (e) { return {name: e.name, code: e.code, tool: e.toolName, message: e.message}; }
	`)
	got := result(t, res).(map[string]any)
	msg, _ := got["message"].(string)
	if got["name"] != "ToolCallError" || got["code"] != "TOOL_FAILED" || got["tool"] != "pets.showPet" ||
		!strings.Contains(msg, "404 Not Found") || !strings.Contains(msg, `no pet "99"`) {
		t.Fatalf("caught %v", got)
	}
	if strings.Contains(msg, petsKey) || !strings.Contains(msg, "[redacted]") {
		t.Errorf("the message does not redact the echoed key: %s", msg)
	}
	if log := sessionLog(t, a, res); strings.Contains(log, petsKey) {
		t.Errorf("the log holds the key")
	}
	if st := src.States()[0]; st.Failures != 1 || strings.Contains(st.LastError, petsKey) {
		t.Errorf("state %+v", st)
	}
}

// TestResponsesByMediaType: text is a string, an image a {mimeType, data}
// value shown as an image block, an empty 204 is null.
func TestResponsesByMediaType(t *testing.T) {
	_, a, _ := petsSetup(t, "", app.Options{})
	got := result(t, run(t, a, `return await tools["pets.notes"]({})`))
	if got != "first note\nsecond note" {
		t.Errorf("text: %q", got)
	}
	got = result(t, run(t, a, `const v = await tools["pets.avatar"]({}); return [v.mimeType, atob(v.data).slice(1, 4)]`))
	if fmt.Sprint(got) != "[image/png PNG]" {
		t.Errorf("image: %v", got)
	}
	res := run(t, a, `return await tools["pets.deletePet"]({petId: "1"})`)
	if got := result(t, res); got != nil {
		t.Errorf("204: %v", got)
	}
}

// TestRedirectOffOriginIsRefused: a redirect to another host fails the
// call, and the other host receives nothing (neither the request nor the
// key).
func TestRedirectOffOriginIsRefused(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	api, a, _ := petsSetup(t, "", app.Options{})
	api.elsewhere = other.URL
	res := run(t, a, `try { await tools["pets.away"]({}); return "followed" } catch (e) { return e.message }`)
	msg, _ := result(t, res).(string)
	if !strings.Contains(msg, "refused a redirect to another origin") {
		t.Fatalf("message %q", msg)
	}
	if reached.Load() != 0 {
		t.Fatalf("the other host was reached %d times", reached.Load())
	}
	if api.count(http.MethodGet, "/away") != 1 {
		t.Errorf("a refused redirect is not retried: /away reached %d times", api.count(http.MethodGet, "/away"))
	}
}

// TestLargeResponseIsBounded: a 50 MB answer to a 1 MiB bound fails the
// call without being read, and the server's heap does not grow by it.
func TestLargeResponseIsBounded(t *testing.T) {
	_, a, _ := petsSetup(t, ", max_response_bytes: 1MiB", app.Options{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 4 {
		res := run(t, a, `try { await tools["pets.big"]({}); return "read" } catch (e) { return e.message }`)
		if msg, _ := result(t, res).(string); !strings.Contains(msg, "larger than max_response_bytes (1 MiB)") {
			t.Fatalf("message %q", msg)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 16<<20 {
		t.Errorf("heap grew by %d MiB over four 50 MB answers", grown>>20)
	}
}

// TestSilentServerTimesOut: a server that never answers fails the call
// with TOOL_TIMEOUT after the source's timeout, not the run's.
func TestSilentServerTimesOut(t *testing.T) {
	_, a, _ := petsSetup(t, "", app.Options{})
	start := time.Now()
	res := run(t, a, `try { await tools["pets.slow"]({}); return "answered" } catch (e) { return e.code }`)
	if got := result(t, res); got != "TOOL_TIMEOUT" {
		t.Fatalf("code %v", got)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v: the run's own timeout, not the source's", d)
	}
}

// TestOnlyIdempotentOperationsAreRetried: a GET that meets a 503 is tried
// again and succeeds; a POST that meets it fails after one request.
func TestOnlyIdempotentOperationsAreRetried(t *testing.T) {
	api, a, _ := petsSetup(t, "", app.Options{})
	if got := result(t, run(t, a, `return await tools["pets.flaky"]({})`)); fmt.Sprint(got) != "map[ok:true]" {
		t.Fatalf("GET: %v", got)
	}
	if n := api.count(http.MethodGet, "/flaky"); n != 2 {
		t.Errorf("GET /flaky reached the API %d times, want 2", n)
	}
	api.flaky.Store(0)
	res := run(t, a, `try { await tools["pets.flakyPost"]({}); return "ok" } catch (e) { return e.message }`)
	if msg, _ := result(t, res).(string); !strings.Contains(msg, "503") {
		t.Fatalf("POST: %v", msg)
	}
	if n := api.count(http.MethodPost, "/flaky"); n != 1 {
		t.Errorf("POST /flaky reached the API %d times, want 1", n)
	}
}

// TestConcurrencyIsBounded: twelve parallel reads with max_concurrency 2
// never have more than two requests at the API at once.
func TestConcurrencyIsBounded(t *testing.T) {
	api, a, _ := petsSetup(t, ", max_concurrency: 2", app.Options{})
	res := run(t, a, `
		const all = await Promise.all(Array.from({length: 12}, (_, i) => tools["pets.showPet"]({petId: String(1 + i % 3)})));
		return all.length`)
	if got := result(t, res); got != float64(12) {
		t.Fatalf("result %v", got)
	}
	if m := api.maxSeen.Load(); m > 2 || m < 1 {
		t.Errorf("%d requests at once, want at most 2", m)
	}
}

// TestPostBehindAskWaitsForApproval: a policy ask on a POST operation is
// answered like any tool's: rejected, the API sees nothing; allowed, it
// is created.
func TestPostBehindAskWaitsForApproval(t *testing.T) {
	var asks []agent.Ask
	allow := false
	api, a, _ := petsSetupWith(t, "", "policies:\n  - {tool: 'pets.create*', decision: ask, reason: creates a pet}\n", app.Options{
		Approver: agent.ApproverFunc(func(_ context.Context, ask agent.Ask) (agent.Verdict, error) {
			asks = append(asks, ask)
			if allow {
				return agent.Allow("ok"), nil
			}
			return agent.Reject("not today"), nil
		}),
	})
	res := run(t, a, `try { await tools["pets.createPet"]({name: "Nemo", tag: "fish"}); return "created" } catch (e) { return e.code }`)
	if got := result(t, res); got != "APPROVAL_REJECTED" {
		t.Fatalf("rejected: %v", got)
	}
	if n := api.count(http.MethodPost, "/pets"); n != 0 {
		t.Fatalf("a rejected POST reached the API %d times", n)
	}
	allow = true
	got := result(t, run(t, a, `return await tools["pets.createPet"]({name: "Nemo", tag: "fish"})`))
	if fmt.Sprint(got) != "map[id:4 name:Nemo tag:fish]" {
		t.Fatalf("created %v", got)
	}
	if len(asks) != 2 || asks[0].Tool != "pets.createPet" || string(asks[0].Arguments) != `{"name":"Nemo","tag":"fish"}` || asks[0].Reason != "creates a pet" {
		t.Fatalf("asks %+v", asks)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if last := api.bodies[len(api.bodies)-1]; last != `{"name":"Nemo","tag":"fish"}` {
		t.Errorf("body %s", last)
	}
	// An effect carries the call's idempotency key.
	if key := api.requests[len(api.requests)-1].Header.Get("Idempotency-Key"); !strings.HasPrefix(key, "cm1-") || len(key) != 36 {
		t.Errorf("Idempotency-Key %q on the POST", key)
	}
}

// TestIncludeExclude: selectors by tag, method, path and operationId glob.
func TestIncludeExclude(t *testing.T) {
	for _, tc := range []struct {
		sel  string
		want []string
	}{
		{"include: ['tag:pets'], exclude: ['method:PUT']", []string{"pets.createPet", "pets.listPets", "pets.showPet"}},
		{"include: ['path:/pets/*']", []string{"pets.deletePet", "pets.showPet", "pets.updatePet"}},
		{"include: ['*Pet']", []string{"pets.createPet", "pets.deletePet", "pets.showPet", "pets.updatePet"}},
		{"exclude: ['tag:misc', 'tag:admin', 'list*']", []string{"pets.createPet", "pets.showPet", "pets.updatePet"}},
	} {
		t.Run(tc.sel, func(t *testing.T) {
			_, a, src := petsSetup(t, ", "+tc.sel, app.Options{})
			v, err := a.Registry.View(config.DefaultScope)
			if err != nil {
				t.Fatal(err)
			}
			names := v.Names()
			if fmt.Sprint(names) != fmt.Sprint(tc.want) {
				t.Fatalf("tools %v, want %v", names, tc.want)
			}
			if st := src.States()[0]; st.Operations != len(tc.want) || st.Excluded != 12-len(tc.want) {
				t.Errorf("state %+v", st)
			}
		})
	}
}

// TestStartErrorsNameTheEntry: a document that is not OpenAPI, a bad
// operation's pointer, an unset variable and a missing base URL.
func TestStartErrorsNameTheEntry(t *testing.T) {
	for _, tc := range []struct{ doc, extra, want string }{
		{`{"swagger": "2.0", "paths": {}}`, "", `openapi_sources[0] (api): openapi: "/openapi": want an OpenAPI version 3.0.x or 3.1.x`},
		{`{"openapi": "3.0.0", "paths": {}}`, "", "openapi_sources[0] (api): the document names no server: set base_url"},
		{`{"openapi": "3.0.0", "servers": [{"url": "/v1"}], "paths": {}}`, "", `the document's server "/v1" is relative: set base_url`},
		{"openapi: 3.0.0\npaths: [\n", "", "decode YAML document"},
		{`{"openapi": "3.0.0", "paths": {}}`, ", base_url: 'http://127.0.0.1:1', auth: {bearer: '${NOT_SET_ANYWHERE}'}", "auth.bearer: environment variable NOT_SET_ANYWHERE is not set"},
	} {
		_, err := startOnly(t, fmt.Sprintf("openapi_sources:\n  - {name: api, file: %q%s}\n", testkit.WriteFile(t, "d", tc.doc), tc.extra))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.doc, err, tc.want)
		}
	}
}

// TestLeftOutOperationsAreReported: an operation that does not convert is
// left out, named by its pointer; the others are tools.
func TestLeftOutOperationsAreReported(t *testing.T) {
	doc := `{"openapi": "3.1.0", "paths": {
		"/a": {"get": {"operationId": "a", "parameters": [{"name": "x", "in": "body"}]}},
		"/b": {"get": {"operationId": "b"}}}}`
	src, err := startOnly(t, fmt.Sprintf("openapi_sources:\n  - {name: api, file: %q, base_url: 'http://127.0.0.1:1'}\n", testkit.WriteFile(t, "d.json", doc)))
	if err != nil {
		t.Fatal(err)
	}
	st := src.States()[0]
	if st.State != httpsource.StateReady || st.Operations != 1 || len(st.LeftOut) != 1 ||
		st.LeftOut[0].Pointer != "/paths/~1a/get/parameters/0" || !strings.Contains(st.LeftOut[0].Reason, `location "body"`) {
		t.Fatalf("state %+v", st)
	}
}
