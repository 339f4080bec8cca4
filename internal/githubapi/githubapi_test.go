package githubapi

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// tools loads the api.github.com catalog or skips when the peer is missing.
// Under CI (CI set) it fails instead, so that a broken install step cannot
// pass as skipped tests.
func tools(t *testing.T) []Tool {
	t.Helper()
	all, err := Tools(0)
	if errors.Is(err, ErrMissing) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return all
}

var mcpName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func TestTools(t *testing.T) {
	all := tools(t)
	if len(all) < 1000 {
		t.Fatalf("api.github.com has %d operations, want more than 1,000", len(all))
	}
	t.Logf("api.github.com: %d operations", len(all))
	if !slices.IsSortedFunc(all, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("tools are not sorted by name")
	}
	for i, tool := range all {
		if !mcpName.MatchString(tool.Name) || (i > 0 && all[i-1].Name == tool.Name) {
			t.Errorf("name %q is invalid or repeated", tool.Name)
		}
		if tool.Description == "" || !json.Valid(tool.Parameters) {
			t.Errorf("%s: empty description or invalid parameters", tool.Name)
		}
	}
	first, err := Tools(10)
	if err != nil || !slices.EqualFunc(first, all[:10], func(a, b Tool) bool { return a.Name == b.Name }) {
		t.Errorf("Tools(10) = %d tools, %v; want the first 10 of Tools(0)", len(first), err)
	}
}

func TestToolsN(t *testing.T) {
	com := tools(t)
	small, err := ToolsN(len(com))
	if err != nil || len(small) != len(com) || small[0].Name != com[0].Name {
		t.Fatalf("ToolsN(%d) = %d tools, %v; want Tools(0)", len(com), len(small), err)
	}
	big, err := ToolsN(2500)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]int{}
	seen := map[string]bool{}
	for _, tool := range big {
		group, _, _ := strings.Cut(tool.Name, ".")
		groups[group]++
		if !mcpName.MatchString(tool.Name) || seen[tool.Name] {
			t.Errorf("name %q is invalid or repeated", tool.Name)
		}
		seen[tool.Name] = true
	}
	t.Logf("ToolsN(2500): %v", groups)
	if len(big) != 2500 || groups["github"] != len(com) || groups["ghes"] == 0 {
		t.Errorf("ToolsN(2500) = %d tools in groups %v", len(big), groups)
	}
	if _, err := ToolsN(1 << 20); err == nil {
		t.Error("ToolsN(1<<20) succeeded")
	}
}

// Every wanted name is a tool of the catalog, and every task is phrased
// apart from its operation's summary.
func TestTasksWantExistingTools(t *testing.T) {
	all := tools(t)
	tasks, err := LoadTasks()
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 60 {
		t.Errorf("%d tasks, want at least 60", len(tasks))
	}
	byName := map[string]Tool{}
	for _, tool := range all {
		byName[tool.Name] = tool
	}
	for _, task := range tasks {
		for _, w := range task.Want {
			tool, ok := byName[w]
			if !ok {
				t.Errorf("task %q wants %q, which api.github.com does not have", task.Task, w)
				continue
			}
			summary, _, _ := strings.Cut(tool.Description, "\n")
			if strings.EqualFold(strings.TrimSuffix(summary, "."), task.Task) {
				t.Errorf("task %q copies the summary of %s", task.Task, w)
			}
		}
	}
}

func TestRecallOracle(t *testing.T) {
	tasks := []Task{{"a", []string{"x"}}, {"b", []string{"y", "z"}}, {"c", []string{"w"}}}
	oracle := func(q string, k int) []string {
		i := slices.IndexFunc(tasks, func(t Task) bool { return t.Task == q })
		return tasks[i].Want[len(tasks[i].Want)-1:]
	}
	if at1, at5, misses := Recall(tasks, oracle); at1 != 1 || at5 != 1 || len(misses) != 0 {
		t.Errorf("oracle: recall@1 %v, @5 %v, misses %v; want 1, 1, none", at1, at5, misses)
	}
	second := func(q string, k int) []string { return []string{"nothing", "x", "y", "w"}[:min(k, 4)] }
	if at1, at5, misses := Recall(tasks, second); at1 != 0 || at5 != 1 || len(misses) != 0 {
		t.Errorf("second place: recall@1 %v, @5 %v, misses %v; want 0, 1, none", at1, at5, misses)
	}
	sixth := func(q string, k int) []string { return []string{"1", "2", "3", "4", "5", "x", "y", "z", "w"} }
	if at1, at5, misses := Recall(tasks, sixth); at1 != 0 || at5 != 0 || len(misses) != 3 {
		t.Errorf("past five: recall@1 %v, @5 %v, misses %d; want 0, 0, 3", at1, at5, len(misses))
	}
	qualified := Qualify(tasks[1:2], "github.", "ghes.")
	if want := []string{"github.y", "github.z", "ghes.y", "ghes.z"}; !slices.Equal(qualified[0].Want, want) {
		t.Errorf("Qualify = %v, want %v", qualified[0].Want, want)
	}
}

func TestBM25(t *testing.T) {
	catalog := []Tool{
		{Name: "pulls_list", Description: "List pull requests."},
		{Name: "issues_list", Description: "List issues of a repository."},
		{Name: "gists_create", Description: "Create a gist."},
	}
	rank := BM25(catalog)
	if got := rank("create a new GIST", 5); len(got) == 0 || got[0] != "gists_create" {
		t.Errorf("rank(create a new GIST) = %v", got)
	}
	if got := rank("pull requests", 1); !slices.Equal(got, []string{"pulls_list"}) {
		t.Errorf("rank(pull requests, 1) = %v", got)
	}
	if got := rank("zebra", 5); len(got) != 0 {
		t.Errorf("rank(zebra) = %v, want nothing", got)
	}
}

// TestBM25Floor reports the floor: plain BM25's recall on the labeled tasks
// over the whole api.github.com catalog, and over ToolsN(2500).
func TestBM25Floor(t *testing.T) {
	all := tools(t)
	tasks, err := LoadTasks()
	if err != nil {
		t.Fatal(err)
	}
	at1, at5, misses := Recall(tasks, BM25(all))
	t.Logf("BM25 over %d tools, %d tasks: recall@1 %.3f, recall@5 %.3f", len(all), len(tasks), at1, at5)
	for _, m := range misses {
		t.Logf("  miss: %q (want %v; BM25 says %v)", m.Task, m.Want, BM25(all)(m.Task, 3))
	}
	if at5 == 0 {
		t.Error("BM25 finds nothing: the catalog or the tasks are broken")
	}
	big, err := ToolsN(2500)
	if err != nil {
		t.Fatal(err)
	}
	at1, at5, _ = Recall(Qualify(tasks, "github.", "ghes."), BM25(big))
	t.Logf("BM25 over ToolsN(2500), either server's copy a hit: recall@1 %.3f, recall@5 %.3f", at1, at5)
}
