package sessiontest

import (
	"context"
	"fmt"
	"sync"

	"github.com/codemode/codemode/session"
)

// HeldStore wraps a Store so that a test can hold the durability of its
// writes back, as a group commit waiting for its flush holds it: while
// holding, each write is made at once but its ticket resolves only at
// Release, with the write's own outcome, or an error when it was held
// failing. It is safe for concurrent use.
type HeldStore struct {
	session.Store

	mu      sync.Mutex
	holding bool     // guarded by mu
	failing bool     // guarded by mu
	held    []func() // resolutions waiting for Release; guarded by mu
}

// ErrFlush is the error of a write held failing: the store's own failure
// (session.ErrUnavailable), as a full disk's would be.
var ErrFlush = fmt.Errorf("sessiontest: the flush failed: %w", session.ErrUnavailable)

// NewHeldStore wraps s; it does not hold until Hold.
func NewHeldStore(s session.Store) *HeldStore { return &HeldStore{Store: s} }

// Submit implements session.Store.
func (s *HeldStore) Submit(ctx context.Context, w session.Write) *session.Ticket {
	t := s.Store.Submit(ctx, w)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holding {
		return t
	}
	held, resolve := session.NewTicket()
	failing := s.failing
	s.held = append(s.held, func() {
		events, err := t.Wait(context.Background())
		if failing {
			events, err = nil, ErrFlush
		}
		resolve(events, err)
	})
	return held
}

// Hold holds the writes from now on; with failing, they fail when released.
func (s *HeldStore) Hold(failing bool) {
	s.mu.Lock()
	s.holding, s.failing = true, failing
	s.mu.Unlock()
}

// Unhold lets the writes from now on resolve as the wrapped store resolves
// them; those held already wait for Release.
func (s *HeldStore) Unhold() {
	s.mu.Lock()
	s.holding = false
	s.mu.Unlock()
}

// Release resolves the writes held so far.
func (s *HeldStore) Release() {
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.mu.Unlock()
	for _, resolve := range held {
		resolve()
	}
}
