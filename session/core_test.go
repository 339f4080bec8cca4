package session_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/codemode/codemode/session"
)

// Core.Prune runs a backend's rounds until one chooses fewer than
// PruneChunk sessions, adds up what they deleted, wakes the waiters of the
// deleted sessions, and stops at a failed round, an ended ctx, a closed
// store or a retention it refuses, without running a round for the last
// three.
func TestCorePruneRounds(t *testing.T) {
	var mu sync.Mutex
	gone := map[string]bool{}
	last := func(_ context.Context, id string) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		if gone[id] {
			return 0, session.ErrNotFound
		}
		return 1, nil
	}
	w := session.NewWaiters()
	c := session.NewCore(w, func([]*session.Pending) error { return nil }, nil, last)
	defer c.Stop()
	ctx := context.Background()
	keep := session.Retention{MaxCount: 1}

	// A reader waits on a session the second round deletes.
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- c.Wait(wctx, "s0150", 1) }()
	for !w.Waiting() {
		time.Sleep(time.Millisecond)
	}

	rounds := 0
	n, err := c.Prune(ctx, keep, func(_ context.Context, r session.Retention) ([]string, int, error) {
		if r != keep {
			t.Errorf("round got %+v", r)
		}
		size := session.PruneChunk
		if rounds == 1 {
			size = 60
		}
		ids := make([]string, size)
		mu.Lock()
		for i := range ids {
			ids[i] = fmt.Sprintf("s%04d", rounds*session.PruneChunk+i)
			gone[ids[i]] = true
		}
		mu.Unlock()
		rounds++
		return ids, size - 1, nil // one of each round's was leased meanwhile
	})
	if err != nil || rounds != 2 || n != session.PruneChunk-1+59 {
		t.Fatalf("Prune = %d, %v after %d rounds; want %d, nil after 2", n, err, rounds, session.PruneChunk-1+59)
	}
	if err := <-waited; !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the waiter on a pruned session got %v, want ErrNotFound", err)
	}

	boom := errors.New("boom")
	n, err = c.Prune(ctx, keep, func(context.Context, session.Retention) ([]string, int, error) { return nil, 3, boom })
	if !errors.Is(err, boom) || n != 3 {
		t.Errorf("a failed round: %d, %v; want 3 and the round's error", n, err)
	}

	noRound := func(context.Context, session.Retention) ([]string, int, error) {
		t.Error("a round ran")
		return nil, 0, nil
	}
	if _, err := c.Prune(ctx, session.Retention{MaxAge: -time.Hour}, noRound); err == nil {
		t.Error("a negative max age was taken")
	}
	done, stop := context.WithCancel(ctx)
	stop()
	if _, err := c.Prune(done, keep, noRound); !errors.Is(err, context.Canceled) {
		t.Errorf("an ended ctx: %v", err)
	}
	c.Stop()
	if _, err := c.Prune(ctx, keep, noRound); !errors.Is(err, session.ErrClosed) {
		t.Errorf("a closed store: %v", err)
	}
}
