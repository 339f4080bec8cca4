package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
)

// serveChild starts the test binary as `codemode serve` on store in a
// process of its own (see TestMain), so that it can be sent signals and
// killed; lines receives its log (lines nobody reads past a buffer of 1024
// are dropped, so that the child never waits on its stderr).
func serveChild(t *testing.T, yml, store string) (base string, cmd *exec.Cmd, lines <-chan string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := testkit.WriteFile(t, "c.yaml", yml)
	cmd = exec.Command(exe, "serve", "--addr", "127.0.0.1:0", "--store", store, "--config", cfg)
	cmd.Env = append(os.Environ(), asCodemode+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case ch <- sc.Text():
			default:
			}
		}
	}()
	line := waitLine(t, ch, "msg=listening")
	return "http://" + serveAddrRE.FindStringSubmatch(line)[1], cmd, ch
}

// waitLine returns the first log line containing s.
func waitLine(t *testing.T, lines <-chan string, s string) string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the log ended before a line with %q", s)
			}
			if strings.Contains(l, s) {
				return l
			}
		case <-deadline:
			t.Fatalf("no log line with %q", s)
		}
	}
}

// TestSecondSignalForcesExit: the first SIGINT starts a graceful shutdown
// that logs the run it waits for; with a run that would outlast the grace
// period (10 minutes), a second signal ends the process at once, status 1.
func TestSecondSignalForcesExit(t *testing.T) {
	base, cmd, lines := serveChild(t, "isolation: inproc\nlimits: {timeout: 10m}\nserver: {shutdown_grace: 10m}\n", "memory://")
	go http.Post(base+"/v1/run", "application/json", strings.NewReader(`{"code": "await new Promise(r => setTimeout(r, 600000)); return 1"}`))
	inflight := regexp.MustCompile(`(?m)^codemode_runs_in_flight (\S+)$`)
	for deadline := time.Now().Add(60 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the run never went in flight")
		}
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&b)
		resp.Body.Close()
		if m := inflight.FindStringSubmatch(b.String()); m != nil {
			if n, _ := strconv.ParseFloat(m[1], 64); n == 1 {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waiting := waitLine(t, lines, "msg=\"shutdown: waiting")
	if !strings.Contains(waiting, "runs=1") || !strings.Contains(waiting, "streams=0") || !strings.Contains(waiting, "grace=10m0s") {
		t.Errorf("shutdown line: %s", waiting)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLine(t, lines, "second signal: exiting now")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("exit: %v, want status 1", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("still running a minute after the second signal (the grace period is 10m)")
	}
}

// TestFirstSignalDrains: one SIGTERM with nothing in flight is a clean
// exit, status 0.
func TestFirstSignalDrains(t *testing.T) {
	_, cmd, lines := serveChild(t, "isolation: inproc\n", "memory://")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLine(t, lines, "signal received: stopping")
	if l := waitLine(t, lines, "msg=\"shutdown: waiting"); !strings.Contains(l, "runs=0") {
		t.Errorf("shutdown line: %s", l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v, want status 0", err)
	}
}
