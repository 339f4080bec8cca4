package playground

// The tests here run Node.js: the page's scripts under node's test runner,
// and the end-to-end test, which drives Debian's Chromium with
// playwright-core (installed in testdata/node by .ci/node-deps; Chromium by
// .ci/run). They skip when node, the installed packages or the browser are
// missing, except under CI (CI set), where they fail instead so that a
// broken install step cannot pass as skipped tests.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/bridge"
	"github.com/codemode/codemode/config"
	httpapi "github.com/codemode/codemode/http"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/sdkgen"
	"github.com/codemode/codemode/session"
)

// chromiumPath is Debian's Chromium, which .ci/run installs.
const chromiumPath = "/usr/bin/chromium"

// nodeTimeout bounds one node process: a guard against hangs, not a timing
// assertion.
const nodeTimeout = 3 * time.Minute

func requireNode(t *testing.T) string {
	t.Helper()
	return testkit.RequireNode(t, "")
}

// requireBrowser returns node and Chromium, or skips.
func requireBrowser(t *testing.T) (node, chromium string) {
	t.Helper()
	node = testkit.RequireNode(t, filepath.Join("testdata", "node"), "playwright-core")
	if _, err := os.Stat(chromiumPath); err != nil {
		testkit.Missing(t, chromiumPath+" is missing: install Debian's chromium package (.ci/run does)")
	}
	return node, chromiumPath
}

// runNode runs node with args in dir and env, logging its output; it fails
// the test when node fails.
func runNode(t *testing.T, node, dir string, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("node %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("node %s: %v", strings.Join(args, " "), err)
	}
}

func TestScriptsInNode(t *testing.T) {
	node := requireNode(t)
	a := newApp(t, "")
	v, err := a.Registry.View(config.DefaultScope)
	if err != nil {
		t.Fatal(err)
	}
	set := bridge.SDK(v)
	dir := t.TempDir()
	ts, prompt := filepath.Join(dir, "sdk.d.ts"), filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(ts, sdkgen.TypeScript(set), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prompt, sdkgen.Prompt(set), 0o644); err != nil {
		t.Fatal(err)
	}
	// Catalogs of the same tools, as a scope with many tools gets: one too small for any
	// whole declaration, one with room for a few.
	env := []string{"SDK_TS=" + ts, "SDK_PROMPT=" + prompt}
	for _, c := range []struct {
		env    string
		budget int
	}{{"SDK_CATALOG", 400}, {"SDK_CATALOG_SOME", 900}} {
		text := sdkgen.PromptWith(set, sdkgen.PromptOptions{Budget: c.budget})
		if !sdkgen.IsCatalog(text) {
			t.Fatalf("a prompt budget of %d tokens renders the demo tools whole, not a catalog", c.budget)
		}
		file := filepath.Join(dir, strings.ToLower(c.env)+".md")
		if err := os.WriteFile(file, text, 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, c.env+"="+file)
	}
	runNode(t, node, "testdata", env, "--test", "unit.mjs")
}

// browserKey is the API key of the end-to-end test's server.
const browserKey = "playground-e2e-key"

// browserConfig is the end-to-end test's server: API keys, a restricted
// scope the key may use and one it may not, a policy that asks a person
// before any files_* call in default and its descendants, and a scope whose
// guard vetoes the util_* tools (so they are withheld from it).
func browserConfig() string {
	sum := sha256.Sum256([]byte(browserKey))
	return fmt.Sprintf(`
scopes:
  readonly: {parent: default, restrict: {deny: [kv_set, files_write, files_edit]}}
  agent:    {parent: default, mode: code}
  ro:       {parent: default}
policies:
  - {scope: default, tool: "files_*", decision: ask, reason: "writes need a person"}
guards:
  - {scope: ro, tool: "util_*", reason: owner veto}
api_keys:
  - {sha256: %s, scopes: [default, readonly, ro]}
`, hex.EncodeToString(sum[:]))
}

func newApp(t *testing.T, yml string) *app.App {
	t.Helper()
	cfg, err := config.Parse(strings.NewReader(yml))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Isolation = "inproc"
	a, err := app.New(context.Background(), cfg, app.Options{Store: session.NewMemory(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// addedTool is what POST /test/tools registers: a change of the default
// scope's tool set, which the page must show as an SDK diff.
func addedTool(t *testing.T) *registry.Tool {
	t.Helper()
	tool, err := registry.Define(registry.Definition{
		Name:        "test_added",
		Description: "Added while the page is open.",
		Output:      schema.Object(nil, nil, false),
		Behavior: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
			return map[string]any{}, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestBrowser is the end-to-end test: the real service (app.New and
// httpapi.New with this package's page) on loopback, and testdata/node/e2e.mjs
// driving Chromium through it: the API key, the scope picker, the SDK with
// its sizes and a live diff, Find tools (a search, inserting a hit's call), an
// example run with its nested calls, approvals answered from the page, and
// direct tool calls. It keeps screenshots in testdata/artifacts/ (git-ignored).
func TestBrowser(t *testing.T) {
	node, chromium := requireBrowser(t)
	a := newApp(t, browserConfig())
	srv, err := httpapi.New(a, httpapi.Options{Playground: Handler(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tool := addedTool(t)
	mux := http.NewServeMux()
	mux.Handle("/", srv)
	mux.HandleFunc("POST /test/tools", func(w http.ResponseWriter, _ *http.Request) {
		if _, err := a.Registry.Register(config.DefaultScope, tool); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	stubbed := stubSessionList(t, srv, mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	artifacts, err := filepath.Abs(filepath.Join("testdata", "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(artifacts, "playground.png")
	for _, stale := range []string{shot, filepath.Join(artifacts, "playground-failed.png")} {
		_ = os.Remove(stale)
	}
	runNode(t, node, filepath.Join("testdata", "node"), []string{
		"PLAYGROUND_URL=" + hs.URL,
		"PLAYGROUND_KEY=" + browserKey,
		"CHROMIUM=" + chromium,
		"USER_DATA_DIR=" + t.TempDir(),
		"SCREENSHOT=" + shot,
		"SESSIONS_STUBBED=" + strconv.FormatBool(stubbed),
	}, "e2e.mjs")
	if _, err := os.Stat(shot); err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	t.Logf("screenshot: %s", shot)
}

// stubSessionList serves GET /v1/sessions?scope= from mux when srv does not
// (a build without the session list): it lists, newest first, the sessions
// created through mux's POST /v1/sessions, in the shape of the real route.
// POST /test/sessions-list/off makes it answer 404 as a server without the
// route does (and .../on lists again), for the page's fallback. It reports
// whether it stubbed, so that the browser test can say so.
func stubSessionList(t *testing.T, srv http.Handler, mux *http.ServeMux) bool {
	t.Helper()
	probe := httptest.NewRequest(http.MethodGet, "/v1/sessions?scope=default", nil)
	probe.Header.Set("Authorization", "Bearer "+browserKey)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, probe)
	if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
		return false
	}
	t.Log("GET /v1/sessions is not served by this build: the browser test lists sessions from a stub")
	type header struct {
		ID        string `json:"id"`
		Scope     string `json:"scope"`
		CreatedAt string `json:"created_at"`
	}
	var (
		mu      sync.Mutex
		created []header
		off     bool
	)
	mux.HandleFunc("POST /test/sessions-list/{state}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		off = r.PathValue("state") == "off"
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		var h header
		if rec.Code == http.StatusCreated && json.Unmarshal(rec.Body.Bytes(), &h) == nil {
			mu.Lock()
			created = append(created, h)
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
	mux.HandleFunc("GET /v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		scope := r.URL.Query().Get("scope")
		list := []header{}
		mu.Lock()
		if off {
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"NOT_FOUND","message":"no route GET /v1/sessions"}}`)
			return
		}
		for i := len(created) - 1; i >= 0; i-- {
			if scope == "" || created[i].Scope == scope {
				list = append(list, created[i])
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"sessions": list, "next_cursor": ""})
	})
	return true
}
