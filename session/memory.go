package session

import (
	"bytes"
	"context"
	"sort"
	"sync"
	"time"
)

// Memory is a Store held in process memory, for tests and throwaway runs.
// Nothing survives the process; Append is "durable" only in that sense.
type Memory struct {
	hub *hub

	mu       sync.RWMutex
	closed   bool                      // guarded by mu
	sessions map[string]*memorySession // guarded by mu
}

type memorySession struct {
	Session
	events []Event // events[i].Seq == i+1
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{hub: newHub(), sessions: map[string]*memorySession{}}
}

// CreateSession implements Store.
func (m *Memory) CreateSession(ctx context.Context, s Session) error {
	s, err := prepareSession(s, time.Now())
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if _, ok := m.sessions[s.ID]; ok {
		return ErrExists
	}
	m.sessions[s.ID] = &memorySession{Session: s}
	return nil
}

// GetSession implements Store.
func (m *Memory) GetSession(ctx context.Context, id string) (Session, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return Session{}, ErrClosed
	}
	s, ok := m.sessions[id]
	if !ok {
		return Session{}, ErrNotFound
	}
	return s.Session, nil
}

// Append implements Store.
func (m *Memory) Append(ctx context.Context, sessionID string, events ...Event) ([]Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ps, err := prepare(events, time.Now())
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	s, ok := m.sessions[sessionID]
	if !ok {
		m.mu.Unlock()
		return nil, ErrNotFound
	}
	out := make([]Event, len(ps))
	for i, p := range ps {
		p.Seq = int64(len(s.events)) + 1
		s.events = append(s.events, p.Event)
		out[i] = p.Event
		out[i].Data = bytes.Clone(p.Data)
	}
	m.mu.Unlock()
	if len(out) > 0 {
		m.hub.notify(sessionID)
	}
	return out, nil
}

// Events implements Store.
func (m *Memory) Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	s, ok := m.sessions[sessionID]
	if !ok {
		return nil, ErrNotFound
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
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = e
		out[i].Data = bytes.Clone(e.Data)
	}
	return out, nil
}

// Wait implements Store.
func (m *Memory) Wait(ctx context.Context, sessionID string, after int64) error {
	return m.hub.wait(ctx, sessionID, after, m.lastSeq)
}

func (m *Memory) lastSeq(_ context.Context, id string) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return 0, ErrClosed
	}
	s, ok := m.sessions[id]
	if !ok {
		return 0, ErrNotFound
	}
	return int64(len(s.events)), nil
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
		out = append(out, OpenCall{SessionID: sessionID, Call: decodeCall(e.Data, id), Seq: e.Seq})
	}
	return out
}

// decodeCall decodes a logged tool/call, keeping at least its call id when
// other fields are malformed: recovery needs the id above all.
func decodeCall(data []byte, callID string) ToolCall {
	var c ToolCall
	if (Event{Data: data}).Decode(&c) != nil {
		c = ToolCall{}
	}
	c.CallID = callID
	return c
}

// Close implements Store.
func (m *Memory) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.hub.close()
	return nil
}
