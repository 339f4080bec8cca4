package sandboxtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/codemode/codemode/sandbox"
)

// The conformance corpus, sandbox/testdata/corpus: programs of one feature each that models
// write, with the value Node gives for each (expected.json, recorded by record.mjs). Each
// *.txt file holds programs separated by header lines "=== <name>"; directive lines right
// after a header start with "//@": "//@ node 22" (recorded with a newer Node than 20),
// "//@ unsupported: <why>" and "//@ error: <text the failure must contain>" (a program that
// cannot work here must fail naming the alternative). Other areas (Intl) add files of their
// own.

// CorpusProgram is one program of the corpus.
type CorpusProgram struct {
	Name        string
	Source      string
	Node        int    // the Node major version that records it (0: the default)
	Unsupported string // why it cannot work here; empty for supported programs
	Error       string // for unsupported programs: what the failure message must contain
}

// CorpusExpected is what Node gave for a program.
type CorpusExpected struct {
	Value json.RawMessage `json:"value,omitempty"` // absent: undefined
	Logs  []string        `json:"logs,omitempty"`
	Error string          `json:"error,omitempty"` // "Name: message" when Node threw
}

// CorpusDir is the corpus directory.
func CorpusDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "corpus")
}

// LoadCorpus reads every program and the expected values.
func LoadCorpus(t testing.TB) ([]CorpusProgram, map[string]CorpusExpected) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(CorpusDir(), "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	sort.Strings(files)
	var programs []CorpusProgram
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ParseCorpus(string(b)) {
			if seen[p.Name] {
				t.Fatalf("%s: program %q defined twice", f, p.Name)
			}
			seen[p.Name] = true
			programs = append(programs, p)
		}
	}
	expected := map[string]CorpusExpected{}
	b, err := os.ReadFile(filepath.Join(CorpusDir(), "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &expected); err != nil {
		t.Fatal(err)
	}
	return programs, expected
}

// ParseCorpus splits a corpus file into programs.
func ParseCorpus(text string) []CorpusProgram {
	var out []CorpusProgram
	var cur *CorpusProgram
	var body []string
	flush := func() {
		if cur != nil {
			cur.Source = strings.TrimSpace(strings.Join(body, "\n"))
			out = append(out, *cur)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if name, ok := strings.CutPrefix(line, "=== "); ok {
			flush()
			cur = &CorpusProgram{Name: strings.TrimSpace(name)}
			body = nil
			continue
		}
		if cur == nil {
			continue // the file's preamble
		}
		if d, ok := strings.CutPrefix(line, "//@ "); ok && len(body) == 0 {
			switch k, v, _ := strings.Cut(d, " "); strings.TrimSuffix(k, ":") {
			case "node":
				cur.Node = atoi(v)
			case "unsupported":
				cur.Unsupported = strings.TrimSpace(v)
			case "error":
				cur.Error = strings.TrimSpace(v)
			}
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

func atoi(s string) int {
	n := 0
	for _, c := range strings.TrimSpace(s) {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// CheckCorpus fails t unless res is what the corpus expects of p.
func CheckCorpus(t testing.TB, p CorpusProgram, want CorpusExpected, hasWant bool, res sandbox.Result) {
	t.Helper()
	if p.Unsupported != "" {
		if res.Err == nil {
			t.Fatalf("an unsupported program (%s) succeeded with %s", p.Unsupported, res.Value)
		}
		if !strings.Contains(res.Err.Message, p.Error) {
			t.Fatalf("failure %q does not name the alternative %q", res.Err.Message, p.Error)
		}
		return
	}
	if !hasWant {
		t.Fatalf("no expected value recorded: run node sandbox/testdata/corpus/record.mjs")
	}
	if want.Error != "" {
		name, _, _ := strings.Cut(want.Error, ":")
		if res.Err == nil || !strings.Contains(res.Err.Message, name) {
			t.Fatalf("Node threw %q; got %s %v", want.Error, res.Value, res.Err)
		}
		return
	}
	if res.Err != nil {
		t.Fatalf("failed: %v (logs %q); Node returned %s", res.Err, res.Logs, want.Value)
	}
	if !jsonEqual(res.Value, want.Value) {
		t.Fatalf("value %s, Node returned %s", res.Value, want.Value)
	}
	if strings.Join(res.Logs, "\n") != strings.Join(want.Logs, "\n") {
		t.Fatalf("logs:\n%s\nNode logged:\n%s", strings.Join(res.Logs, "\n"), strings.Join(want.Logs, "\n"))
	}
}

func jsonEqual(a, b []byte) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
