package agent_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/registry/schema"
	"github.com/codemode/codemode/session"
)

// gateCrashEnv makes the test binary a process that steps a session until it
// is killed, reporting on stdout what it told its caller ("told <call id>")
// and which effectful bodies started ("started <sub-call id>").
const gateCrashEnv = "CODEMODE_AGENT_GATE_CRASH_CHILD"

// gateCrashChild steps session "gate" of the store at url with run_code
// calls whose programs call an effectful tool several times.
func gateCrashChild(url string) error {
	// The parent holds our stdin: when it goes, so do we (a test that timed
	// out must not leave us stepping).
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(4)
	}()
	ctx := context.Background()
	store, err := session.Open(ctx, url)
	if err != nil {
		return err
	}
	reg, rt, _, err := setup(registry.ModeCode)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	var outMu sync.Mutex // parallel calls report
	report := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	effect := registry.MustDefine(registry.Definition{
		Name:   "effect",
		Output: &schema.Node{Type: "json"},
		Behavior: registry.Behavior{
			IsConcurrencySafe: func(frozen.Value) bool { return true },
			Execute: func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
				report("started %s", exec.CallID())
				time.Sleep(time.Millisecond)
				return 1, nil
			},
		},
	})
	if _, err := reg.Register(scope, effect); err != nil {
		return err
	}
	a := agent.New(rt, store, agent.Options{Leases: strings.HasPrefix(url, "postgres")})
	for i := 0; ; i++ {
		id := fmt.Sprintf("g%d", i)
		if _, err := a.Step(ctx, "gate", []agent.ToolCall{runCode(id, `await Promise.all([1, 2, 3].map(() => tools.effect({}))); await tools.math_add({a: 1, b: 2}); return "ok"`)}); err != nil {
			return err
		}
		report("told %s", id) // the step's result reached its caller
	}
}

// A process killed with SIGKILL while it steps a session with durability
// full loses nothing it told anyone (every step it returned has its result
// in the log) and never the record of an effect that started (every body of
// an effectful sub-call that ran has its dispatch-start in the log), and
// recovery closes what it left open.
func TestCrashKeepsWhatWasToldAndWhatStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	t.Run("sqlite", func(t *testing.T) {
		checkGateCrash(t, "sqlite://"+filepath.Join(t.TempDir(), "log.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		checkGateCrash(t, pgtest.Schema(t))
	})
}

func checkGateCrash(t *testing.T, url string) {
	ctx := context.Background()
	store, err := session.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { store.Close() }()
	if err := store.CreateSession(ctx, session.Session{ID: "gate", Scope: scope}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), gateCrashEnv+"="+url)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.StdinPipe(); err != nil { // closed when this process ends
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var told, started []string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		kind, id, _ := strings.Cut(lines.Text(), " ")
		if kind == "told" {
			told = append(told, id)
		} else {
			started = append(started, id)
		}
		if len(told) >= 5 && kind == "started" { // kill it inside a body
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for lines.Scan() { // what it reported before it died
		kind, id, _ := strings.Cut(lines.Text(), " ")
		if kind == "told" {
			told = append(told, id)
		} else {
			started = append(started, id)
		}
	}
	if len(told) < 5 {
		t.Fatalf("the child told only %v before it was killed", told)
	}
	store.Close()
	if store, err = session.Open(ctx, url); err != nil {
		t.Fatal(err)
	}
	evs := mustEvents(t, store, "gate")
	results, starts := map[string]bool{}, map[string]bool{}
	for _, e := range evs {
		switch p := e.Payload().(type) {
		case *session.ToolResult:
			results[p.CallID] = true
		case *session.CodeDispatchStart:
			starts[p.SubCallID] = true
		}
	}
	for _, id := range told {
		if !results[id] {
			t.Errorf("step %s was told but its result is not in the log", id)
		}
	}
	for _, id := range started {
		if !starts[id] {
			t.Errorf("effectful sub-call %s started but its dispatch-start is not in the log", id)
		}
	}
	_, rt, _, err := setup(registry.ModeCode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.New(rt, store, agent.Options{}).Recover(ctx, 0); err != nil {
		t.Fatal(err)
	}
	checkClosed(t, mustEvents(t, store, "gate"))
}
