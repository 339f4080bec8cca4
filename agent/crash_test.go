package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sqlite"
)

// crashEnv makes the test binary the process that crashes (see TestMain).
const crashEnv = "CODEMODE_AGENT_CRASH_CHILD"

func TestMain(m *testing.M) {
	// The stores of this module, for session.Open (as app registers them).
	sqlite.Register()
	postgres.Register()
	if url := os.Getenv(gateCrashEnv); url != "" {
		fmt.Fprintln(os.Stderr, "child:", gateCrashChild(url))
		os.Exit(1)
	}
	if path := os.Getenv(crashEnv); path != "" {
		if err := crashChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "child: the step finished; it should have been killed")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// crashProgram calls one tool and then sleeps in a second one until killed.
const crashProgram = `await tools.math_add({a: 1, b: 1}); await tools.util_sleep({ms: 60000}); return "unreachable"`

// crashChild runs, against the SQLite file at path, a step whose run_code
// call sleeps inside a nested call: the parent kills it there.
func crashChild(path string) error {
	ctx := context.Background()
	store, err := session.Open(ctx, "sqlite://"+path)
	if err != nil {
		return err
	}
	_, rt, _, err := setup(registry.ModeBoth)
	if err != nil {
		return err
	}
	a := agent.New(rt, store, agent.Options{})
	_, err = a.Step(ctx, "crash", []agent.ToolCall{
		call("k1", "math_add", `{"a":1,"b":2}`),
		runCode("k2", crashProgram),
	})
	return err
}

// A process killed with SIGKILL in the middle of a step with nested calls
// leaves a log that recovery closes: seqs without gaps, nothing lost, the
// open run_code call closed as interrupted, and the session goes on.
func TestCrashMidStepRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "log.db")
	store, err := session.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateSession(ctx, session.Session{ID: "crash", Scope: scope}); err != nil {
		t.Fatal(err)
	}
	// A step before the crash, whose context the child's step commits.
	_, rt, _, err := setup(registry.ModeBoth)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.New(rt, store, agent.Options{}).Step(ctx, "crash", []agent.ToolCall{probe("k0", probeArgs{Contexts: []string{"before the crash"}})}); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, store, "crash", func(e session.Event) bool {
		if e.Type != session.TypeCodeDispatchStart {
			return false
		}
		var d session.CodeDispatchStart
		return e.Decode(&d) == nil && d.Name == "util_sleep"
	})
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the child exited cleanly before it was killed")
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	// Restart: a new store and agent on the same file.
	store, err = session.Open(ctx, "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	crashed, err := store.Events(ctx, "crash", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tool/call k0", "tool/result k0",
		"user/context k0",
		"tool/call k1", "tool/result k1",
		"tool/call k2",
		"tool/code-dispatch-start k2:code:1", "tool/code-dispatch k2:code:1",
		"tool/code-dispatch-start k2:code:2",
	}
	if got := logged(t, crashed); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("log at the crash:\n got %v\nwant %v", got, want)
	}
	_, rt, _, err = setup(registry.ModeBoth)
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(rt, store, agent.Options{})
	if n, err := a.Recover(ctx, 0); err != nil || n != 1 {
		t.Fatalf("Recover = %d, %v; want 1", n, err)
	}
	recovered, err := store.Events(ctx, "crash", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range crashed {
		if r := recovered[i]; r.Seq != e.Seq || r.Type != e.Type || !bytes.Equal(r.Data, e.Data) {
			t.Fatalf("event %d changed in recovery", e.Seq)
		}
	}
	checkClosed(t, recovered)
	added := logged(t, recovered[len(crashed):])
	if fmt.Sprint(added) != fmt.Sprint([]string{"tool/code-dispatch k2:code:2", "tool/result k2"}) {
		t.Fatalf("recovery appended %v", added)
	}
	r := decode[session.ToolResult](t, recovered[len(recovered)-1])
	if !r.IsError || r.Error.Code != registry.CodeAborted || r.Error.Message != agent.Interrupted {
		t.Fatalf("run_code closed as %+v", r)
	}

	// The session keeps working, numbering after the crashed step.
	res, err := a.Step(ctx, "crash", []agent.ToolCall{call("k3", "math_add", `{"a":2,"b":2}`)})
	if err != nil || res.Results[0].Result.IsError() {
		t.Fatalf("step after recovery: %v %+v", err, res)
	}
	calls := ofType[session.ToolCall](t, mustEvents(t, store, "crash"), session.TypeToolCall)
	if last := calls[len(calls)-1]; last.Turn != 1 || last.Step != 3 {
		t.Fatalf("step after recovery numbered %+v", last)
	}
	checkClosed(t, mustEvents(t, store, "crash"))
}

func mustEvents(t *testing.T, store session.Store, sid string) []session.Event {
	t.Helper()
	evs, err := store.Events(context.Background(), sid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
