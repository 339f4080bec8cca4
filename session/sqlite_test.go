package session_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/codemode/codemode/session"
)

// childEnv makes the test binary an appender process (see TestMain).
const childEnv = "CODEMODE_SESSION_TEST_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		if err := runChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild appends to session "proc" of the SQLite file at path until killed
// (or 100000 appends), printing "SEQ TEXT" for each event once Append has
// returned: a promise that it is durable.
func runChild(path string) error {
	s, err := session.OpenSQLite(context.Background(), path)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; i < 100000; i++ {
		batch := []session.Event{ctxEvent(fmt.Sprintf("child-%d", i))}
		if i%3 == 2 {
			batch = append(batch, ctxEvent(fmt.Sprintf("child-%d+", i)))
		}
		got, err := s.Append(context.Background(), "proc", batch...)
		if err != nil {
			return err
		}
		for _, e := range got {
			var c session.UserContext
			if err := e.Decode(&c); err != nil {
				return err
			}
			fmt.Fprintf(out, "%d %s\n", e.Seq, c.Text)
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return s.Close()
}

func ctxEvent(text string) session.Event {
	e, err := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "test", Text: text})
	if err != nil {
		panic(err) // a UserContext always marshals
	}
	return e
}

// TestSQLiteTwoProcesses appends to one session from this process and from a
// child process on the same file at once, kills the child with SIGKILL in
// the middle of its appends, and checks that the log has every event either
// process was told is durable, numbered 1..N without gaps or duplicates.
func TestSQLiteTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "log.db")
	s := openSQLite(t, path)
	ctx := context.Background()
	if err := s.CreateSession(ctx, session.Session{ID: "proc"}); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	// Our own appenders run while the child appends.
	const workers, appends = 4, 40
	promised := map[int64]string{} // seq → text, from both processes
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < appends; i++ {
				text := fmt.Sprintf("parent-%d-%d", w, i)
				got, err := s.Append(ctx, "proc", ctxEvent(text))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				promised[got[0].Seq] = text
				mu.Unlock()
			}
		}()
	}

	// Kill the child once it has appended a while, whatever it is doing.
	lines := bufio.NewScanner(stdout)
	childEvents := 0
	for lines.Scan() {
		seqText, text, ok := strings.Cut(lines.Text(), " ")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if !ok || err != nil {
			t.Fatalf("child printed %q", lines.Text())
		}
		mu.Lock()
		if prev, dup := promised[seq]; dup {
			t.Errorf("seq %d given to both %q and %q", seq, prev, text)
		}
		promised[seq] = text
		mu.Unlock()
		if childEvents++; childEvents == 60 {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err == nil || childEvents < 60 {
		t.Fatalf("the child ended by itself after %d events: %v", childEvents, err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The log, read through this store and through a fresh one, holds every
	// promised event at its seq, and seqs run 1..N.
	for _, st := range []session.Store{s, openSQLite(t, path)} {
		evs, err := st.Events(ctx, "proc", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d", i, e.Seq)
			}
		}
		for seq, text := range promised {
			if seq < 1 || seq > int64(len(evs)) {
				t.Fatalf("promised seq %d (%q) is missing: the log has %d events", seq, text, len(evs))
			}
			var c session.UserContext
			if err := evs[seq-1].Decode(&c); err != nil {
				t.Fatal(err)
			}
			if c.Text != text {
				t.Fatalf("seq %d holds %q, was promised to %q", seq, c.Text, text)
			}
		}
		if len(evs) < workers*appends+60 {
			t.Fatalf("the log has %d events, fewer than were promised", len(evs))
		}
		// The session keeps working after the crash.
		if _, err := st.Append(ctx, "proc", ctxEvent("after")); err != nil {
			t.Fatal(err)
		}
	}
}
