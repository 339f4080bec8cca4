package session_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sessiontest"
	"github.com/codemode/codemode/session/sqlite"
)

// childEnv makes the test binary a child process (see TestMain): its value
// is "MODE STORE-URL".
const childEnv = "CODEMODE_SESSION_TEST_CHILD"

func TestMain(m *testing.M) {
	// The stores of this module, for session.Open (as app registers them).
	sqlite.Register()
	postgres.Register()
	if spec := os.Getenv(childEnv); spec != "" {
		mode, url, _ := strings.Cut(spec, " ")
		if err := runChild(mode, url); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild is a child process, killed by its parent:
//
//	append  appends to session "proc" with Append, one batch at a time
//	submit  submits writes without waiting (to "proc" and to sessions it
//	        creates in their first write), up to 32 unresolved at once
//	lease   takes the lease of session "proc" for 2s and sleeps
//
// append and submit print "SESSION SEQ TEXT" for each event once it is
// durable (its Append returned, its ticket resolved): a promise.
func runChild(mode, url string) error {
	ctx := context.Background()
	s, err := session.Open(ctx, url)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	report := func(id string, events []session.Event) error {
		for _, e := range events {
			var c session.UserContext
			if err := e.Decode(&c); err != nil {
				return err
			}
			fmt.Fprintf(out, "%s %d %s\n", id, e.Seq, c.Text)
		}
		return out.Flush()
	}
	switch mode {
	case "append":
		for i := 0; i < 100000; i++ {
			batch := []session.Event{ctxEvent(fmt.Sprintf("child-%d", i))}
			if i%3 == 2 {
				batch = append(batch, ctxEvent(fmt.Sprintf("child-%d+", i)))
			}
			got, err := s.Append(ctx, "proc", batch...)
			if err != nil {
				return err
			}
			if err := report("proc", got); err != nil {
				return err
			}
		}
	case "submit":
		type inflight struct {
			id string
			tk *session.Ticket
		}
		var pending []inflight
		for i := 0; i < 100000; i++ {
			w := session.Write{SessionID: "proc", Events: []session.Event{ctxEvent(fmt.Sprintf("child-%d", i))}}
			switch {
			case i%10 == 5:
				w = session.Write{SessionID: fmt.Sprintf("child-%d", i), Create: &session.Session{}, Events: w.Events}
			case i%10 == 6:
				w.SessionID = fmt.Sprintf("child-%d", i-1)
			case i%4 == 3:
				w.Events = append(w.Events, ctxEvent(fmt.Sprintf("child-%d+", i)))
			}
			pending = append(pending, inflight{w.SessionID, s.Submit(ctx, w)})
			// Report what has resolved, in order; wait when 32 are in flight.
			for len(pending) > 0 && (len(pending) >= 32 || resolved(pending[0].tk)) {
				got, err := pending[0].tk.Wait(ctx)
				if err != nil {
					return err
				}
				if err := report(pending[0].id, got); err != nil {
					return err
				}
				pending = pending[1:]
			}
		}
	case "lease":
		l, err := s.AcquireLease(ctx, "proc", "child", 2*time.Second)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "token %d\n", l.Token)
		out.Flush()
		time.Sleep(time.Hour)
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	return s.Close()
}

func resolved(tk *session.Ticket) bool {
	select {
	case <-tk.Done():
		return true
	default:
		return false
	}
}

func ctxEvent(text string) session.Event {
	e, err := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "test", Text: text})
	if err != nil {
		panic(err) // a UserContext always marshals
	}
	return e
}

// startChild starts the test binary as a child in mode on the store at url;
// it is killed when the test ends.
func startChild(t *testing.T, mode, url string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode+" "+url)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, stdout
}

// crashTest runs test on each store the crash tests run on, a SQLite file
// and, when reachable, PostgreSQL, each with the default durability (full):
// s is open on it with session "proc" created, and a child (cmd, printing to
// stdout) runs in mode on it; open opens the store again.
func crashTest(t *testing.T, mode string, test func(t *testing.T, s session.Store, open func() session.Store, cmd *exec.Cmd, stdout io.Reader)) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	run := func(t *testing.T, url string) {
		open := func() session.Store { return sessiontest.Open(t, session.Open, url) }
		s := open()
		if err := s.CreateSession(context.Background(), session.Session{ID: "proc"}); err != nil {
			t.Fatal(err)
		}
		cmd, stdout := startChild(t, mode, url)
		test(t, s, open, cmd, stdout)
	}
	t.Run("sqlite", func(t *testing.T) { run(t, "sqlite://"+filepath.Join(t.TempDir(), "log.db")) })
	t.Run("postgres", func(t *testing.T) { run(t, postgresSchema(t)) })
}

// TestCrashAppend appends to one session from this process and from a child
// process on the same database at once, kills the child with SIGKILL in the
// middle of its appends, and checks that the log has every event either
// process was told is durable, numbered 1..N without gaps or duplicates.
func TestCrashAppend(t *testing.T) {
	testCrash(t, "append")
}

// TestCrashSubmit is TestCrashAppend with a child that submits through the
// group commit without waiting, reporting each write once its ticket
// resolved, and creates sessions in their first writes.
func TestCrashSubmit(t *testing.T) {
	testCrash(t, "submit")
}

func testCrash(t *testing.T, mode string) {
	crashTest(t, mode, func(t *testing.T, s session.Store, open func() session.Store, cmd *exec.Cmd, stdout io.Reader) {
		ctx := context.Background()

		// Our own appenders run while the child appends.
		const workers, appends = 4, 40
		type key struct {
			id  string
			seq int64
		}
		promised := map[key]string{} // from both processes
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
					promised[key{"proc", got[0].Seq}] = text
					mu.Unlock()
				}
			}()
		}

		// Kill the child once it has appended a while, whatever it is doing.
		const kill = 300
		lines := bufio.NewScanner(stdout)
		childEvents := 0
		for lines.Scan() {
			f := strings.SplitN(lines.Text(), " ", 3)
			if len(f) != 3 {
				t.Fatalf("child printed %q", lines.Text())
			}
			seq, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatalf("child printed %q", lines.Text())
			}
			mu.Lock()
			if prev, dup := promised[key{f[0], seq}]; dup {
				t.Errorf("%s seq %d given to both %q and %q", f[0], seq, prev, f[2])
			}
			promised[key{f[0], seq}] = f[2]
			mu.Unlock()
			if childEvents++; childEvents == kill {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := cmd.Wait(); err == nil || childEvents < kill {
			t.Fatalf("the child ended by itself after %d events: %v", childEvents, err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		// The log, read through this store and through a fresh one, holds
		// every promised event at its seq, and every session's seqs run 1..N.
		for _, st := range []session.Store{s, open()} {
			bySession := map[string][]session.Event{}
			for k := range promised {
				if _, ok := bySession[k.id]; ok {
					continue
				}
				evs, err := st.Events(ctx, k.id, 0, 0)
				if err != nil {
					t.Fatalf("session %s: %v", k.id, err)
				}
				for i, e := range evs {
					if e.Seq != int64(i+1) {
						t.Fatalf("session %s: event %d has seq %d", k.id, i, e.Seq)
					}
				}
				if sess, err := st.GetSession(ctx, k.id); err != nil || sess.LastSeq != int64(len(evs)) {
					t.Fatalf("session %s: header %+v, %v; the log has %d events", k.id, sess, err, len(evs))
				}
				bySession[k.id] = evs
			}
			for k, text := range promised {
				evs := bySession[k.id]
				if k.seq < 1 || k.seq > int64(len(evs)) {
					t.Fatalf("promised %s seq %d (%q) is missing: the session has %d events", k.id, k.seq, text, len(evs))
				}
				var c session.UserContext
				if err := evs[k.seq-1].Decode(&c); err != nil {
					t.Fatal(err)
				}
				if c.Text != text {
					t.Fatalf("%s seq %d holds %q, was promised to %q", k.id, k.seq, c.Text, text)
				}
			}
			if n := len(bySession["proc"]); n < workers*appends {
				t.Fatalf("proc has %d events, fewer than were promised", n)
			}
			// A write of two events is in the log whole or not at all, even
			// the one the kill interrupted.
			texts := sessiontest.Texts(t, bySession["proc"])
			for i, text := range texts {
				if strings.HasSuffix(text, "+") && (i == 0 || texts[i-1]+"+" != text) {
					t.Fatalf("proc holds %q without the event written with it (before it: %q)", text, texts[max(i-1, 0)])
				}
				if strings.HasPrefix(text, "child-") && !strings.HasSuffix(text, "+") && needsPair(mode, text) && (i+1 == len(texts) || texts[i+1] != text+"+") {
					t.Fatalf("proc holds %q without the event written with it", text)
				}
			}
			// The session keeps working after the crash.
			if _, err := st.Append(ctx, "proc", ctxEvent("after")); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// needsPair reports whether the child wrote the event "child-N" together
// with "child-N+".
func needsPair(mode, text string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(text, "child-"))
	if err != nil {
		return false
	}
	if mode == "append" {
		return n%3 == 2
	}
	return n%4 == 3 && n%10 != 5 && n%10 != 6
}

// TestCrashLease: a child process takes a session's lease and is killed;
// until the lease's ttl runs out nobody else gets it, then the next holder
// gets a greater token.
func TestCrashLease(t *testing.T) {
	crashTest(t, "lease", func(t *testing.T, s session.Store, _ func() session.Store, cmd *exec.Cmd, stdout io.Reader) {
		ctx := context.Background()
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() {
			t.Fatalf("the child printed nothing: %v", cmd.Wait())
		}
		var childToken int64
		if _, err := fmt.Sscanf(lines.Text(), "token %d", &childToken); err != nil {
			t.Fatalf("child printed %q", lines.Text())
		}
		if _, err := s.AcquireLease(ctx, "proc", "parent", time.Hour); !errors.Is(err, session.ErrLeased) || !strings.Contains(err.Error(), `"child"`) {
			t.Fatalf("acquiring the child's live lease: err = %v, want ErrLeased naming the child", err)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		var l session.Lease
		for deadline := time.Now().Add(30 * time.Second); ; {
			var err error
			if l, err = s.AcquireLease(ctx, "proc", "parent", time.Hour); err == nil {
				break
			}
			if !errors.Is(err, session.ErrLeased) || time.Now().After(deadline) {
				t.Fatalf("acquiring the dead child's lease: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if l.Token <= childToken {
			t.Fatalf("token %d after the child's %d", l.Token, childToken)
		}
		// The child's lease fences nothing any more.
		if _, err := s.Submit(ctx, session.Write{SessionID: "proc", Lease: &session.Lease{Owner: "child", Token: childToken},
			Events: []session.Event{ctxEvent("zombie")}}).Wait(ctx); !errors.Is(err, session.ErrLeaseLost) {
			t.Fatalf("a write fenced by the dead child's lease: err = %v, want ErrLeaseLost", err)
		}
	})
}
