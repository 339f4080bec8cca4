package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/codemode/codemode/session"
)

// Leases keep replicas that share a store from interleaving one session's
// steps: a step holds the session's lease from the store (Options.Leases),
// and its writes are fenced by it, so a step that stalled past the lease's
// ttl cannot write after another replica took over. The lease of a step
// whose process stopped lapses after the ttl: RecoverLapsed, which a
// replica runs every few seconds, takes it over and closes the calls left.

// Defaults for lease timing.
const (
	DefaultLeaseTTL = 10 * time.Second
	leaseRetryFirst = 10 * time.Millisecond
	leaseRetryMax   = 250 * time.Millisecond
)

// heldLease is a lease a step holds, renewed in the background until the
// step ends.
type heldLease struct {
	lease session.Lease
	stop  context.CancelFunc
	done  chan struct{}
}

// takeLease acquires the session's lease for this agent, waiting while
// another holder has it, as long as ctx allows. It returns nil when leases
// are off, and for a session the step creates with its first write (nobody
// else can know it; with leases, steps create theirs first).
func (a *Agent) takeLease(ctx context.Context, sessionID string, creating bool) (*session.Lease, error) {
	if !a.opts.Leases || creating {
		return nil, nil
	}
	wait := leaseRetryFirst
	for {
		l, err := a.store.AcquireLease(ctx, sessionID, a.owner, a.opts.LeaseTTL)
		switch {
		case err == nil:
			a.renewLease(l)
			return &l, nil
		case !errors.Is(err, session.ErrLeased):
			return nil, fmt.Errorf("agent: lease of session %q: %w", sessionID, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("agent: session %q is being stepped elsewhere: %w", sessionID, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, leaseRetryMax)
	}
}

// renewLease keeps a lease alive while its step runs.
func (a *Agent) renewLease(l session.Lease) {
	ctx, stop := context.WithCancel(context.Background())
	h := &heldLease{lease: l, stop: stop, done: make(chan struct{})}
	a.mu.Lock()
	a.leases[l.SessionID] = h
	a.mu.Unlock()
	go func() {
		defer close(h.done)
		tick := time.NewTicker(a.opts.LeaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := a.store.AcquireLease(ctx, l.SessionID, a.owner, a.opts.LeaseTTL); err != nil && ctx.Err() == nil {
					a.opts.Logger.Warn("agent: lease not renewed", "session", l.SessionID, "err", err)
				}
			}
		}
	}()
}

// endLease ends a step: it stops the lease's renewal and releases it, then
// unlocks the session in this process. The release happens after the step
// has returned its results (the caller's reply does not wait for it); the
// session's next step in this process waits for it through the lock.
func (a *Agent) endLease(l *session.Lease, unlock func()) {
	if l == nil {
		unlock()
		return
	}
	a.mu.Lock()
	h := a.leases[l.SessionID]
	delete(a.leases, l.SessionID)
	a.mu.Unlock()
	go func() {
		defer unlock()
		if h != nil {
			h.stop()
			<-h.done
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.store.ReleaseLease(ctx, *l); err != nil && !errors.Is(err, session.ErrLeaseLost) {
			a.opts.Logger.Warn("agent: lease not released", "session", l.SessionID, "err", err)
		}
	}()
}
