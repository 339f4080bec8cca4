package sdkgen

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestNewSetIsIndependentOfInputOrder(t *testing.T) {
	tools := append(demoTools(), exoticNameTools()...)
	want := NewSet(tools)
	wantTS, wantJS, wantPrompt := TypeScript(want), JavaScript(want), Prompt(want)

	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		shuffled := slices.Clone(tools)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		got := NewSet(shuffled)
		if got.Version() != want.Version() {
			t.Fatalf("permutation %d: version %s, want %s", i, got.Version(), want.Version())
		}
		if !bytes.Equal(TypeScript(got), wantTS) {
			t.Fatalf("permutation %d: TypeScript output differs", i)
		}
		if !bytes.Equal(JavaScript(got), wantJS) {
			t.Fatalf("permutation %d: JavaScript output differs", i)
		}
		if !bytes.Equal(Prompt(got), wantPrompt) {
			t.Fatalf("permutation %d: Prompt output differs", i)
		}
	}

	names := toolNames(want)
	if !slices.IsSorted(names) {
		t.Errorf("tools not in byte order: %q", names)
	}
	if len(names) != len(tools) {
		t.Errorf("got %d tools, want %d", len(names), len(tools))
	}
}

func TestNewSetDropsRunCode(t *testing.T) {
	runCode := Tool{
		Name:        RunCodeName,
		Description: "Runs a program.",
		Parameters:  raw(`{"type":"object","properties":{"code":{"type":"string"}}}`),
	}
	without := NewSet(demoTools())
	with := NewSet(append(demoTools(), runCode))

	if slices.Contains(toolNames(with), RunCodeName) {
		t.Fatalf("run_code is in Tools(): %q", toolNames(with))
	}
	if with.Version() != without.Version() {
		t.Errorf("run_code changed the version")
	}
	ts := string(TypeScript(with))
	for _, leak := range []string{"run_code:", "run_code(", `"run_code"`} {
		if strings.Contains(ts, leak) {
			t.Errorf("TypeScript declares run_code (%q found)", leak)
		}
	}
	if js, prompt := string(JavaScript(with)), string(Prompt(with)); strings.Contains(js, "run_code(") || strings.Contains(prompt, "run_code(args") {
		t.Errorf("JavaScript or Prompt declares run_code")
	}

	only := NewSet([]Tool{runCode})
	if len(only.Tools()) != 0 || only.Version() != NewSet(nil).Version() {
		t.Errorf("a set of only run_code is not the empty set")
	}
}

func TestVersion(t *testing.T) {
	base := []Tool{
		{Name: "a", Description: "Tool a.", Parameters: raw(`{"type":"object","properties":{"x":{"type":"string","minLength":1}},"required":["x"]}`)},
		{Name: "b", Description: "Tool b.", Output: raw(`{"type":"number"}`)},
	}
	modify := func(f func(ts []Tool) []Tool) []Tool {
		ts := slices.Clone(base)
		return f(ts)
	}
	baseSet := NewSet(base)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(baseSet.Version()) {
		t.Fatalf("version %q is not 32 hex digits", baseSet.Version())
	}

	tests := []struct {
		name string
		tool []Tool
		same bool
	}{
		{"unchanged copy", modify(func(ts []Tool) []Tool { return ts }), true},
		{"reversed order", modify(func(ts []Tool) []Tool { slices.Reverse(ts); return ts }), true},
		{"schema key order and whitespace", modify(func(ts []Tool) []Tool {
			ts[0].Parameters = raw(` { "required" : ["x"], "properties": {"x": {"minLength":1, "type":"string"}}, "type":"object" } `)
			return ts
		}), true},
		{"run_code added", modify(func(ts []Tool) []Tool { return append(ts, Tool{Name: RunCodeName}) }), true},
		{"description changed", modify(func(ts []Tool) []Tool { ts[0].Description = "Tool a!"; return ts }), false},
		{"description changed past the summary", modify(func(ts []Tool) []Tool {
			ts[0].Description = "Tool a. More detail."
			return ts
		}), false},
		{"name changed", modify(func(ts []Tool) []Tool { ts[1].Name = "c"; return ts }), false},
		{"parameter schema changed", modify(func(ts []Tool) []Tool {
			ts[0].Parameters = raw(`{"type":"object","properties":{"x":{"type":"string","minLength":2}},"required":["x"]}`)
			return ts
		}), false},
		{"array order in schema changed", modify(func(ts []Tool) []Tool {
			ts[0].Parameters = raw(`{"type":"object","properties":{"x":{"type":["string","null"]}}}`)
			return ts
		}), false},
		{"output schema changed", modify(func(ts []Tool) []Tool { ts[1].Output = raw(`{"type":"string"}`); return ts }), false},
		{"output schema removed", modify(func(ts []Tool) []Tool { ts[1].Output = nil; return ts }), false},
		{"empty schema became invalid", modify(func(ts []Tool) []Tool { ts[1].Parameters = raw(`{`); return ts }), false},
		{"empty schema became null", modify(func(ts []Tool) []Tool { ts[1].Parameters = raw(`null`); return ts }), false},
		{"tool added", modify(func(ts []Tool) []Tool { return append(ts, Tool{Name: "d"}) }), false},
		{"tool removed", modify(func(ts []Tool) []Tool { return ts[:1] }), false},
		{"description moved between tools", modify(func(ts []Tool) []Tool {
			ts[0].Description, ts[1].Description = "Tool a.Tool b.", ""
			return ts
		}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := NewSet(tc.tool)
			if got := set.Version() == baseSet.Version(); got != tc.same {
				t.Errorf("same version = %v, want %v", got, tc.same)
			}
			if tc.same && !bytes.Equal(TypeScript(set), TypeScript(baseSet)) {
				t.Errorf("same version but different TypeScript")
			}
		})
	}
}

func TestNewSetDuplicateNames(t *testing.T) {
	first := Tool{Name: "dup", Description: "A."}
	second := Tool{Name: "dup", Description: "B.", Parameters: raw(`{"type":"object"}`)}
	ab, ba := NewSet([]Tool{first, second}), NewSet([]Tool{second, first})
	if len(ab.Tools()) != 1 {
		t.Fatalf("got %d tools, want 1", len(ab.Tools()))
	}
	if ab.Version() != ba.Version() || !bytes.Equal(TypeScript(ab), TypeScript(ba)) {
		t.Errorf("duplicate resolution depends on input order")
	}
	if got := ab.Tools()[0].Description; got != "A." {
		t.Errorf("kept %q, want the tool that sorts first (A.)", got)
	}
}

func TestSetDoesNotShareMemory(t *testing.T) {
	params := raw(`{"type":"object","properties":{"x":{"type":"string"}}}`)
	input := []Tool{{Name: "t", Parameters: params}}
	set := NewSet(input)
	before := TypeScript(set)

	copy(params, `{"type":"number"`) // the caller reuses its buffer
	input[0].Name = "renamed"
	out := set.Tools()
	out[0].Parameters[0] = 'X'
	out[0].Name = "other"

	if !bytes.Equal(TypeScript(set), before) {
		t.Errorf("the set changed through memory it shares with its caller")
	}
	if got := set.Tools()[0]; got.Name != "t" || got.Parameters[0] != '{' {
		t.Errorf("Tools() = %+v, want the original tool", got)
	}
}

func TestNilSetIsEmpty(t *testing.T) {
	var nilSet *Set
	empty := NewSet(nil)
	if nilSet.Version() != empty.Version() {
		t.Errorf("nil version %s, empty %s", nilSet.Version(), empty.Version())
	}
	if len(nilSet.Tools()) != 0 {
		t.Errorf("nil set has tools")
	}
	if !bytes.Equal(TypeScript(nilSet), TypeScript(empty)) ||
		!bytes.Equal(JavaScript(nilSet), JavaScript(empty)) ||
		!bytes.Equal(Prompt(nilSet), Prompt(empty)) {
		t.Errorf("nil set renders differently from the empty set")
	}
}

func TestEmptySetDeclarations(t *testing.T) {
	ts := string(TypeScript(NewSet(nil)))
	for _, want := range []string{
		"declare const tools: {\n  /** Finds tools",
		"  $describe(names: string | string[]): Promise<string>;\n};\n",
		"type ToolName = Exclude<keyof typeof tools, \"$search\" | \"$describe\">;\n",
		"type ToolArgsMap = { [K in ToolName]: ",
		"type ToolOutputMap = { [K in ToolName]: ",
	} {
		if !strings.Contains(ts, want) {
			t.Errorf("empty declarations lack %q:\n%s", want, ts)
		}
	}
	assertDeclarations(t, []byte(ts))
}

func TestTypeScriptSectionOrder(t *testing.T) {
	ts := string(TypeScript(NewSet(demoTools())))
	markers := []string{
		"declare class ToolCallError extends Error {",
		`readonly name: "ToolCallError";`,
		"readonly toolName: string;",
		"readonly code: string;",
		"declare const tools: {",
		"  /** Adds two numbers and returns their sum. */\n  math_add(args: {\n    /** The first addend. */\n    a: number;\n",
		"  }): Promise<{\n    /** a + b */\n    sum: number;\n  }>;\n",
		"  $search(query: string",
		"type ToolName = Exclude<keyof typeof tools, \"$search\" | \"$describe\">;",
		"type ToolArgsMap = ",
		"type ToolOutputMap = ",
	}
	at := 0
	for _, m := range markers {
		i := strings.Index(ts[at:], m)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", m, ts)
		}
		at += i + len(m)
	}
	// Each tool is declared once: no per-tool map repeats it.
	if n := strings.Count(ts, "math_add"); n != 1 {
		t.Errorf("math_add appears %d times, want 1", n)
	}
	for _, banner := range []string{"version", "Generated", "do not edit"} {
		if strings.Contains(ts, banner) {
			t.Errorf("TypeScript carries a banner (%q)", banner)
		}
	}
}

func toolNames(s *Set) []string {
	var names []string
	for _, tool := range s.Tools() {
		names = append(names, tool.Name)
	}
	return names
}

// TestSetConcurrentUse renders one set from several goroutines; under -race it catches any
// hidden mutable state in a Set.
func TestSetConcurrentUse(t *testing.T) {
	set := NewSet(demoTools())
	want := TypeScript(set)
	errs := make(chan string, 8)
	for range cap(errs) {
		go func() {
			if !bytes.Equal(TypeScript(set), want) || len(JavaScript(set)) == 0 || len(set.Tools()) != len(demoTools()) {
				errs <- "concurrent rendering differs"
				return
			}
			errs <- ""
		}()
	}
	for range cap(errs) {
		if msg := <-errs; msg != "" {
			t.Error(msg)
		}
	}
}
