package tools

import (
	"fmt"
	"sync"
	"time"

	"github.com/codemode/codemode/registry"
)

// Quotas bound the demo tools' state: kv entries and files, kept in memory
// per session (they do not survive a restart). Every write is checked
// against them before anything is built or stored, and one that does not
// fit fails with a tool error naming the quota; no write ever evicts
// another session's state.
type Quotas struct {
	// MaxSessions bounds the sessions holding state at once: past it, a
	// session with no state yet cannot store any.
	MaxSessions int
	// MaxTotalBytes bounds the state of all sessions together.
	MaxTotalBytes int64
	// MaxSessionBytes bounds one session's keys, values, paths and files.
	MaxSessionBytes int64
	// MaxEntries bounds the keys, and the files, of one session (each).
	MaxEntries int
	// MaxValueBytes bounds one kv value, one file, and util_echo's value.
	MaxValueBytes int64
	// IdleTTL releases the state of a session that no tool has used for
	// this long (checked when a write needs room); 0 keeps state until the
	// process ends.
	IdleTTL time.Duration
}

// Defaults of Quotas.
const (
	DefaultMaxSessions     = 1000
	DefaultMaxTotalBytes   = 256 << 20
	DefaultMaxSessionBytes = 8 << 20
	DefaultMaxEntries      = 1000
	DefaultMaxValueBytes   = 1 << 20
	DefaultIdleTTL         = 24 * time.Hour
)

// MaxKeyBytes bounds a kv key or a file path.
const MaxKeyBytes = 1024

// maxDiffBytes bounds the old and new texts whose diff files_edit's
// presentationMeta carries; past it the meta says the diff was omitted.
const maxDiffBytes = 256 << 10

// DefaultQuotas returns the quotas New uses.
func DefaultQuotas() Quotas {
	return Quotas{
		MaxSessions:     DefaultMaxSessions,
		MaxTotalBytes:   DefaultMaxTotalBytes,
		MaxSessionBytes: DefaultMaxSessionBytes,
		MaxEntries:      DefaultMaxEntries,
		MaxValueBytes:   DefaultMaxValueBytes,
		IdleTTL:         DefaultIdleTTL,
	}
}

// withDefaults fills fields at zero (or negative) with the defaults; a
// negative IdleTTL means none, like zero.
func (q Quotas) withDefaults() Quotas {
	d := DefaultQuotas()
	if q.MaxSessions <= 0 {
		q.MaxSessions = d.MaxSessions
	}
	if q.MaxTotalBytes <= 0 {
		q.MaxTotalBytes = d.MaxTotalBytes
	}
	if q.MaxSessionBytes <= 0 {
		q.MaxSessionBytes = d.MaxSessionBytes
	}
	if q.MaxEntries <= 0 {
		q.MaxEntries = d.MaxEntries
	}
	if q.MaxValueBytes <= 0 {
		q.MaxValueBytes = d.MaxValueBytes
	}
	if q.IdleTTL < 0 {
		q.IdleTTL = 0
	}
	return q
}

// state is the demo state of every session, under one lock.
type state struct {
	q   Quotas
	now func() time.Time // the clock of IdleTTL

	mu         sync.Mutex
	workspaces map[string]*workspace // by session id; guarded by mu
	total      int64                 // bytes of every workspace; guarded by mu
}

// workspace is one session's state. Its bytes count keys, paths and values.
type workspace struct {
	kv    map[string]string // key -> compact JSON
	files map[string]string // path -> content
	bytes int64
	used  time.Time
}

func newState(q Quotas) *state {
	return &state{q: q, now: time.Now, workspaces: map[string]*workspace{}}
}

// toolError is the error of a write refused by a quota.
func toolError(format string, args ...any) error {
	return &registry.Error{Code: registry.CodeToolFailed, Message: fmt.Sprintf(format, args...)}
}

// lookup returns a session's workspace, or nil when it holds no state (or
// its state expired). It never creates one. Callers hold mu.
func (s *state) lookupLocked(session string) *workspace {
	w := s.workspaces[session]
	if w == nil {
		return nil
	}
	now := s.now()
	if s.expired(w, now) {
		s.dropLocked(session, w)
		return nil
	}
	w.used = now
	return w
}

func (s *state) expired(w *workspace, now time.Time) bool {
	return s.q.IdleTTL > 0 && now.Sub(w.used) > s.q.IdleTTL
}

func (s *state) dropLocked(session string, w *workspace) {
	s.total -= w.bytes
	delete(s.workspaces, session)
}

// sweepLocked releases every expired workspace. Callers hold mu.
func (s *state) sweepLocked() {
	if s.q.IdleTTL <= 0 {
		return
	}
	now := s.now()
	for id, w := range s.workspaces {
		if s.expired(w, now) {
			s.dropLocked(id, w)
		}
	}
}

// checkValue refuses a value over MaxValueBytes; what names it.
func (s *state) checkValue(what string, size int64) error {
	if size > s.q.MaxValueBytes {
		return toolError("%s would be %d bytes; the limit is %d (demo_state.max_value_bytes)", what, size, s.q.MaxValueBytes)
	}
	return nil
}

// checkKey refuses an empty or over-long key or path.
func checkKey(what, key string) error {
	switch {
	case key == "":
		return &registry.Error{Code: registry.CodeInvalidArgs, Message: what + " must not be empty"}
	case len(key) > MaxKeyBytes:
		return &registry.Error{Code: registry.CodeInvalidArgs, Message: fmt.Sprintf("%s is %d bytes; the limit is %d", what, len(key), MaxKeyBytes)}
	}
	return nil
}

// reserve checks that storing a value of size bytes under key in the kind
// of entry (kv or files) of a session fits every quota, and returns the
// session's workspace (created when it had none) for the caller to store
// into with commit. It allocates nothing for the value: callers compute
// sizes before they build anything. Callers hold mu.
func (s *state) reserveLocked(session string, files bool, key string, size int64, what string) (*workspace, error) {
	if err := s.checkValue(what, size); err != nil {
		return nil, err
	}
	w := s.lookupLocked(session)
	var old string
	var exists bool
	if w != nil {
		old, exists = w.entries(files)[key]
	}
	grow := size - int64(len(old))
	if !exists {
		grow += int64(len(key))
		if w != nil && len(w.entries(files)) >= s.q.MaxEntries {
			return nil, toolError("this session already holds %d %s; the limit is %d (demo_state.max_entries)", s.q.MaxEntries, entryNoun(files), s.q.MaxEntries)
		}
	}
	var have int64
	if w != nil {
		have = w.bytes
	}
	if have+grow > s.q.MaxSessionBytes {
		return nil, toolError("this session's state would be %d bytes; the limit is %d (demo_state.max_session_bytes)", have+grow, s.q.MaxSessionBytes)
	}
	if grow > 0 && s.total+grow > s.q.MaxTotalBytes {
		s.sweepLocked()
		if s.total+grow > s.q.MaxTotalBytes {
			return nil, toolError("the demo tools' state is full (%d bytes for all sessions, demo_state.max_total_bytes); nothing of another session is evicted, so this write is refused", s.q.MaxTotalBytes)
		}
	}
	if w == nil {
		if len(s.workspaces) >= s.q.MaxSessions {
			s.sweepLocked()
		}
		if len(s.workspaces) >= s.q.MaxSessions {
			return nil, toolError("the demo tools already hold state for %d sessions (demo_state.max_sessions); nothing of another session is evicted, so this session cannot store any", s.q.MaxSessions)
		}
		w = &workspace{kv: map[string]string{}, files: map[string]string{}, used: s.now()}
		s.workspaces[session] = w
	}
	return w, nil
}

// commit stores value under key, after reserveLocked. Callers hold mu.
func (s *state) commitLocked(w *workspace, files bool, key, value string) {
	m := w.entries(files)
	old, exists := m[key]
	grow := int64(len(value)) - int64(len(old))
	if !exists {
		grow += int64(len(key))
	}
	m[key] = value
	w.bytes += grow
	s.total += grow
}

func (w *workspace) entries(files bool) map[string]string {
	if files {
		return w.files
	}
	return w.kv
}

func entryNoun(files bool) string {
	if files {
		return "files"
	}
	return "keys"
}

// usage reports the sessions holding state and their bytes.
func (s *state) usage() (sessions int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.workspaces), s.total
}
