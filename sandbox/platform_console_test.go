package sandbox

import (
	"regexp"
	"strings"
	"testing"
)

func TestConsoleExtras(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"group indents", `console.log("a"); console.group("G"); console.log("b"); console.group(); console.info("c\nd"); console.groupEnd(); console.groupEnd(); console.groupEnd(); console.log("e")`,
			[]string{"a", "G", "  b", "    c", "    d", "e"}},
		{"groupCollapsed", `console.groupCollapsed("x", 1); console.warn("in"); console.groupEnd(); console.log("out")`, []string{"x 1", "  in", "out"}},
		{"count and countReset", `console.count(); console.count(); console.count("k"); console.countReset(); console.count(); console.countReset("none")`,
			[]string{"default: 1", "default: 2", "k: 1", "default: 1", "Warning: Count for 'none' does not exist"}},
		{"assert", `console.assert(true, "no"); console.assert(false); console.assert(0, "x %s", "y", {a: 1}); console.assert(false, {a: 1}, 2)`,
			[]string{"Assertion failed", "Assertion failed: x y { a: 1 }", "Assertion failed { a: 1 } 2"}},
		{"dir quotes strings and takes depth", `console.dir("s"); console.dir({a: {b: {c: {d: {}}}}}); console.dir({a: {b: {c: {d: 1}}}}, {depth: 0}); console.dir({a: {b: {c: {d: {e: 1}}}}}, {depth: null})`,
			[]string{"'s'", "{ a: { b: { c: [Object] } } }", "{ a: [Object] }", "{\n  a: {\n    b: { c: { d: { e: 1 } } }\n  }\n}"}},
		{"dirxml is log", `console.dirxml("a", 1)`, []string{"a 1"}},
		{"table of objects", `console.table([{a: 1, b: "x"}, {a: 2, c: true}])`, []string{
			"┌─────────┬───┬─────┬──────┐",
			"│ (index) │ a │ b   │ c    │",
			"├─────────┼───┼─────┼──────┤",
			"│ 0       │ 1 │ 'x' │      │",
			"│ 1       │ 2 │     │ true │",
			"└─────────┴───┴─────┴──────┘"}},
		{"table of primitives and columns", `console.table([1, "two"]); console.table({r1: {x: 1, y: 2}}, ["y"])`, []string{
			"┌─────────┬────────┐",
			"│ (index) │ Values │",
			"├─────────┼────────┤",
			"│ 0       │ 1      │",
			"│ 1       │ 'two'  │",
			"└─────────┴────────┘",
			"┌─────────┬───┐",
			"│ (index) │ y │",
			"├─────────┼───┤",
			"│ r1      │ 2 │",
			"└─────────┴───┘"}},
		{"table of a non-object logs it", `console.table("plain")`, []string{"plain"}},
		{"a throwing getter does not fail the run", `console.table([{get a() { throw new Error("getter") }}]); console.log("after")`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runJS(t, tt.src, nil)
			if res.Err != nil {
				t.Fatalf("run failed: %v (logs %q)", res.Err, res.Logs)
			}
			got := strings.Join(res.Logs, "\n")
			if tt.want == nil {
				if !strings.Contains(got, "could not format") || !strings.HasSuffix(got, "after") {
					t.Fatalf("logs = %q", res.Logs)
				}
				return
			}
			if want := strings.Join(tt.want, "\n"); got != want {
				t.Fatalf("logs:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestConsoleTimeAndTrace(t *testing.T) {
	res := runJS(t, `
		console.time(); console.time("t"); console.time("t")
		await new Promise(r => setTimeout(r, 5))
		console.timeLog("t", "mid", 1); console.timeEnd("t"); console.timeEnd("t"); console.timeEnd()
		function inner() { console.trace("here", 1) }
		inner()`, nil)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	patterns := []string{
		`^Warning: Label 't' already exists for console\.time\(\)$`,
		`^t: \d+\.\d{3}ms mid 1$`,
		`^t: \d+\.\d{3}ms$`,
		`^Warning: No such label 't' for console\.timeEnd\(\)$`,
		`^default: \d+\.\d{3}ms$`,
		`^Trace: here 1\n    at inner \(line 5:\d+\)\n    at <anonymous> \(line 6:\d+\)$`,
	}
	if len(res.Logs) != len(patterns) {
		t.Fatalf("logs = %q", res.Logs)
	}
	for i, p := range patterns {
		if !regexp.MustCompile(p).MatchString(res.Logs[i]) {
			t.Fatalf("log %d = %q, want %s", i, res.Logs[i], p)
		}
	}
	for _, c := range []struct {
		d    float64
		want string
	}{{0.0512, "0.051ms"}, {1500, "1.500s"}, {61500, "1:01.500 (m:ss.mmm)"}, {3723004, "1:02:03.004 (h:mm:ss.mmm)"}} {
		if got := formatDuration(msDuration(c.d)); got != c.want {
			t.Fatalf("formatDuration(%vms) = %q, want %q", c.d, got, c.want)
		}
	}
}
