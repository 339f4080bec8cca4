package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/catalog"
	"github.com/codemode/codemode/internal/githubapi"
	"github.com/codemode/codemode/sdkgen"
	"github.com/codemode/codemode/sdkgen/tokens"
)

// catalogFigures measures tool discovery over GitHub's REST description
// (issue 26: any catalog in a fixed footprint): how often $search finds the
// tool a labeled task needs, beside plain BM25; run_code's description in
// o200k tokens, beside the same tools as native MCP definitions; how soon
// `codemode mcp` answers its first tools/list with a 2,500-tool upstream,
// beside that upstream answering its own, and codemode's memory then; and
// one search, beside one BM25 ranking. Without the GitHub package
// (.ci/node-deps) the group is one skipped line.
func catalogFigures(e *env) ([]Row, error) {
	const figure = "tool discovery (GitHub REST description)"
	api, err := githubapi.Tools(0)
	if errors.Is(err, githubapi.ErrMissing) {
		return []Row{skipped(figure, "catalog/testdata/github is not installed (.ci/node-deps, or npm ci there)")}, nil
	}
	if err != nil {
		return nil, err
	}
	large, err := githubapi.ToolsN(catalogLarge)
	if err != nil {
		return nil, err
	}
	tasks, err := githubapi.LoadTasks()
	if err != nil {
		return nil, err
	}
	rows := findabilityRows(api, large, tasks)
	for _, outputs := range []bool{true, false} {
		rs, err := descriptionRows(outputs)
		if err != nil {
			return nil, err
		}
		rows = append(rows, rs...)
	}
	rows = append(rows, mcpStartRows(e, large)...)
	return append(rows, searchRow(e, large, githubapi.Qualify(tasks, "github.", "ghes.", "ghec."))), nil
}

// catalogLarge is the catalog of issue 26's start-up and memory targets:
// api.github.com, then GitHub Enterprise Server and Cloud, qualified.
const catalogLarge = 2500

// githubSet is tools as a sdkgen set, without their output schemas unless
// outputs.
func githubSet(tools []githubapi.Tool, outputs bool) *sdkgen.Set {
	in := make([]sdkgen.Tool, len(tools))
	for i, t := range tools {
		in[i] = sdkgen.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
		if outputs {
			in[i].Output = t.Output
		}
	}
	return sdkgen.NewSet(in)
}

// searchRank adapts an index to githubapi.Recall.
func searchRank(ix *catalog.Index) func(string, int) []string {
	return func(q string, k int) []string {
		res, err := ix.Search(catalog.Query{Text: q, Limit: k})
		if err != nil {
			return nil
		}
		names := make([]string, len(res.Tools))
		for i, h := range res.Tools {
			names[i] = h.Name
		}
		return names
	}
}

// findabilityRows are recall@5 (target ≥ 0.90) and recall@1 of $search on
// the 87 labeled tasks, over api.github.com and over the 2,500-tool catalog
// (where either server's copy of a wanted tool is a hit), each beside BM25.
func findabilityRows(api, large []githubapi.Tool, tasks []githubapi.Task) []Row {
	var rows []Row
	for _, c := range []struct {
		label string
		tools []githubapi.Tool
		tasks []githubapi.Task
	}{
		{"api.github.com", api, tasks},
		{"github. + ghes. + ghec.", large, githubapi.Qualify(tasks, "github.", "ghes.", "ghec.")},
	} {
		at1, at5, _ := githubapi.Recall(c.tasks, searchRank(catalog.New(githubSet(c.tools, true), nil)))
		b1, b5, _ := githubapi.Recall(c.tasks, githubapi.BM25(c.tools))
		r5 := Row{Figure: fmt.Sprintf("$search recall@5, %s (%s tools, %d tasks)", c.label, groupThousands(float64(len(c.tools))), len(c.tasks)),
			Value: at5, Floor: b5, FloorName: "BM25", Unit: "recall", Target: "≥ 0.90"}.withRatio().judge(at5 >= 0.9)
		r1 := Row{Figure: "  same, recall@1", Value: at1, Floor: b1, FloorName: "BM25", Unit: "recall"}.withRatio()
		rows = append(rows, r5, r1)
	}
	return rows
}

// descriptionCounts are the catalog sizes of the description rows.
var descriptionCounts = []int{10, 100, 1000, catalogLarge}

// descriptionRows are run_code's description (sdkgen.PromptWith, default
// options: the whole SDK while it fits the 2,000-token budget, a catalog
// past it) for each of descriptionCounts GitHub tools, beside the same tools
// as native MCP definitions: the tools/list a client would read without
// codemode.
func descriptionRows(outputs bool) ([]Row, error) {
	var rows []Row
	for _, n := range descriptionCounts {
		tools, err := githubapi.ToolsN(n)
		if err != nil {
			return nil, err
		}
		native, err := nativeListing(tools, outputs)
		if err != nil {
			return nil, err
		}
		prompt := sdkgen.PromptWith(githubSet(tools, outputs), sdkgen.PromptOptions{})
		got := tokens.Count(string(prompt))
		r := Row{Figure: fmt.Sprintf("run_code's description, %s GitHub tools", groupThousands(float64(n))),
			Value: float64(got), Floor: float64(tokens.Count(string(native))), FloorName: "native tools/list", Unit: "tokens",
			Target: "≤ 2,000 tokens"}.withRatio().judge(got <= sdkgen.DefaultPromptBudget)
		if !outputs {
			r.Figure = fmt.Sprintf("  same, no output schemas, %s tools", groupThousands(float64(n)))
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// nativeListing is tools as an MCP tools/list result's tools array.
func nativeListing(tools []githubapi.Tool, outputs bool) ([]byte, error) {
	type def struct {
		Name         string          `json:"name"`
		Description  string          `json:"description,omitempty"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	}
	defs := make([]def, len(tools))
	for i, t := range tools {
		defs[i] = def{Name: t.Name, Description: t.Description, InputSchema: t.Parameters}
		if outputs && len(t.Output) > 0 {
			defs[i].OutputSchema = t.Output
		}
	}
	return json.Marshal(defs)
}

// mcpStartRows time `codemode mcp` (mode code, memory store, the githubmcp
// peer serving the 2,500 tools with output schemas as its one upstream)
// from spawning to the answer of its first tools/list, beside the peer
// spawned alone answering its own; then codemode's resident memory after
// that list, beside the peer's. The medians of three spawns each,
// alternating. A failure to
// build or to answer is a skipped line, so that the other figures stand.
func mcpStartRows(e *env, tools []githubapi.Tool) []Row {
	const figure = "codemode mcp, spawn → first tools/list, 2,500 GitHub tools"
	codemode, peer, cache, cfg, err := buildCatalogPeers(e, tools)
	if err != nil {
		return []Row{skipped(figure, err.Error())}
	}
	peerArgs := []string{peer, "-n", strconv.Itoa(len(tools)), "-cache", cache}
	var mine, floor, rss, peerRSS []float64
	for range 3 {
		s, kb, err := firstList(e.ctx, []string{codemode, "mcp", "--config", cfg})
		if err != nil {
			return []Row{skipped(figure, "codemode mcp: "+err.Error())}
		}
		mine, rss = append(mine, s), append(rss, kb/1024)
		s, kb, err = firstList(e.ctx, peerArgs)
		if err != nil {
			return []Row{skipped(figure, "the githubmcp peer: "+err.Error())}
		}
		floor, peerRSS = append(floor, s), append(peerRSS, kb/1024)
	}
	start := Row{Figure: figure, Value: median(mine), Floor: median(floor), FloorName: "the peer alone", Unit: "s",
		Target: "≤ 5 s"}.withRatio().judge(median(mine) <= 5)
	mem := Row{Figure: "  same, codemode's RSS after that list", Value: median(rss), Floor: median(peerRSS), FloorName: "the peer's",
		Unit: "MB", Target: "< 358 MB"}.withRatio().judge(median(rss) < 358)
	return []Row{start, mem}
}

// buildCatalogPeers builds codemode and the githubmcp peer into the
// harness's directory, writes the peer's cache (so that no spawn converts
// the description: a real server holds its tools ready) and a configuration
// with the peer as the one upstream.
func buildCatalogPeers(e *env, tools []githubapi.Tool) (codemode, peer, cache, cfg string, err error) {
	root := filepath.Join(peerDir(), "..", "..", "..")
	codemode, peer = filepath.Join(e.dir, "codemode"), filepath.Join(e.dir, "githubmcp")
	for _, b := range [][2]string{{codemode, "./cmd/codemode"}, {peer, "./internal/githubapi/githubmcp"}} {
		cmd := exec.CommandContext(e.ctx, "go", "build", "-o", b[0], b[1])
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", "", "", fmt.Errorf("go build %s: %w: %s", b[1], err, bytes.TrimSpace(out))
		}
	}
	cached, err := json.Marshal(tools)
	if err != nil {
		return "", "", "", "", err
	}
	cache = filepath.Join(e.dir, "github-tools.json")
	if err := os.WriteFile(cache, cached, 0o644); err != nil {
		return "", "", "", "", err
	}
	cfg = filepath.Join(e.dir, "catalog.yaml")
	yaml := fmt.Sprintf("mode: code\nstore: memory://\nmcp_servers:\n  - {name: github, command: [%q, -n, %q, -cache, %q]}\n",
		peer, strconv.Itoa(len(tools)), cache)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		return "", "", "", "", err
	}
	return codemode, peer, cache, cfg, nil
}

// firstList spawns an MCP server on stdio, connects with the go-sdk client
// and lists its tools once: the seconds from spawning to the list's answer,
// and the server's VmRSS in kB just after it. A server that lists no tools,
// or takes over a minute, is an error.
func firstList(ctx context.Context, argv []string) (seconds, rssKB float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "benchtable", Version: "1"}, nil)
	start := time.Now()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("connect: %w: %s", err, lastLine(stderr.String()))
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	seconds = time.Since(start).Seconds()
	if err != nil {
		return 0, 0, fmt.Errorf("tools/list: %w: %s", err, lastLine(stderr.String()))
	}
	if len(res.Tools) == 0 {
		return 0, 0, errors.New("tools/list: no tools")
	}
	rssKB, err = vmRSS(cmd.Process.Pid)
	return seconds, rssKB, err
}

// vmRSS is a process's resident set in kB (/proc/PID/status).
func vmRSS(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// searchRow is one $search over the 2,500-tool catalog, beside one BM25
// ranking of it: each task's query timed alone (the median of the rounds),
// then the median over the tasks.
func searchRow(e *env, tools []githubapi.Tool, tasks []githubapi.Task) Row {
	search, bm25 := searchRank(catalog.New(githubSet(tools, true), nil)), githubapi.BM25(tools)
	timed := func(rank func(string, int) []string, q string) float64 {
		start := time.Now()
		rank(q, 5)
		return float64(time.Since(start).Nanoseconds()) / 1e3
	}
	var mine, floor []float64
	for _, t := range tasks {
		var m, f []float64
		for range e.o.rounds {
			m, f = append(m, timed(search, t.Task)), append(f, timed(bm25, t.Task))
		}
		mine, floor = append(mine, median(m)), append(floor, median(f))
	}
	return Row{Figure: fmt.Sprintf("one $search, 2,500 tools (median of %d tasks' queries)", len(tasks)), Value: median(mine),
		Floor: median(floor), FloorName: "BM25", Unit: "µs"}.withRatio()
}
