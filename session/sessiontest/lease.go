package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// shortTTL is the ttl of leases a test waits out: it polls until the lease
// is free, so only waitLimit bounds it.
const shortTTL = 200 * time.Millisecond

// testLeases: acquire, renew, refuse, expire, fence, release.
func testLeases(t *testing.T, s session.Store) {
	ctx := context.Background()
	create(t, s, "s")
	for _, bad := range []struct {
		owner string
		ttl   time.Duration
	}{{"", time.Second}, {"a\nb", time.Second}, {strings.Repeat("o", 300), time.Second}, {"ok", 0}, {"ok", -time.Second}} {
		if _, err := s.AcquireLease(ctx, "s", bad.owner, bad.ttl); err == nil || errors.Is(err, session.ErrLeased) {
			t.Errorf("AcquireLease(owner %q, ttl %v): err = %v, want a validation error", bad.owner, bad.ttl, err)
		}
	}
	if _, err := s.AcquireLease(ctx, "ghost", "a", time.Second); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("AcquireLease(unknown): err = %v, want ErrNotFound", err)
	}
	if err := s.ReleaseLease(ctx, session.Lease{SessionID: "ghost", Owner: "a", Token: 1}); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("ReleaseLease(unknown): err = %v, want ErrNotFound", err)
	}

	before := time.Now()
	a, err := s.AcquireLease(ctx, "s", "a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if a.SessionID != "s" || a.Owner != "a" || a.Token < 1 || a.Expires.Before(before.Add(time.Hour)) || a.Expires.After(time.Now().Add(time.Hour)) {
		t.Fatalf("lease %+v", a)
	}
	// Renewing keeps the token; another owner is refused, saying who holds it.
	renewed, err := s.AcquireLease(ctx, "s", "a", 2*time.Hour)
	if err != nil || renewed.Token != a.Token || !renewed.Expires.After(a.Expires) {
		t.Fatalf("renewal = %+v, %v; want token %d and a later expiry", renewed, err, a.Token)
	}
	if _, err := s.AcquireLease(ctx, "s", "b", time.Hour); !errors.Is(err, session.ErrLeased) || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("AcquireLease by another owner: err = %v, want ErrLeased naming a", err)
	}
	if err := s.ReleaseLease(ctx, session.Lease{SessionID: "s", Owner: "b", Token: a.Token}); !errors.Is(err, session.ErrLeaseLost) {
		t.Fatalf("ReleaseLease by a non-holder: err = %v, want ErrLeaseLost", err)
	}
	// Released, it goes to the next owner with a greater token; the old
	// holder's fenced writes and release fail.
	if err := s.ReleaseLease(ctx, a); err != nil {
		t.Fatal(err)
	}
	b, err := s.AcquireLease(ctx, "s", "b", shortTTL)
	if err != nil || b.Token <= a.Token {
		t.Fatalf("lease after release = %+v, %v; want a token above %d", b, err, a.Token)
	}
	if _, err := wait(t, s.Submit(ctx, session.Write{SessionID: "s", Lease: &a, Events: []session.Event{contextEvent("from a")}})); !errors.Is(err, session.ErrLeaseLost) {
		t.Fatalf("write fenced by a released lease: err = %v, want ErrLeaseLost", err)
	}
	if err := s.ReleaseLease(ctx, a); !errors.Is(err, session.ErrLeaseLost) {
		t.Fatalf("second release: err = %v, want ErrLeaseLost", err)
	}
	if _, err := wait(t, s.Submit(ctx, session.Write{SessionID: "s", Lease: &b, Events: []session.Event{contextEvent("from b")}})); err != nil {
		t.Fatalf("write fenced by the held lease: %v", err)
	}
	// b's lease expires; c takes it; b can no longer write.
	c := acquireWhenFree(t, s, "s", "c", time.Hour)
	if c.Token <= b.Token {
		t.Fatalf("token after expiry %d, want above %d", c.Token, b.Token)
	}
	if _, err := wait(t, s.Submit(ctx, session.Write{SessionID: "s", Lease: &b, Events: []session.Event{contextEvent("late b")}})); !errors.Is(err, session.ErrLeaseLost) {
		t.Fatalf("write fenced by an expired, retaken lease: err = %v, want ErrLeaseLost", err)
	}
	if got := Texts(t, mustEvents(t, s, "s", 0, 0)); len(got) != 1 || got[0] != "from b" {
		t.Fatalf("log holds %v, want only b's write", got)
	}
	// A lease that expired but was not retaken still fences correctly: its
	// holder may write (nobody else stepped) and renew with the same token.
	if err := s.ReleaseLease(ctx, c); err != nil {
		t.Fatal(err)
	}
	d, err := s.AcquireLease(ctx, "s", "d", shortTTL)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * shortTTL) // let it lapse; nothing else contends for the session
	if _, err := wait(t, s.Submit(ctx, session.Write{SessionID: "s", Lease: &d, Events: []session.Event{contextEvent("d after expiry")}})); err != nil {
		t.Fatalf("write of a lapsed lease nobody took: %v", err)
	}
	if again, err := s.AcquireLease(ctx, "s", "d", time.Hour); err != nil || again.Token != d.Token {
		t.Fatalf("renewing a lapsed lease = %+v, %v; want token %d", again, err, d.Token)
	}
	// Writes without a lease are not fenced.
	mustAppend(t, s, "s", contextEvent("unfenced"))
}

// testLeaseRace: of many owners racing for a free lease, one wins.
func testLeaseRace(t *testing.T, s session.Store) {
	create(t, s, "s")
	const racers = 12
	var wg sync.WaitGroup
	wins := make(chan session.Lease, racers)
	errs := make(chan error, racers)
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := s.AcquireLease(context.Background(), "s", fmt.Sprintf("owner-%d", i), time.Hour)
			switch {
			case err == nil:
				wins <- l
			case !errors.Is(err, session.ErrLeased):
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(wins)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(wins); n != 1 {
		t.Fatalf("%d owners acquired one lease", n)
	}
}

// acquireWhenFree acquires a lease, retrying while another owner holds it
// (until its ttl runs out).
func acquireWhenFree(t *testing.T, s session.Store, id, owner string, ttl time.Duration) session.Lease {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		l, err := s.AcquireLease(context.Background(), id, owner, ttl)
		if err == nil {
			return l
		}
		if !errors.Is(err, session.ErrLeased) || time.Now().After(deadline) {
			t.Fatalf("AcquireLease(%s, %s): %v", id, owner, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
