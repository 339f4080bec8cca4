package session

import (
	"bytes"
	"context"
	"sort"
	"sync"
	"time"
)

// Memory is a Store held in process memory, for tests and throwaway runs.
// Nothing survives the process; a write is "durable" only in that sense, and
// its ticket resolves at once.
type Memory struct {
	waiters *Waiters

	mu       sync.RWMutex
	closed   bool                      // guarded by mu
	sessions map[string]*memorySession // guarded by mu
}

type memorySession struct {
	Session
	events     []Event // events[i].Seq == i+1
	checkpoint Checkpoint
	lease      Lease // Owner "" when free; Token kept across holders
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{waiters: NewWaiters(), sessions: map[string]*memorySession{}}
}

// CreateSession implements Store.
func (m *Memory) CreateSession(ctx context.Context, s Session) error {
	return CreateBySubmit(ctx, m, s)
}

// GetSession implements Store.
func (m *Memory) GetSession(ctx context.Context, id string) (Session, error) {
	return readSession(m, id, func(s *memorySession) Session { return s.Session })
}

// Append implements Store.
func (m *Memory) Append(ctx context.Context, sessionID string, events ...Event) ([]Event, error) {
	return AppendBySubmit(ctx, m, m.lastSeq, sessionID, events)
}

// Submit implements Store: the write is applied before Submit returns.
func (m *Memory) Submit(ctx context.Context, w Write) *Ticket {
	p, err := prepareSubmitted(ctx, w)
	if err != nil {
		return failed(err)
	}
	m.mu.Lock()
	err = m.apply(p)
	m.mu.Unlock()
	if err != nil {
		return failed(err)
	}
	if len(p.Events) > 0 || p.Create != nil {
		m.waiters.Notify(p.SessionID)
	}
	t := newTicket()
	t.resolve(p.result(), nil)
	return t
}

// apply makes one write; m.mu is held.
func (m *Memory) apply(p *Pending) error {
	if m.closed {
		return ErrClosed
	}
	s, ok := m.sessions[p.SessionID]
	switch {
	case p.Create != nil && ok:
		return ErrExists
	case p.Create != nil:
		s = &memorySession{Session: *p.Create}
	case !ok:
		return ErrNotFound
	}
	if l := p.Lease; l != nil && (s.lease.Owner != l.Owner || s.lease.Token != l.Token) {
		return LeaseLost(p.SessionID, *l)
	}
	p.Base = s.LastSeq
	if p.CheckpointPast() {
		return CheckpointPastLog(p.SessionID, p.Checkpoint.Seq, p.Base)
	}
	m.sessions[p.SessionID] = s
	for i, e := range p.Events {
		e.Seq = p.Base + int64(i) + 1
		e.Data = bytes.Clone(e.Data)
		s.events = append(s.events, e.Event)
	}
	if n := len(p.Events); n > 0 {
		s.UpdatedAt = p.Events[n-1].Time
		if s.UpdatedAt.Before(s.CreatedAt) {
			s.UpdatedAt = s.CreatedAt
		}
	}
	s.LastSeq += int64(len(p.Events))
	if p.Checkpoint != nil {
		if seq := p.CheckpointSeq(); s.checkpoint.State == nil || seq >= s.checkpoint.Seq {
			s.checkpoint = Checkpoint{Seq: seq, State: bytes.Clone(p.Checkpoint.State)}
		}
	}
	return nil
}

// Events implements Store.
func (m *Memory) Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	return m.EventsWithin(ctx, sessionID, after, limit, 0)
}

// EventsWithin implements BoundedReader.
func (m *Memory) EventsWithin(ctx context.Context, sessionID string, after int64, limit, maxBytes int) ([]Event, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, err := m.session(sessionID)
	if err != nil {
		return nil, err
	}
	if after < 0 {
		after = 0
	}
	if after >= int64(len(s.events)) {
		return nil, nil
	}
	evs := s.events[after:]
	if limit > 0 && limit < len(evs) {
		evs = evs[:limit]
	}
	keep, _ := WithinBytes(evs, 0, maxBytes)
	evs = evs[:keep]
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = e
		out[i].Data = bytes.Clone(e.Data)
	}
	return out, nil
}

// Wait implements Store.
func (m *Memory) Wait(ctx context.Context, sessionID string, after int64) error {
	return m.waiters.Wait(ctx, sessionID, after, m.lastSeq)
}

func (m *Memory) lastSeq(_ context.Context, id string) (int64, error) {
	return readSession(m, id, func(s *memorySession) int64 { return s.LastSeq })
}

// LoadCheckpoint implements Store.
func (m *Memory) LoadCheckpoint(ctx context.Context, sessionID string) (Checkpoint, error) {
	return readSession(m, sessionID, func(s *memorySession) Checkpoint {
		return Checkpoint{Seq: s.checkpoint.Seq, State: bytes.Clone(s.checkpoint.State)}
	})
}

// AcquireLease implements Store.
func (m *Memory) AcquireLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (Lease, error) {
	if err := CheckLease(owner, ttl); err != nil {
		return Lease{}, err
	}
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.session(sessionID)
	if err != nil {
		return Lease{}, err
	}
	l := &s.lease
	if l.Owner != "" && l.Owner != owner && now.Before(l.Expires) {
		return Lease{}, Leased(sessionID, l.Owner, l.Expires)
	}
	if l.Owner != owner {
		l.Token++
	}
	l.SessionID, l.Owner, l.Expires = sessionID, owner, now.Add(ttl)
	return *l, nil
}

// ReleaseLease implements Store.
func (m *Memory) ReleaseLease(ctx context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.session(l.SessionID)
	if err != nil {
		return err
	}
	if s.lease.Owner == "" || s.lease.Owner != l.Owner || s.lease.Token != l.Token {
		return LeaseLost(l.SessionID, l)
	}
	s.lease.Owner, s.lease.Expires = "", time.Time{}
	return nil
}

// ListSessions implements Store.
func (m *Memory) ListSessions(ctx context.Context, f SessionFilter) (SessionPage, error) {
	limit, after, err := f.Page()
	if err != nil {
		return SessionPage{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return SessionPage{}, ErrClosed
	}
	var rows []Session
	for _, s := range m.sessions {
		if f.Scope != "" && s.Scope != f.Scope {
			continue
		}
		if c := s.CreatedAt.UnixMicro(); after != nil && (c > after.Created || c == after.Created && s.ID >= after.ID) {
			continue
		}
		rows = append(rows, s.Session)
	}
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].CreatedAt.Equal(rows[j].CreatedAt) {
			return rows[i].CreatedAt.After(rows[j].CreatedAt)
		}
		return rows[i].ID > rows[j].ID
	})
	if len(rows) > limit+1 {
		rows = rows[:limit+1]
	}
	return PageOf(rows, limit), nil
}

// DeleteSession implements Store.
func (m *Memory) DeleteSession(ctx context.Context, id string) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	_, ok := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if !ok {
		return ErrNotFound
	}
	m.waiters.Notify(id)
	return nil
}

// Prune implements Store.
func (m *Memory) Prune(ctx context.Context, r Retention) (int, error) {
	if err := CheckRetention(r); err != nil {
		return 0, err
	}
	now := time.Now()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return 0, ErrClosed
	}
	all := make([]*memorySession, 0, len(m.sessions))
	for _, s := range m.sessions {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return newerUpdate(all[i].Session, all[j].Session) })
	var gone []string
	for i, s := range all {
		old := r.MaxAge > 0 && s.UpdatedAt.Before(now.Add(-r.MaxAge))
		surplus := r.MaxCount > 0 && i >= r.MaxCount
		if (old || surplus) && !(s.lease.Owner != "" && now.Before(s.lease.Expires)) {
			delete(m.sessions, s.ID)
			gone = append(gone, s.ID)
		}
	}
	m.mu.Unlock()
	for _, id := range gone {
		m.waiters.Notify(id)
	}
	return len(gone), nil
}

// newerUpdate orders sessions most recently updated first, then by ID
// descending: the order retention keeps them in.
func newerUpdate(a, b Session) bool {
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	return a.ID > b.ID
}

// UsedCallIDs implements Store.
func (m *Memory) UsedCallIDs(ctx context.Context, sessionID string, ids []string) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, err := m.session(sessionID)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	var out []string
	for _, e := range s.events {
		if e.Type != TypeToolCall {
			continue
		}
		if id, err := callIDOf(e.Data); err == nil && want[id] {
			out = append(out, id)
			delete(want, id)
		}
	}
	return out, nil
}

// OpenCalls implements Store.
func (m *Memory) OpenCalls(ctx context.Context) ([]OpenCall, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	ids := make([]string, 0, len(m.sessions))
	for id := range m.sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []OpenCall
	for _, id := range ids {
		out = append(out, openCalls(id, m.sessions[id].events)...)
	}
	return out, nil
}

// LapsedLeases implements LeaseSweeper.
func (m *Memory) LapsedLeases(ctx context.Context) ([]string, []OpenCall, error) {
	now := time.Now()
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, nil, ErrClosed
	}
	var ids []string
	for id, s := range m.sessions {
		if s.lease.Owner != "" && !now.Before(s.lease.Expires) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var open []OpenCall
	for _, id := range ids {
		open = append(open, openCalls(id, m.sessions[id].events)...)
	}
	return ids, open, nil
}

// openCalls finds the tool/calls in one session's events that no later
// tool/result with the same call id closes.
func openCalls(sessionID string, events []Event) []OpenCall {
	lastResult := map[string]int64{} // call id → seq of its last tool/result
	for _, e := range events {
		if e.Type == TypeToolResult {
			if id, err := callIDOf(e.Data); err == nil {
				lastResult[id] = e.Seq
			}
		}
	}
	var out []OpenCall
	for _, e := range events {
		if e.Type != TypeToolCall {
			continue
		}
		id, err := callIDOf(e.Data)
		if err != nil || lastResult[id] > e.Seq {
			continue
		}
		out = append(out, OpenCall{SessionID: sessionID, Call: DecodeCall(e.Data, id), Seq: e.Seq})
	}
	return out
}

// DecodeCall decodes the data of a logged tool/call for an OpenCall,
// keeping at least its call id when other fields are malformed: recovery
// needs the id above all.
func DecodeCall(data []byte, callID string) ToolCall {
	var c ToolCall
	if (Event{Data: data}).Decode(&c) != nil {
		c = ToolCall{}
	}
	c.CallID = callID
	return c
}

// readSession is read of session id, under the read lock; its error is
// session's.
func readSession[T any](m *Memory, id string, read func(*memorySession) T) (T, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, err := m.session(id)
	if err != nil {
		var zero T
		return zero, err
	}
	return read(s), nil
}

// session returns the session id names, or ErrClosed or ErrNotFound: the
// prologue of the methods that read or change one. m.mu is held.
func (m *Memory) session(id string) (*memorySession, error) {
	if m.closed {
		return nil, ErrClosed
	}
	s, ok := m.sessions[id]
	if !ok {
		return nil, ErrNotFound
	}
	return s, nil
}

// Close implements Store.
func (m *Memory) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.waiters.Close()
	return nil
}
