package sdkgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/sdkgen/tokens"
)

// TestPromptStatesTheContract pins each rule the prompt must teach (issue 14 item 7, issue 13's
// platform line): a rule dropped from the text fails here, not only in a golden diff.
func TestPromptStatesTheContract(t *testing.T) {
	prompt := string(Prompt(NewSet(demoTools())))
	for _, want := range []string{
		"run_code({code, description?})",                                    // description is optional
		"body of an async function, JS or TS", "top-level `await`/`return`", // the program's shape
		"`await tools.name(args)` returns the tool's value (data, not text)", // a call's value
		"`tools[\"a.b\"](args)`",                                                // exotic names
		"promise settles when it ends", "`Promise.all`", "`Promise.race` works", // settlement
		"still running at return are cancelled and reported: await them",        // abandoned calls
		"as `JSON.stringify` would", "Date → ISO string", "`undefined` dropped", // the JSON rules
		"NaN/Infinity → `null` in results", "BigInt, Map, Set, functions and cycles are refused",
		"`ToolCallError` (`name`, `toolName`, `code`, `message`)", // failures
		"`CODE_RUN_FAILED`, kind runtime (or syntax, timeout, limit, cancelled)",
		"Only logs and the returned JSON come back",
		"Limits: 30 s, 1000 calls, 10 at once, 1 MiB of logs, 4 MiB of result.", // the limits
		"- Runtime: " + DefaultPlatform + "\n",
		"```js\n", "Promise.all([tools.x(", "catch (e)", // the example
		"```ts\ndeclare const tools: {\n/** Replaces every occurrence",
		"\n/** Adds two numbers and returns their sum. */ math_add(args: { /** The first addend. */ a: number; /** The second addend. */ b: number }): Promise<{ /** a + b */ sum: number }>;\n",
		"files_read(args: { path: string }): Promise<{ content: string; /** Number of lines. */ lines: number; path: string }>;", // restated docs and result @integer dropped
		"/** How long to wait, in milliseconds. @integer @minimum 0 @maximum 60000 */ ms: number",                                // argument tags kept
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	for _, noise := range []string{"version", "Generated", "do not edit", "ToolArgsMap", "ToolOutputMap"} {
		if strings.Contains(prompt, noise) {
			t.Errorf("the prompt carries %q", noise)
		}
	}
}

func TestPromptWithOptions(t *testing.T) {
	set := NewSet(demoTools())
	got := string(PromptWith(set, PromptOptions{
		Timeout: 90 * time.Second, MaxCalls: 50, MaxParallel: 4, MaxLogBytes: 64 << 10,
		MaxResultBytes: 1000, Platform: "ES5 only.\nNothing else.",
	}))
	for _, want := range []string{
		"Limits: 90 s, 50 calls, 4 at once, 64 KiB of logs, 1000 bytes of result.",
		"- Runtime: ES5 only. Nothing else.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("PromptWith lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, DefaultPlatform) {
		t.Errorf("PromptWith states the default platform despite Platform")
	}
	// Zero and negative values are the defaults, so Prompt is PromptWith of the zero value.
	defaults := string(PromptWith(set, PromptOptions{Timeout: -1, MaxCalls: -1, MaxParallel: 0, MaxLogBytes: -5}))
	if defaults != string(Prompt(set)) {
		t.Errorf("PromptWith of non-positive options differs from Prompt")
	}
	if d := formatDuration(1500 * time.Millisecond); d != "1.5s" {
		t.Errorf("formatDuration(1.5s) = %q", d)
	}
}

// TestPromptFenceHoldsBackticks: no backtick run in a description can close the declarations'
// fence early.
func TestPromptFenceHoldsBackticks(t *testing.T) {
	prompt := Prompt(NewSet(hostileDescriptionTools()))
	decls := promptDeclarations(t, prompt)
	if !strings.Contains(string(decls), "backticks(") {
		t.Fatalf("the declarations block was cut short:\n%s", decls)
	}
	if !strings.Contains(string(prompt), "\n``````ts\n") {
		t.Errorf("the fence is not longer than the longest backtick run (5)")
	}
}

// Past the budget the prompt is a catalog: groups with counts, the pinned tools whole first,
// the discovery members, and never more than the budget; the whole SDK otherwise.
func TestPromptCatalog(t *testing.T) {
	var tools []Tool
	for i := range 300 {
		group := []string{"alpha", "beta", "gamma"}[i%3]
		tools = append(tools, Tool{
			Name:        fmt.Sprintf("%s_thing_%03d", group, i),
			Description: fmt.Sprintf("Does %s thing %d. More words follow here.", group, i),
			Parameters:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Which one."}},"required":["id"]}`),
		})
	}
	set := NewSet(tools)
	if IsCatalog(PromptWith(set, PromptOptions{Budget: -1})) {
		t.Fatal("no budget: the whole SDK")
	}
	prompt := string(PromptWith(set, PromptOptions{Pinned: []string{"gamma_thing_299", "nope"}}))
	if n := tokens.Count(prompt); n > DefaultPromptBudget || !IsCatalog([]byte(prompt)) {
		t.Fatalf("%d tokens, catalog %v", n, IsCatalog([]byte(prompt)))
	}
	decls := prompt[strings.LastIndex(prompt, "declare const tools: {\n")+len("declare const tools: {\n"):]
	if !strings.HasPrefix(decls, "/** Does gamma thing 299. */ gamma_thing_299(args: {") {
		t.Errorf("the pinned tool is not first:\n%s", decls)
	}
	for _, want := range []string{"300 tools, too many to list here", "- alpha (100)", "- beta (100)", "- gamma (100)", "$search(query: string", "$describe(names: string | string[])"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the catalog lacks %q:\n%s", want, prompt)
		}
	}
	if small := PromptWith(NewSet(tools[:3]), PromptOptions{}); IsCatalog(small) {
		t.Errorf("three tools make a catalog")
	}
}
