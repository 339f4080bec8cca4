package app_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/agent"
	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/session"
)

// replicaEnv makes the test binary a replica (replicaChild) on the store it
// names.
const replicaEnv = "CODEMODE_APP_REPLICA_CHILD"

func TestMain(m *testing.M) {
	if url := os.Getenv(replicaEnv); url != "" {
		if err := replicaChild(url); err != nil {
			fmt.Fprintln(os.Stderr, "replica:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// replicaLeaseTTL is the lease of the test's replicas: a stopped one's
// calls are closed within it and a sweep.
const replicaLeaseTTL = time.Second

// replicaConfig is a replica's configuration on the store at url.
func replicaConfig(url string) config.Config {
	cfg := config.Default()
	cfg.Store = url
	cfg.Isolation = "inproc"
	return cfg
}

// blockTool says "started" on stdout and never returns.
func blockTool() *registry.Tool {
	return registry.MustTyped("block", "Blocks forever.", func(ctx context.Context, _ registry.Exec, _ struct{}) (struct{}, error) {
		fmt.Println("started")
		<-ctx.Done()
		select {} // a crashed process answers nothing
	}, nil)
}

// replicaChild runs a program calling block in a new session, and waits
// to be killed.
func replicaChild(url string) error {
	go func() { // the parent holds our stdin: when it goes, so do we
		io.Copy(io.Discard, os.Stdin)
		os.Exit(4)
	}()
	a, err := app.New(context.Background(), replicaConfig(url), app.Options{Tools: []*registry.Tool{blockTool()}, LeaseTTL: replicaLeaseTTL})
	if err != nil {
		return err
	}
	_, err = a.Run(context.Background(), app.RunRequest{Code: `await tools.block({}); return 1`})
	return err
}

// TestReplicaClosesACrashedReplicasCalls (issue 31, class 8): with two
// replicas on one PostgreSQL database, a replica killed while its run waits
// on a tool leaves the run's call open; the other replica, which keeps
// running, leaves it open while the first lives (its lease is renewed) and
// closes it as interrupted, with the nested call, within seconds of the
// kill, without a restart.
func TestReplicaClosesACrashedReplicasCalls(t *testing.T) {
	url := pgtest.Schema(t)
	survivor, err := app.New(context.Background(), replicaConfig(url), app.Options{Tools: []*registry.Tool{blockTool()}, LeaseTTL: replicaLeaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	defer survivor.Close()

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), replicaEnv+"="+url)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer child.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "started" {
		t.Fatalf("the replica said %q, %v", line, err)
	}

	ctx := context.Background()
	open, err := survivor.Store.OpenCalls(ctx)
	if err != nil || len(open) != 1 {
		t.Fatalf("open calls while the replica runs: %+v, %v", open, err)
	}
	// Three leases' time with the replica alive: its call stays open.
	time.Sleep(3 * replicaLeaseTTL)
	if still, err := survivor.Store.OpenCalls(ctx); err != nil || len(still) != 1 {
		t.Fatalf("a live replica's call was closed: %+v, %v", still, err)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for {
		left, err := survivor.Store.OpenCalls(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		// Generous: the lease and a sweep take a second or two.
		if time.Since(killed) > 30*time.Second {
			t.Fatalf("the crashed replica's call is still open %v after the kill", time.Since(killed))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("closed %v after the kill", time.Since(killed).Round(time.Millisecond))

	events, err := survivor.Store.Events(ctx, open[0].SessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var dispatch, result bool
	for _, e := range events {
		switch p := e.Payload().(type) {
		case *session.CodeDispatch:
			dispatch = p.IsError && p.Error != nil && p.Error.Message == agent.Interrupted
		case *session.ToolResult:
			result = p.CallID == open[0].Call.CallID && p.IsError && p.Error != nil && p.Error.Code == registry.CodeAborted && p.Error.Message == agent.Interrupted
		}
	}
	if !dispatch || !result {
		t.Fatalf("the calls were not closed as interrupted: %d events", len(events))
	}
	// The survivor steps the session on: the lease it took is free.
	if _, err := survivor.Run(ctx, app.RunRequest{SessionID: open[0].SessionID, Code: `return 2`}); err != nil {
		t.Fatalf("a run after recovery: %v", err)
	}
}
