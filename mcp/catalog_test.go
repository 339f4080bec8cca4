package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/githubapi"
	"github.com/codemode/codemode/sdkgen/tokens"
)

// catalogUpstream is an MCP server with GitHub's REST operations as tools (input schemas only,
// as most servers send them), recording the calls it gets.
type catalogUpstream struct {
	srv   *sdk.Server
	mu    sync.Mutex
	calls []string // "name args"
}

func newCatalogUpstream(t testing.TB, n int) (*catalogUpstream, int) {
	return newCatalogUpstreamWith(t, n, false)
}

// newCatalogUpstreamWith is newCatalogUpstream, with each operation's response schema as its
// outputSchema when outputs is set (its calls then fail: they answer no structured value).
func newCatalogUpstreamWith(t testing.TB, n int, outputs bool) (*catalogUpstream, int) {
	t.Helper()
	tools, err := githubapi.ToolsN(n)
	if errors.Is(err, githubapi.ErrMissing) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	u := &catalogUpstream{srv: sdk.NewServer(&sdk.Implementation{Name: "github", Version: "1"}, nil)}
	for _, tl := range tools {
		name := tl.Name
		tool := &sdk.Tool{Name: name, Description: tl.Description, InputSchema: tl.Parameters}
		if outputs && len(tl.Output) > 0 {
			tool.OutputSchema = tl.Output
		}
		u.srv.AddTool(tool,
			func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				u.mu.Lock()
				u.calls = append(u.calls, name+" "+string(req.Params.Arguments))
				u.mu.Unlock()
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "called " + name}}}, nil
			})
	}
	return u, len(tools)
}

func (u *catalogUpstream) dial(ctx context.Context, _ config.MCPServer) (sdk.Transport, error) {
	ct, st := sdk.NewInMemoryTransports()
	if _, err := u.srv.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

// A client holding only run_code's description finds a tool among 2,500 with $search, reads
// it with $describe and calls it, over MCP, against a many-tool upstream.
func TestCatalogEndToEnd(t *testing.T) {
	up, n := newCatalogUpstream(t, 2500)
	a := newApp(t)
	opts := testOptions(discard)
	opts.dial = up.dial
	start := time.Now()
	startSettled(t, a, []config.MCPServer{{Name: "gh", Scope: "default"}}, opts)
	cs := connect(t, newServer(t, a, "coder"), clientOptions{})
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d upstream tools registered and listed in %v", n, time.Since(start))
	if len(list.Tools) != 1 || list.Tools[0].Name != "run_code" {
		t.Fatalf("code mode lists %d tools", len(list.Tools))
	}
	desc := list.Tools[0].Description
	if got := tokens.Count(desc); got > 2000 || !strings.Contains(desc, "tools, too many to list here") || !strings.Contains(desc, "gh (") {
		t.Fatalf("run_code's description: %d tokens, want a catalog of at most 2,000:\n%s", got, desc)
	}

	res := call(t, cs, "run_code", `{"code": `+jsonString(`
		const found = await tools.$search("list the pull requests of a repository", { limit: 5 })
		const name = found.tools.map(t => t.name).find(n => n.endsWith(".pulls_list"))
		const decl = await tools.$describe(name)
		const out = await tools[name]({ owner: "octocat", repo: "hello-world", state: "open" })
		return { name, total: found.total, typed: decl.includes("owner: string"), out }`)+`}`)
	if res.IsError {
		t.Fatalf("run failed: %s", text(res))
	}
	var got struct {
		Name  string
		Total int
		Typed bool
		Out   []struct{ Text string }
	}
	if err := json.Unmarshal([]byte(text(res)), &got); err != nil {
		t.Fatalf("%v: %s", err, text(res))
	}
	v, err := a.Registry.View("coder")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "gh.github.pulls_list" || got.Total != len(v.Names()) || got.Total < n || !got.Typed || len(got.Out) != 1 || got.Out[0].Text != "called github.pulls_list" {
		t.Fatalf("found %+v", got)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.calls) != 1 || up.calls[0] != `github.pulls_list {"owner":"octocat","repo":"hello-world","state":"open"}` {
		t.Fatalf("upstream calls %q", up.calls)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// BenchmarkCatalogUpstream measures what a 2,500-tool upstream (GitHub's REST operations with
// their response schemas, as issue 26 measured) costs codemode: the time from connecting to a
// served tools/list of a scope in mode code (coder: run_code alone) and in mode both (default:
// every tool listed too), and the heap it keeps (heap-B/tool, after a collection).
func BenchmarkCatalogUpstream(b *testing.B) {
	up, n := newCatalogUpstreamWith(b, 2500, true)
	for _, scope := range []string{"coder", "default"} { // modes code and both
		b.Run(scope, func(b *testing.B) {
			b.ReportAllocs()
			var kept uint64
			for b.Loop() {
				before := heapInUse()
				a := newApp(b)
				opts := testOptions(discard)
				opts.dial = up.dial
				ups, err := startUpstreams(context.Background(), a.Registry, []config.MCPServer{{Name: "gh", Scope: "default"}}, opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := ups.Settle(context.Background()); err != nil {
					b.Fatal(err)
				}
				cs := connect(b, newServer(b, a, scope), clientOptions{})
				if _, err := cs.ListTools(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
				kept = heapInUse() - before
				runtime.KeepAlive(a)
				ups.Close()
			}
			b.ReportMetric(float64(kept)/float64(n), "heap-B/tool")
		})
	}
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// In mode both, run_code heads the first tools/list page however many tools sort before it,
// and no later page repeats it: a client that reads one page still finds it.
func TestRunCodeIsOnTheFirstPage(t *testing.T) {
	a := newApp(t)
	a.Registry.Batch(func() {
		for i := range 1500 { // the go-sdk pages 1,000 tools, in name order: "a_…" sort first
			registerRaw(t, a, "default", fmt.Sprintf("a_%04d", i), `{"type":"object"}`, map[string]any{})
		}
	})
	cs := connect(t, newServer(t, a, "default"), clientOptions{})
	var pages [][]string
	params := &sdk.ListToolsParams{}
	for {
		res, err := cs.ListTools(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		pages = append(pages, names)
		if res.NextCursor == "" {
			break
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	if len(pages) < 2 || pages[0][0] != "run_code" {
		t.Fatalf("%d pages, the first starting %v", len(pages), pages[0][:min(3, len(pages[0]))])
	}
	seen := 0
	for _, page := range pages {
		for _, name := range page {
			if name == "run_code" {
				seen++
			}
		}
	}
	total := 0
	for _, page := range pages {
		total += len(page)
	}
	if seen != 1 || total != 1500+12 {
		t.Fatalf("run_code listed %d times; %d tools in all", seen, total)
	}
}
