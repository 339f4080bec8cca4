package catalog_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/codemode/codemode/catalog"
	"github.com/codemode/codemode/internal/githubapi"
	"github.com/codemode/codemode/sdkgen"
	"github.com/codemode/codemode/sdkgen/tokens"
)

// githubTools returns the tools of GitHub's REST description and the same as a set: with n
// zero, all of api.github.com's (1,223 operations); else the first n of githubapi.ToolsN (past
// 1,223 with the Enterprise servers' under prefixes).
func githubTools(t testing.TB, n int) ([]githubapi.Tool, *sdkgen.Set) {
	t.Helper()
	tools, err := githubapi.Tools(0)
	if n > 0 {
		tools, err = githubapi.ToolsN(n)
	}
	if errors.Is(err, githubapi.ErrMissing) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	in := make([]sdkgen.Tool, len(tools))
	for i, tl := range tools {
		in[i] = sdkgen.Tool{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters, Output: tl.Output}
	}
	return tools, sdkgen.NewSet(in)
}

// rank adapts an index to githubapi.Recall.
func rank(ix *catalog.Index) func(string, int) []string {
	return func(q string, k int) []string {
		res, err := ix.Search(catalog.Query{Text: q, Limit: k})
		if err != nil {
			return nil
		}
		return res.Names()
	}
}

// $search finds the tool a labeled task needs in its top five for at least 90% of the tasks over
// GitHub's whole REST API (issue 26), ahead of plain BM25 on the same tasks; on the 2,500-tool
// catalog with the Enterprise servers' near-duplicates, at least as often as when this test
// was last changed. BENCHMARKS.md keeps the figures and what is still missed.
func TestFindability(t *testing.T) {
	tasks, err := githubapi.LoadTasks()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n     int
		tasks []githubapi.Task
		floor float64 // recall@5 at least
	}{
		{0, tasks, 0.90}, // issue 26's target
		{2500, githubapi.Qualify(tasks, "github.", "ghes.", "ghec."), 0.85},
	} {
		tools, set := githubTools(t, tc.n)
		search := rank(catalog.New(set, nil))
		at1, at5, misses := githubapi.Recall(tc.tasks, search)
		b1, b5, _ := githubapi.Recall(tc.tasks, githubapi.BM25(tools))
		t.Logf("%d tools, %d tasks: $search recall@1 %.3f @5 %.3f; BM25 @1 %.3f @5 %.3f", set.Len(), len(tc.tasks), at1, at5, b1, b5)
		// The tasks split in two halves (even and odd places), so that a change to the
		// ranking tried against one half is judged on the other, which it was not fitted to.
		for half, name := range []string{"even", "odd"} {
			part := halfOf(tc.tasks, half)
			h1, h5, _ := githubapi.Recall(part, search)
			hb1, hb5, _ := githubapi.Recall(part, githubapi.BM25(tools))
			t.Logf("  %s half (%d tasks): $search @1 %.3f @5 %.3f; BM25 @1 %.3f @5 %.3f", name, len(part), h1, h5, hb1, hb5)
		}
		for _, m := range misses {
			at := slices.IndexFunc(tc.tasks, func(x githubapi.Task) bool { return x.Task == m.Task })
			t.Logf("  missed #%d %q (want %s): %s", at, m.Task, strings.Join(m.Want[:min(2, len(m.Want))], ", "), strings.Join(search(m.Task, 3), ", "))
		}
		if at5 < tc.floor || at5 <= b5 || at1 <= b1 {
			t.Errorf("%d tools: recall@5 %.3f (BM25 %.3f), recall@1 %.3f (BM25 %.3f): want @5 ≥ %.2f and both ahead of BM25", set.Len(), at5, b5, at1, b1, tc.floor)
		}
	}
}

// halfOf returns the tasks at even (half 0) or odd (half 1) places.
func halfOf(tasks []githubapi.Task, half int) []githubapi.Task {
	var out []githubapi.Task
	for i := half; i < len(tasks); i += 2 {
		out = append(out, tasks[i])
	}
	return out
}

// One search of the 2,500-tool catalog: well under 5 ms is the aim.
func BenchmarkSearch(b *testing.B) {
	tasks, err := githubapi.LoadTasks()
	if err != nil {
		b.Fatal(err)
	}
	_, set := githubTools(b, 2500)
	ix := catalog.New(set, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := ix.Search(catalog.Query{Text: tasks[i%len(tasks)].Task, Limit: 5}); err != nil {
			b.Fatal(err)
		}
	}
}

// run_code's description stays within the budget however large the catalog, and a catalog
// shows groups, counts and the discovery members.
func TestGitHubCatalogPrompt(t *testing.T) {
	for _, n := range []int{100, 1000, 2500} {
		tools, set := githubTools(t, n)
		prompt := sdkgen.PromptWith(set, sdkgen.PromptOptions{})
		// Byte-stable: the same tools in another order give the same text (prompt caches hold).
		reversed := make([]sdkgen.Tool, len(tools))
		for i, tl := range tools {
			reversed[len(tools)-1-i] = sdkgen.Tool{Name: tl.Name, Description: tl.Description, Parameters: tl.Parameters, Output: tl.Output}
		}
		if again := sdkgen.PromptWith(sdkgen.NewSet(reversed), sdkgen.PromptOptions{}); string(again) != string(prompt) {
			t.Errorf("%d tools: the catalog depends on the order of the tools", n)
		}
		got := tokens.Count(string(prompt))
		t.Logf("%d tools: %d tokens, %d bytes", set.Len(), got, len(prompt))
		if got > sdkgen.DefaultPromptBudget {
			t.Errorf("%d tools: %d tokens, over the %d budget", n, got, sdkgen.DefaultPromptBudget)
		}
		for _, want := range []string{"tools, too many to list here", "$search(query: string", "$describe(names:", "Groups ("} {
			if !strings.Contains(string(prompt), want) {
				t.Errorf("%d tools: the catalog lacks %q", n, want)
			}
		}
	}
}
