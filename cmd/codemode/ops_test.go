package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/session"
)

func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		code, out, errs := runCLI(t, "", args...)
		if code != 0 || !strings.HasPrefix(out, "usage: codemode <command>") || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	for _, args := range [][]string{{"help", "run"}, {"run", "-h"}, {"run", "--help"}} {
		code, out, errs := runCLI(t, "", args...)
		if code != 0 || !strings.HasPrefix(out, "usage: codemode run [flags] FILE|-") || !strings.Contains(out, "-approve") || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, "", "help", "nope"); code != 2 || !strings.Contains(errs, `unknown command "nope"`) {
		t.Errorf("help nope: exit %d, %q", code, errs)
	}
	// No arguments at all is a usage error: the usage, on stderr.
	if code, out, errs := runCLI(t, ""); code != 2 || out != "" || !strings.HasPrefix(errs, "usage:") {
		t.Errorf("no arguments: exit %d, stdout %q", code, out)
	}
}

func TestVersionFlags(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		if code, out, _ := runCLI(t, "", args...); code != 0 || !strings.HasPrefix(out, "codemode ") {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
}

func TestBadFlagIsReportedOnce(t *testing.T) {
	for _, cmd := range []string{"run", "serve", "tools", "sdk", "mcp", "replay"} {
		code, out, errs := runCLI(t, "", cmd, "--bogus")
		if code != 2 || out != "" || strings.Count(errs, "bogus") != 1 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s --bogus: exit %d, stderr %q", cmd, code, errs)
		}
	}
}

// TestConfigErrorsExit2 runs every command that reads the configuration
// on bad configurations, from a file and from the environment: each is one
// line naming the key and status 2.
func TestConfigErrorsExit2(t *testing.T) {
	cmds := [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--store", "memory://"}, {"run", "-"}, {"tools"}, {"sdk"},
		{"mcp", "--store", "memory://"}, {"replay", "some-session"},
	}
	cases := []struct {
		name, yml, env, want string
	}{
		{"fraction", "limits: {max_sub_calls: 1.5}\n", "", `limits.max_sub_calls: want an integer, got "1.5"`},
		{"env fraction", "", "CODEMODE_LIMITS_MAX_SUB_CALLS=1.5", `CODEMODE_LIMITS_MAX_SUB_CALLS: want an integer, got "1.5"`},
		{"env duration", "", "CODEMODE_LIMITS_TIMEOUT=soon", "CODEMODE_LIMITS_TIMEOUT: invalid duration"},
		{"unknown key", "limts: {}\n", "", `unknown key "limts"`},
		{"log format", "log: {format: xml}\n", "", "log.format: want text or json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{}
			if tc.yml != "" {
				args = append(args, "--config", testkit.WriteFile(t, "c.yaml", tc.yml))
			}
			if name, val, ok := strings.Cut(tc.env, "="); ok {
				t.Setenv(name, val)
			}
			for _, cmd := range cmds {
				code, _, errs := runCLI(t, "return 1", append(append([]string{}, cmd...), args...)...)
				if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
					t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", cmd, code, errs, tc.want)
				}
			}
		})
	}
	// A glob that matches no tool is caught where the tools are known, by
	// every command that builds the service.
	cfg := testkit.WriteFile(t, "c.yaml", "policies:\n  - {scope: default, tool: 'fils_*', decision: ask}\n")
	for _, cmd := range cmds[:5] {
		code, _, errs := runCLI(t, "return 1", append(append([]string{}, cmd...), "--config", cfg)...)
		if code != 2 || !strings.Contains(errs, `policies[0].tool: "fils_*" matches no tool in scope default`) || !strings.Contains(errs, "files_") {
			t.Errorf("%v: exit %d, stderr %q", cmd, code, errs)
		}
	}
	// Flags beat the environment.
	t.Setenv("CODEMODE_STORE", "ftp://nowhere")
	if code, _, errs := runCLI(t, "", "serve", "--addr", "127.0.0.1:0"); code != 2 || !strings.Contains(errs, "store: want sqlite") {
		t.Errorf("CODEMODE_STORE unused: exit %d %q", code, errs)
	}
}

func TestEnvironmentReachesServe(t *testing.T) {
	t.Setenv("CODEMODE_LISTEN", "127.0.0.1:0")
	t.Setenv("CODEMODE_STORE", "memory://")
	t.Setenv("CODEMODE_MODE", "code")
	_, line, stop := startServeLine(t)
	if !strings.Contains(line, "addr=127.0.0.1:") || !strings.Contains(line, "store=memory://") || !strings.Contains(line, "mode=code") {
		t.Fatalf("environment not applied: %s", line)
	}
	stop()
}

func TestReplay(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	missing := filepath.Join(dir, "none", "log.db")
	code, _, errs := runCLI(t, "", "replay", "s1", "--store", "sqlite://"+missing)
	if code != 1 || !strings.Contains(errs, "no log at "+missing+" (set --config or --store") {
		t.Fatalf("missing log: exit %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Fatal("replay created the store's directory")
	}
	// --config finds the configured store.
	db := filepath.Join(dir, "log.db")
	cfg := config.Default()
	cfg.Store = "sqlite://" + db
	sid := recordRun(t, cfg, cfg.Store)
	file := testkit.WriteFile(t, "c.yaml", "store: sqlite://"+db+"\n")
	code, out, errs := runCLI(t, "", "replay", sid, "--config", file)
	if code != 0 || !strings.Contains(out, "math_add") {
		t.Fatalf("replay --config: exit %d %s %s", code, out, errs)
	}
	code, out, errs = runCLI(t, "", "replay", "--json", sid, "--config", file)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 3 {
		t.Fatalf("replay --json: exit %d %s %s", code, out, errs)
	}
	var prev int64
	for _, l := range lines {
		var e struct {
			Seq  int64  `json:"seq"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq != prev+1 || e.Type == "" {
			t.Fatalf("line %q: %+v %v", l, e, err)
		}
		prev = e.Seq
	}
	if !strings.Contains(out, `"type":"tool/code-dispatch"`) {
		t.Errorf("no nested dispatch in %s", out)
	}
}

const askConfig = "policies:\n  - {scope: default, tool: 'files_*', decision: ask, reason: writes need a person}\n"

const writeProgram = `await tools.files_write({path: "a.txt", content: "hi"}); return "written"`

func TestRunApprovals(t *testing.T) {
	cfg := testkit.WriteFile(t, "c.yaml", askConfig+"approvals: {timeout: 10m}\n")
	// Nobody to ask: the ask fails at once (well before the 10m timeout)
	// and says how to answer.
	code, _, errs := runCLI(t, writeProgram, "run", "-", "--config", cfg)
	if code != 1 || !strings.Contains(errs, "--approve") || !strings.Contains(errs, "files_write needs approval") {
		t.Fatalf("no terminal: exit %d %q", code, errs)
	}
	if code, out, errs := runCLI(t, writeProgram, "run", "-", "--config", cfg, "--approve", "files_*"); code != 0 || strings.TrimSpace(out) != "written" {
		t.Fatalf("--approve: exit %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, writeProgram, "run", "-", "--config", cfg, "--approve", "*"); code != 0 || strings.TrimSpace(out) != "written" {
		t.Fatalf("--approve '*': exit %d %q %q", code, out, errs)
	}
	code, _, errs = runCLI(t, writeProgram, "run", "-", "--config", cfg, "--approve", "*", "--deny", "files_write")
	if code != 1 || !strings.Contains(errs, "denied by --deny files_write") {
		t.Fatalf("--deny: exit %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "run", "-", "--approve", "["); code != 2 || !strings.Contains(errs, "bad glob") {
		t.Fatalf("bad glob: exit %d %q", code, errs)
	}
}

func TestRunAsksAtTheTerminal(t *testing.T) {
	cfg := testkit.WriteFile(t, "c.yaml", askConfig)
	prog := testkit.WriteFile(t, "p.js", writeProgram)
	for answer, want := range map[string]int{"y\n": 0, "n\n": 1, "": 1} {
		var asked bytes.Buffer
		old := findTerminal
		findTerminal = func(io.Reader, io.Writer, bool) *terminal {
			return &terminal{in: bufio.NewReader(strings.NewReader(answer)), out: &asked}
		}
		code, out, errs := runCLI(t, "", "run", prog, "--config", cfg)
		findTerminal = old
		if code != want {
			t.Errorf("answer %q: exit %d, want %d (%q %q)", answer, code, want, out, errs)
		}
		if q := asked.String(); !strings.Contains(q, "approval needed: files_write (writes need a person)") || !strings.Contains(q, `"path":"a.txt"`) || !strings.HasSuffix(q, "allow? [y/N] ") {
			t.Errorf("question: %q", q)
		}
	}
}

// A program read from stdin leaves stdin to the program: the person answers
// on the controlling terminal, when stderr (where the question goes) is one.
func TestRunAsksOnTheControllingTerminal(t *testing.T) {
	cfg := testkit.WriteFile(t, "c.yaml", askConfig)
	dir := t.TempDir()
	tty, errPath := filepath.Join(dir, "tty"), filepath.Join(dir, "stderr")
	if err := os.WriteFile(tty, []byte("y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	oldTTY, oldIs := controllingTTY, isTerminal
	t.Cleanup(func() { controllingTTY, isTerminal = oldTTY, oldIs })
	terminals := map[string]bool{tty: true, errPath: true}
	isTerminal = func(f *os.File) bool { return terminals[f.Name()] }
	runWith := func() (int, string, string) {
		stderr, err := os.Create(errPath)
		if err != nil {
			t.Fatal(err)
		}
		defer stderr.Close()
		var out bytes.Buffer
		code := run(context.Background(), []string{"run", "-", "--config", cfg}, strings.NewReader(writeProgram), &out, stderr)
		b, _ := os.ReadFile(errPath)
		return code, out.String(), string(b)
	}

	controllingTTY = tty
	if code, out, errs := runWith(); code != 0 || strings.TrimSpace(out) != "written" || !strings.Contains(errs, "approval needed: files_write") {
		t.Fatalf("asked on the controlling terminal: exit %d %q %q", code, out, errs)
	}
	controllingTTY = filepath.Join(dir, "none")
	if code, _, errs := runWith(); code != 1 || !strings.Contains(errs, "nobody can answer here") {
		t.Fatalf("no controlling terminal: exit %d %q", code, errs)
	}
	controllingTTY, terminals[errPath] = tty, false
	if code, _, errs := runWith(); code != 1 || !strings.Contains(errs, "nobody can answer here") || strings.Contains(errs, "approval needed") {
		t.Fatalf("stderr is not a terminal: exit %d %q", code, errs)
	}
}

func TestLoggerFormats(t *testing.T) {
	var b bytes.Buffer
	l := newLogger(&b, config.Log{Format: "json", Level: "warn"})
	l.Info("hidden")
	l.Warn("shown", "k", 1)
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil || rec["msg"] != "shown" || rec["level"] != "WARN" {
		t.Fatalf("%s: %v", b.String(), err)
	}
	b.Reset()
	newLogger(&b, config.Log{Format: "text", Level: "debug"}).Debug("dbg")
	if !strings.Contains(b.String(), "level=DEBUG msg=dbg") {
		t.Fatal(b.String())
	}
	if !processLog().Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("the process logger is not the command's")
	}
}

func TestServeLogFormatFlag(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--store", "memory://", "--log-format", "json"}, strings.NewReader(""), io.Discard, pw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	found := false
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Errorf("not a JSON log line: %s", sc.Text())
			continue
		}
		if rec["msg"] == "listening" && !found {
			found = true
			if gc, _ := rec["gc"].(string); gc != "floor 64MiB" && !strings.HasPrefix(gc, "GOGC=") {
				t.Errorf("the listening line says nothing of the collector: %v", rec)
			}
			cancel()
		}
	}
	if <-done != 0 || !found {
		t.Fatalf("no JSON listening line (found %v)", found)
	}
	cancel()
}

// TestRetentionPrunes: serve's background retention deletes beyond
// max_count at once and again each interval, until its context ends.
func TestRetentionPrunes(t *testing.T) {
	st := session.NewMemory()
	ctx := context.Background()
	for _, id := range []string{"s1", "s2", "s3"} {
		if err := st.CreateSession(ctx, session.Session{ID: id, Scope: "default"}); err != nil {
			t.Fatal(err)
		}
	}
	var log testkit.Logs
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pruneSessions(pctx, st, config.Retention{MaxCount: 1, Interval: config.Duration(time.Hour)}, log.Logger())
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		page, err := st.ListSessions(ctx, session.SessionFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Sessions) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions left, want 1", len(page.Sessions))
		}
	}
	cancel()
	<-done
	if got := log.String(); !strings.Contains(got, "max_count=1") || !strings.Contains(got, "deleted sessions") || !strings.Contains(got, "sessions=2") {
		t.Errorf("log: %s", got)
	}
	// No limit: nothing is deleted, and the loop does not start.
	finished := make(chan struct{})
	go func() {
		pruneSessions(ctx, st, config.Retention{Interval: config.Duration(time.Millisecond)}, slog.New(slog.DiscardHandler))
		close(finished)
	}()
	<-finished
}

// TestStoreThatCannotOpen: one line naming the path and the fix, status 1,
// from every command that opens the store.
func TestStoreThatCannotOpen(t *testing.T) {
	blocker := testkit.WriteFile(t, "not-a-dir", "")
	store := "sqlite://" + filepath.Join(blocker, "codemode.db")
	for _, cmd := range [][]string{{"serve", "--addr", "127.0.0.1:0", "--store", store}, {"mcp", "--store", store}} {
		code, _, errs := runCLI(t, "", cmd...)
		if code != 1 || !strings.Contains(errs, "cannot open the session store "+blocker) || !strings.Contains(errs, "--store") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", cmd, code, errs)
		}
	}
}

// What an ask shows on the terminal cannot drive it: control characters the program put in
// its arguments are escaped.
func TestApprovalPromptEscapesControls(t *testing.T) {
	var out strings.Builder
	p := &approvals{term: &terminal{in: bufio.NewReader(strings.NewReader("n\n")), out: &out}, stderr: io.Discard}
	p.decide("files_write", "{\"path\":\"\x1b]0;pwned\x07\u009b2J\"}", "writes\r need a person")
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07\r\u009b") || !strings.Contains(got, `\x1b]0;pwned\a\u009b2J`) || !strings.Contains(got, `writes\r need`) {
		t.Fatalf("prompt %q", got)
	}
}
