package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/codemode/codemode/sdkgen"
)

func tool(name, desc, params string) sdkgen.Tool {
	return sdkgen.Tool{Name: name, Description: desc, Parameters: json.RawMessage(params)}
}

// testSet is a small catalog with near neighbours, so that ranking has something to get wrong.
func testSet() *sdkgen.Set {
	return sdkgen.NewSet([]sdkgen.Tool{
		tool("math_add", "Adds two numbers and returns their sum.", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`),
		tool("math_sub", "Subtracts b from a.", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`),
		tool("files_read", "Reads a file of the workspace.", `{"type":"object","properties":{"path":{"type":"string","description":"Where the file is."}}}`),
		tool("files_delete", "Deletes a file from the workspace.", `{"type":"object","properties":{"path":{"type":"string"}}}`),
		tool("files_write", "Writes a file, creating it when missing.", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`),
		tool("github.pulls_list", "List pull requests. Lists pull requests in a repository, open by default.", `{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"state":{"type":"string","enum":["open","closed","all"]}}}`),
		tool("github.issues_addLabels", "Add labels to an issue.", `{"type":"object","properties":{"issue_number":{"type":"integer"},"labels":{"type":"array"}}}`),
		tool("github.activity_listStargazersForRepo", "List stargazers. Lists the people that have starred the repository.", `{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"}}}`),
		tool("github.repos_getLatestRelease", "Get the latest release. View the latest published full release for the repository.", `{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"}}}`),
	})
}

func TestSearchRanks(t *testing.T) {
	ix := New(testSet(), nil)
	for _, tc := range []struct{ query, want string }{
		{"add two numbers", "math_add"},
		{"subtract", "math_sub"},
		{"remove a file", "files_delete"},                                  // through a synonym
		{"who starred this repo", "github.activity_listStargazersForRepo"}, // stems and repo/repository
		{"open PRs of octocat/hello", "github.pulls_list"},
		{"label an issue", "github.issues_addLabels"},
		{"newest release", "github.repos_getLatestRelease"},
		{"github.pulls_list", "github.pulls_list"}, // a name spelled out whole
		{"WHERE", "files_read"},                    // parameter descriptions count, case does not
	} {
		res, err := ix.Search(Query{Text: tc.query, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) == 0 || res.Tools[0].Name != tc.want {
			t.Errorf("%q: got %v, want %s first", tc.query, res.Names(), tc.want)
		}
		if res.Total != 9 || res.Matched < len(res.Tools) {
			t.Errorf("%q: total %d matched %d", tc.query, res.Total, res.Matched)
		}
	}
}

func TestSearchAnswers(t *testing.T) {
	ix := New(testSet(), func(name string) string {
		if name == "files_delete" {
			return "denied here: read-only"
		}
		return ""
	})
	res, _ := ix.Search(Query{Text: "delete file", Limit: 1})
	want := Hit{Name: "files_delete", Summary: "Deletes a file from the workspace. [denied here: read-only]", Signature: "files_delete(args?: { path?: string; [key: string]: unknown }): Promise<unknown>"}
	if len(res.Tools) != 1 || !reflect.DeepEqual(res.Tools[0], want) {
		t.Fatalf("got %+v\nwant %+v", res.Tools, want)
	}

	// No words: the tools in name order, of the group when one is given.
	res, _ = ix.Search(Query{Group: "files"})
	if got := res.Names(); !slices.Equal(got, []string{"files_delete", "files_read", "files_write"}) || res.Matched != 3 || res.Total != 9 {
		t.Fatalf("browse: %v matched %d", got, res.Matched)
	}
	res, _ = ix.Search(Query{Text: "list", Group: "github.pulls"})
	if got := res.Names(); !slices.Equal(got, []string{"github.pulls_list"}) {
		t.Fatalf("group: %v", got)
	}
	// Words that match nothing: nothing, with the catalog's size.
	res, _ = ix.Search(Query{Text: "xylophone"})
	if res.Matched != 0 || len(res.Tools) != 0 || res.Tools == nil || res.Total != 9 {
		t.Fatalf("no match: %+v", res)
	}
}

func TestSearchBounds(t *testing.T) {
	var tools []sdkgen.Tool
	for i := range 120 {
		tools = append(tools, tool(fmt.Sprintf("t_%03d", i), "Does a thing.", ""))
	}
	ix := New(sdkgen.NewSet(tools), nil)
	for _, tc := range []struct {
		q    Query
		want int
	}{
		{Query{Text: "thing"}, DefaultLimit},
		{Query{Text: "thing", Limit: 1e9}, MaxLimit},
		{Query{Text: "thing", Limit: 1}, 1},
		{Query{Text: strings.Repeat("thing ", 100000)}, DefaultLimit}, // huge: its first KiB counts
	} {
		res, err := ix.Search(tc.q)
		if err != nil || len(res.Tools) != tc.want || res.Matched != 120 {
			t.Errorf("%.40v: %d tools, matched %d, err %v; want %d", tc.q, len(res.Tools), res.Matched, err, tc.want)
		}
	}
	for _, q := range []Query{{Text: "x", Limit: -1}, {Text: "x", Group: "nope"}, {Group: "t_0"}} {
		if _, err := ix.Search(q); !errors.Is(err, ErrQuery) {
			t.Errorf("%+v: err %v, want ErrQuery", q, err)
		}
	}
	if got := len(ix.queryWords(strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega one two three four five six seven eight nine ten ", 3))); got != maxQueryTerms {
		t.Errorf("%d query terms", got)
	}
}

func TestSearchIsDeterministic(t *testing.T) {
	ix := New(testSet(), nil)
	first, _ := ix.Search(Query{Text: "repository owner"})
	for range 20 {
		again, _ := New(testSet(), nil).Search(Query{Text: "repository owner"})
		if !slices.Equal(first.Names(), again.Names()) {
			t.Fatalf("%v then %v", first.Names(), again.Names())
		}
	}
}

func TestDescribe(t *testing.T) {
	ix := New(testSet(), nil)
	text, err := ix.Describe([]string{"math_add", "files_read", "math_add"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"declare const tools: {\n", "  /** Adds two numbers and returns their sum. */\n  math_add(args?: {", "    /** Where the file is. */\n    path?: string;"} {
		if !strings.Contains(text, want) {
			t.Errorf("describe lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "math_add") > strings.Index(text, "files_read") || strings.Count(text, "math_add(") != 1 {
		t.Errorf("not in the order given, once each:\n%s", text)
	}
	_, err = ix.Describe([]string{"math_ad"})
	if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "math_add") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := ix.Describe(nil); !errors.Is(err, ErrQuery) {
		t.Errorf("no names: %v", err)
	}
	if _, err := ix.Describe(make([]string, MaxDescribe+1)); !errors.Is(err, ErrQuery) {
		t.Errorf("too many names: %v", err)
	}
}

func TestAnalyze(t *testing.T) {
	for in, want := range map[string]string{
		"listStargazersForRepo":  "list stargaz repo",
		"HTTPServer_v2Beta":      "http server v2 beta",
		"Who starred the repos?": "star repo",
		"issues.add-labels":      "issu add label",
		"open PRs, IDs":          "open pr id",
		"ÜberCafé naïve":         "über café naïve",
	} {
		if got := strings.Join(analyze(in), " "); got != want {
			t.Errorf("analyze(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSearch(f *testing.F) {
	ix := New(testSet(), nil)
	f.Add("list open pull requests", 5, "")
	f.Add("", 0, "files")
	f.Add("\xff\x00 fooBAR__baz", 1000, "github")
	f.Fuzz(func(t *testing.T, text string, limit int, group string) {
		res, err := ix.Search(Query{Text: text, Limit: limit, Group: group})
		if err != nil {
			if !errors.Is(err, ErrQuery) {
				t.Fatalf("error %v is not ErrQuery", err)
			}
			return
		}
		if res.Total != 9 || len(res.Tools) > MaxLimit || len(res.Tools) > res.Matched || res.Matched > res.Total {
			t.Fatalf("%+v", res)
		}
		if _, err := ix.Describe([]string{text}); err != nil && !errors.Is(err, ErrUnknown) {
			t.Fatalf("describe: %v", err)
		}
	})
}

func TestIntent(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  action
	}{
		{"create a team called platform", actCreate},
		{"who starred this repository", actRead},
		{"list open PRs", actList},
		{"open PRs of octocat/hello", noAction}, // "open" is as often a state
		{"remove the bug label", actDelete},
		{"rename the default branch", actUpdate},
	} {
		if got := queryAction(tc.query); got != tc.want {
			t.Errorf("queryAction(%q) = %d, want %d", tc.query, got, tc.want)
		}
	}
	if got := toolAction(analyze("repos_create-fork"), analyze("Create a fork.")); got != actCreate {
		t.Errorf("toolAction = %d", got)
	}
	for _, tc := range []struct {
		q, t action
		want float64
	}{{actCreate, actCreate, 1}, {actRead, actList, 0.5}, {actCreate, actUpdate, 0.5}, {actDelete, actList, -1}, {noAction, actList, 0}} {
		if got := agreement(tc.q, tc.t); got != tc.want {
			t.Errorf("agreement(%d, %d) = %v, want %v", tc.q, tc.t, got, tc.want)
		}
	}
}

// A hit's signature names the set's shared types instead of writing them out (and cutting
// them off), as $describe declares them.
func TestHitNamesSharedTypes(t *testing.T) {
	block := `{"type":"object","title":"Block","properties":{"kind":{"enum":["text","image","audio","resource"]},"text":{"type":"string"},"data":{"type":"string"},"mimeType":{"type":"string"},"uri":{"type":"string"},"annotations":{"type":"object","properties":{"priority":{"type":"number"}}}},"required":["kind"]}`
	out := json.RawMessage(`{"type":"array","items":` + block + `}`)
	set := sdkgen.NewSet([]sdkgen.Tool{
		{Name: "notes_read", Description: "Reads a note.", Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`), Output: out},
		{Name: "notes_find", Description: "Finds notes.", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`), Output: out},
	})
	ix := New(set, nil)
	res, err := ix.Search(Query{Text: "read a note", Limit: 1})
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("search: %v %+v", err, res)
	}
	if want := "notes_read(args?: { id?: string; [key: string]: unknown }): Promise<Block[]>"; res.Tools[0].Signature != want {
		t.Errorf("signature %q, want %q", res.Tools[0].Signature, want)
	}
	text, err := ix.Describe([]string{"notes_read"})
	if err != nil || !strings.HasPrefix(text, "type Block = {\n") || !strings.Contains(text, "Promise<Block[]>") {
		t.Errorf("describe does not declare Block first: %v\n%s", err, text)
	}
}

// A tool whose description says it is deprecated ranks below its successor.
func TestDeprecatedRanksLower(t *testing.T) {
	ix := New(sdkgen.NewSet([]sdkgen.Tool{
		tool("teams_add_member_legacy", "Deprecated: Add team member.", ""),
		tool("teams_add_membership", "Add team membership for a user.", ""),
	}), nil)
	res, _ := ix.Search(Query{Text: "add a member to the team"})
	if got := res.Names(); len(got) != 2 || got[0] != "teams_add_membership" {
		t.Fatalf("got %v", got)
	}
	for summary, want := range map[string]bool{
		"Deprecated: Add team member.": true, "[DEPRECATED] Lists repos.": true, "**Deprecated.** Old.": true,
		"Lists teams (deprecated).": true, "Lists deprecated packages.": false, "Add a label.": false,
	} {
		if deprecated(summary) != want {
			t.Errorf("deprecated(%q) = %v", summary, !want)
		}
	}
}

// TestSDKStatesTheSearchBounds: the SDK text that tells a model how to call
// tools.$search states this package's bounds on limit (sdkgen, which this
// package imports, cannot refer to them).
func TestSDKStatesTheSearchBounds(t *testing.T) {
	want := fmt.Sprintf("limit 1–%d, default %d", MaxLimit, DefaultLimit)
	if js := string(sdkgen.JavaScript(sdkgen.NewSet(nil))); !strings.Contains(js, want) {
		t.Errorf("the SDK's $search doc does not say %q:\n%s", want, js)
	}
}
