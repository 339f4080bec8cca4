package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// RunShared runs the tests that need two Store instances on one database, in
// parallel. open must return two instances over the same new, empty database;
// the suite closes them.
func RunShared(t *testing.T, open func(t *testing.T) (a, b session.Store)) {
	tests := []struct {
		name string
		run  func(t *testing.T, a, b session.Store)
	}{
		{"ConcurrentAppendsTwoInstances", testSharedAppends},
		{"WaitWakesOnOtherInstance", testSharedWait},
		{"SubmitAcrossInstances", testSharedSubmit},
		{"CreateRace", testSharedCreateRace},
		{"LeaseAcrossInstances", testSharedLease},
		{"DeleteWakesOtherInstance", testSharedDeleteWakes},
		{"OpenCallsAcrossInstances", testSharedOpenCalls},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // every test has a database of its own
			a, b := open(t)
			t.Cleanup(func() { a.Close(); b.Close() })
			tt.run(t, a, b)
		})
	}
}

func testSharedAppends(t *testing.T, a, b session.Store) {
	ctx := context.Background()
	create(t, a, "shared")
	const workers, appends = 4, 50
	stores := []session.Store{a, b}
	concurrently(t, 2*workers, func(w int) error {
		s := stores[w/workers]
		for i := 0; i < appends; i++ {
			if _, err := s.Append(ctx, "shared", contextEvent(fmt.Sprintf("w%d-%d", w%workers, i))); err != nil {
				return err
			}
		}
		return nil
	})
	checkSeqs(t, a, "shared", 2*workers*appends)
	checkSeqs(t, b, "shared", 2*workers*appends)
}

func testSharedWait(t *testing.T, a, b session.Store) {
	create(t, a, "w")
	done := waitAsync(a, "w", 0)
	mustAppend(t, b, "w", contextEvent("from b"))
	if err := <-done; err != nil {
		t.Fatalf("Wait on instance a after an append through b: %v", err)
	}
}

func testSharedSubmit(t *testing.T, a, b session.Store) {
	create(t, a, "shared")
	const writes = 100
	var wg sync.WaitGroup
	results := make([][]*session.Ticket, 2)
	for i, s := range []session.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < writes; j++ {
				w := session.Write{SessionID: "shared", Events: []session.Event{contextEvent(fmt.Sprintf("%d.%d", i, j))}}
				if j%10 == 0 { // a fresh session too, created in its first write
					w = session.Write{SessionID: fmt.Sprintf("new-%d-%d", i, j), Create: &session.Session{}, Events: w.Events}
				}
				results[i] = append(results[i], s.Submit(context.Background(), w))
			}
		}()
	}
	wg.Wait()
	for i, tickets := range results {
		last := int64(0)
		for j, tk := range tickets {
			got, err := wait(t, tk)
			if err != nil {
				t.Fatalf("instance %d, write %d: %v", i, j, err)
			}
			if j%10 != 0 {
				if got[0].Seq <= last {
					t.Fatalf("instance %d: write %d got seq %d after %d", i, j, got[0].Seq, last)
				}
				last = got[0].Seq
			}
		}
	}
	checkSeqs(t, b, "shared", 2*(writes-writes/10))
	for _, id := range []string{"new-0-0", "new-1-90"} {
		checkSeqs(t, a, id, 1)
	}
}

func testSharedCreateRace(t *testing.T, a, b session.Store) {
	for round := 0; round < 20; round++ {
		id := fmt.Sprintf("race-%d", round)
		ta := a.Submit(context.Background(), session.Write{SessionID: id, Create: &session.Session{Scope: "a"}, Events: []session.Event{contextEvent("a")}})
		tb := b.Submit(context.Background(), session.Write{SessionID: id, Create: &session.Session{Scope: "b"}, Events: []session.Event{contextEvent("b")}})
		_, errA := wait(t, ta)
		_, errB := wait(t, tb)
		if (errA == nil) == (errB == nil) || !errors.Is(errA, session.ErrExists) && !errors.Is(errB, session.ErrExists) {
			t.Fatalf("round %d: creates returned %v and %v, want one success and one ErrExists", round, errA, errB)
		}
		sess, err := a.GetSession(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		winner := "a"
		if errA != nil {
			winner = "b"
		}
		if got := Texts(t, mustEvents(t, b, id, 0, 0)); sess.Scope != winner || len(got) != 1 || got[0] != winner {
			t.Fatalf("round %d: %s won but the session is %+v with %v", round, winner, sess, got)
		}
	}
}

func testSharedLease(t *testing.T, a, b session.Store) {
	ctx := context.Background()
	create(t, a, "s")
	la, err := a.AcquireLease(ctx, "s", "replica-a", shortTTL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireLease(ctx, "s", "replica-b", time.Hour); !errors.Is(err, session.ErrLeased) {
		t.Fatalf("b acquiring a's lease: err = %v, want ErrLeased", err)
	}
	if _, err := wait(t, a.Submit(ctx, session.Write{SessionID: "s", Lease: &la, Events: []session.Event{contextEvent("a1")}})); err != nil {
		t.Fatal(err)
	}
	lb := acquireWhenFree(t, b, "s", "replica-b", time.Hour) // after a's ttl
	if lb.Token <= la.Token {
		t.Fatalf("b's token %d is not above a's %d", lb.Token, la.Token)
	}
	if _, err := wait(t, a.Submit(ctx, session.Write{SessionID: "s", Lease: &la, Events: []session.Event{contextEvent("a late")}})); !errors.Is(err, session.ErrLeaseLost) {
		t.Fatalf("a writing after b took the lease: err = %v, want ErrLeaseLost", err)
	}
	if _, err := wait(t, b.Submit(ctx, session.Write{SessionID: "s", Lease: &lb, Events: []session.Event{contextEvent("b1")}})); err != nil {
		t.Fatal(err)
	}
	if got := Texts(t, mustEvents(t, a, "s", 0, 0)); !slices.Equal(got, []string{"a1", "b1"}) {
		t.Fatalf("log %v", got)
	}
	// Racing replicas: one wins each free lease.
	for round := 0; round < 10; round++ {
		id := fmt.Sprintf("r%d", round)
		create(t, a, id)
		var wg sync.WaitGroup
		var errs [2]error
		for i, s := range []session.Store{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.AcquireLease(ctx, id, fmt.Sprintf("replica-%d", i), time.Hour)
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) || !errors.Is(errs[0], session.ErrLeased) && !errors.Is(errs[1], session.ErrLeased) {
			t.Fatalf("round %d: acquires returned %v and %v", round, errs[0], errs[1])
		}
	}
}

func testSharedDeleteWakes(t *testing.T, a, b session.Store) {
	create(t, a, "d")
	done := waitAsync(a, "d", 0)
	if err := b.DeleteSession(context.Background(), "d"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Wait on a after b deleted the session: %v, want ErrNotFound", err)
	}
}

func testSharedOpenCalls(t *testing.T, a, b session.Store) {
	create(t, a, "oc")
	mustAppend(t, a, "oc", callEvent(t, 1, 1, "c1", "util_echo", `{}`))
	got, err := b.OpenCalls(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Call.CallID != "c1" {
		t.Fatalf("OpenCalls through b = %+v, want c1", got)
	}
}
