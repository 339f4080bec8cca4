// Package sandboxtest holds the hostile-program suite, sandbox/testdata/hostile: programs that
// try to hang, exhaust or escape the sandbox, each with the failure it must end in. Package
// sandbox runs the suite in process, package sandbox/worker in worker processes, and the
// codemode command through a running server; this package loads it and judges the outcomes.
// It also holds the hosts both runners' tests call: Host, and HoldingHost for held calls.
package sandboxtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/sandbox"
)

const (
	// TimeoutTimeout is the wall-clock limit of a program expected to time out, and
	// DefaultTimeout that of any other, unless its header sets one: a program that must end
	// in a limit or an error ends as soon as it does, and a generous timeout keeps a slow
	// machine from turning that into a timeout.
	TimeoutTimeout = time.Second
	DefaultTimeout = 15 * time.Second
	// Memory is the memory limit the suite's expectations assume (at least; the caps on
	// built-ins scale with it, and every bomb is far past them at 512 MiB too).
	Memory = 256 << 20
	// Margin is how far past its timeout a run may end: the grace a worker has to answer a
	// cancel, the wait for a native step that ignores Interrupt, a kill and a new worker, on
	// a loaded machine with the race detector. It is a bound on hanging, not a measurement.
	Margin = 5 * time.Second
	// OK is the expectation of a program that must succeed.
	OK = "ok"
)

// Program is one program of the suite. Its header comments say what it expects:
//
//	// expect: timeout|limit|runtime|syntax|cancelled|ok
//	// timeout: 30s        the run's wall-clock limit (default TimeoutTimeout or DefaultTimeout)
//	// memory: 64MiB       the run's memory limit (default Memory)
//	// inproc: skip (why)  not safe to run in process
//	// serial              grows the heap: run it alone, so the heap watchdog blames it
//	// check: clean        the checker must pass when run next on the same runner
//	// role: checker       this is the checker
type Program struct {
	Name       string // the file name without .js
	Source     string // with {{LEAK_MAP}} replaced by the path of a source map on disk
	Expect     string // a sandbox failure kind, or OK
	Timeout    time.Duration
	Memory     int64 // the run's memory limit; a server's own limit may differ
	InProcess  bool  // safe in process
	Serial     bool
	CheckClean bool
	Checker    bool
}

// Options are the sandbox limits the program expects to run with.
func (p Program) Options() sandbox.Options {
	return sandbox.Options{Timeout: p.Timeout, Memory: p.Memory}
}

// Dir is the suite's directory, found from this source file.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "hostile")
}

// Load reads the suite, in file-name order; a malformed header fails t.
func Load(t testing.TB) []Program {
	t.Helper()
	dir := Dir()
	names, err := filepath.Glob(filepath.Join(dir, "*.js"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no hostile programs in %s: %v", dir, err)
	}
	sort.Strings(names)
	leakMap, err := filepath.Abs(filepath.Join(dir, "..", "sourcemap", "leak.map"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Program
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := parse(strings.TrimSuffix(filepath.Base(name), ".js"), string(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p.Source = strings.ReplaceAll(p.Source, "{{LEAK_MAP}}", leakMap)
		out = append(out, p)
	}
	return out
}

// Checker returns the suite's checker from programs.
func Checker(t testing.TB, programs []Program) Program {
	t.Helper()
	for _, p := range programs {
		if p.Checker {
			return p
		}
	}
	t.Fatal("the suite has no checker")
	return Program{}
}

var kinds = map[string]bool{
	sandbox.KindSyntax: true, sandbox.KindRuntime: true, sandbox.KindTimeout: true,
	sandbox.KindLimit: true, sandbox.KindCancelled: true, OK: true,
}

func parse(name, src string) (Program, error) {
	p := Program{Name: name, Source: src, Timeout: DefaultTimeout, Memory: Memory, InProcess: true}
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "//") {
			break
		}
		key, value, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "//")), ":")
		value = strings.TrimSpace(value)
		switch key {
		case "expect":
			if !kinds[value] {
				return p, fmt.Errorf("unknown expectation %q", value)
			}
			p.Expect = value
		case "timeout":
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 {
				return p, fmt.Errorf("bad timeout %q", value)
			}
			p.Timeout = d
		case "memory":
			n, err := parseSize(value)
			if err != nil {
				return p, err
			}
			p.Memory = n
		case "inproc":
			if !strings.HasPrefix(value, "skip") {
				return p, fmt.Errorf("bad inproc header %q", value)
			}
			p.InProcess = false
		case "serial":
			p.Serial = true
		case "check":
			if value != "clean" {
				return p, fmt.Errorf("bad check header %q", value)
			}
			p.CheckClean = true
		case "role":
			if value != "checker" {
				return p, fmt.Errorf("bad role %q", value)
			}
			p.Checker = true
		}
	}
	if p.Expect == "" {
		return p, fmt.Errorf("no // expect: header")
	}
	if p.Expect == sandbox.KindTimeout && !strings.Contains(src, "// timeout:") {
		p.Timeout = TimeoutTimeout
	}
	return p, nil
}

// parseSize reads a byte count such as 64MiB.
func parseSize(s string) (int64, error) {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("bad size %q", s)
			}
			return v * u.size, nil
		}
	}
	return 0, fmt.Errorf("bad size %q (want KiB, MiB or GiB)", s)
}

// Outcome is what a runner made of a program.
type Outcome struct {
	Kind    string // the failure kind; "" for success
	Message string // the failure message
	Value   string // the result's JSON on success
	Elapsed time.Duration
}

// FromResult is the outcome of a sandbox result.
func FromResult(res sandbox.Result, elapsed time.Duration) Outcome {
	o := Outcome{Value: string(res.Value), Elapsed: elapsed}
	if res.Err != nil {
		o.Kind, o.Message = res.Err.Kind, res.Err.Message
	}
	return o
}

// Check fails t unless out is what p expects, within p's timeout plus Margin.
func Check(t testing.TB, p Program, out Outcome) {
	t.Helper()
	switch {
	case p.Expect == OK && out.Kind != "":
		t.Errorf("%s: want success, got %s: %s", p.Name, out.Kind, out.Message)
	case p.Expect != OK && out.Kind != p.Expect:
		t.Errorf("%s: want a %s failure, got %s", p.Name, p.Expect, describe(out))
	case p.Expect != OK && strings.TrimSpace(out.Message) == "":
		t.Errorf("%s: a %s failure without a message", p.Name, out.Kind)
	}
	if limit := p.Timeout + Margin; out.Elapsed > limit {
		t.Errorf("%s: ended after %v, past its %v timeout plus %v", p.Name, out.Elapsed.Round(time.Millisecond), p.Timeout, Margin)
	}
}

func describe(o Outcome) string {
	if o.Kind == "" {
		return "success with " + truncate(o.Value, 200)
	}
	return o.Kind + ": " + truncate(o.Message, 400)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Host is the suite's tool host: one tool, math_add({a, b}) → {sum}, settled at once (so
// that call floods are as fast as they can be).
type Host struct{}

// Has implements sandbox.Host.
func (Host) Has(name string) bool { return name == "math_add" }

// Names implements sandbox.Host.
func (Host) Names() []string { return []string{"math_add"} }

// Call implements sandbox.Host.
func (Host) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	var args struct{ A, B float64 }
	if err := json.Unmarshal(c.Args, &args); err != nil {
		settle(sandbox.Settlement{Err: &sandbox.CallError{Message: "invalid arguments: " + err.Error()}})
		return
	}
	settle(sandbox.Settlement{Value: []byte(fmt.Sprintf(`{"sum":%g}`, args.A+args.B))})
}
