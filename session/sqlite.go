package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite is the embedded Store: one database file in WAL mode, through the
// pure-Go modernc.org/sqlite driver (no cgo).
//
// Durability: synchronous=FULL, so every commit syncs the WAL before Append
// returns; with NORMAL a power loss could drop the last commits.
//
// Sequence numbers: an append is one INSERT … SELECT statement (committing by
// itself) that reads the session's MAX(seq) through the unique index and
// inserts the next numbers. SQLite takes the database's write lock before the
// statement reads anything, so appenders in other processes on the same file
// wait (busy_timeout) rather than collide; UNIQUE(session_id, seq) backs that
// up. An append of more than sqliteChunk events runs several such statements
// in one BEGIN IMMEDIATE transaction. Within one process appends are
// serialized in Go first, which is cheaper than contending for the file lock.
//
// Wait is woken in-process at once, and by other processes' appends through a
// poll of PRAGMA data_version while anyone waits.
type SQLite struct {
	db     *sql.DB
	hub    *hub
	closed atomic.Bool

	writeMu sync.Mutex        // serializes this process's writes
	stmts   map[int]*sql.Stmt // INSERTs by number of events; guarded by writeMu

	stopPoll context.CancelFunc // nil for :memory:
	polled   chan struct{}      // closed when the poller has stopped
}

var _ Store = (*SQLite)(nil)

const (
	// sqliteBusyTimeout is how long a write waits for another process's lock.
	sqliteBusyTimeout = 10 * time.Second
	// sqlitePollInterval bounds how late Wait sees another process's append.
	sqlitePollInterval = 200 * time.Millisecond
	// sqliteChunk is how many events one INSERT carries; a bigger Append runs
	// several in a transaction. Statements for 1..sqliteChunk events are
	// prepared as needed and kept.
	sqliteChunk = 32
)

// OpenSQLite opens (creating if needed) the SQLite database at path and
// applies the schema migrations. ":memory:" opens a private in-memory
// database on a single connection.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	memory := path == ":memory:"
	params := url.Values{}
	params.Add("_pragma", "busy_timeout("+strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10)+")")
	params.Set("_txlock", "immediate")
	var dsn string
	if memory {
		dsn = ":memory:?" + params.Encode()
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("session: sqlite path %q: %w", path, err)
		}
		if fi, err := os.Stat(filepath.Dir(abs)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("session: open sqlite %s: directory %s does not exist", path, filepath.Dir(abs))
		}
		params.Add("_pragma", "synchronous(FULL)")
		dsn = "file://" + (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath() + "?" + params.Encode()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("session: open sqlite %s: %w", path, err)
	}
	if memory {
		db.SetMaxOpenConns(1) // every connection would be a different database
	} else {
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
	}
	s := &SQLite{db: db, hub: newHub(), stmts: map[int]*sql.Stmt{}}
	if err := s.init(ctx, memory); err != nil {
		db.Close()
		return nil, fmt.Errorf("session: open sqlite %s: %w", path, err)
	}
	return s, nil
}

func (s *SQLite) init(ctx context.Context, memory bool) error {
	if !memory {
		// WAL is a property of the file, set once by whoever opens it first.
		var mode string
		err := retryBusy(ctx, func() error {
			return s.db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		})
		if err != nil {
			return fmt.Errorf("set WAL mode: %w", err)
		}
		if !strings.EqualFold(mode, "wal") {
			return fmt.Errorf("journal mode is %q, not WAL (is the file system local?)", mode)
		}
	}
	if err := retryBusy(ctx, func() error { return s.migrate(ctx) }); err != nil {
		return err
	}
	if !memory {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return err
		}
		pollCtx, stop := context.WithCancel(context.Background())
		s.stopPoll, s.polled = stop, make(chan struct{})
		go s.poll(pollCtx, conn)
	}
	return nil
}

// retryBusy runs f again while it fails with SQLITE_BUSY, for up to
// sqliteBusyTimeout. SQLite's own busy handler covers most statements, but
// not all: converting a new file to WAL while another process opens it can
// report BUSY at once.
func retryBusy(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(sqliteBusyTimeout)
	pause := time.Millisecond
	for {
		err := f()
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// migrate applies the pending migrations in one write transaction, so two
// processes opening a new file at once apply them once.
func (s *SQLite) migrate(ctx context.Context) error {
	all, err := migrations("sqlite")
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+migrationsTable+` (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	applied, err := queryInts(ctx, tx, `SELECT version FROM `+migrationsTable)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	todo, err := pending(all, applied)
	if err != nil {
		return err
	}
	for _, m := range todo {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+migrationsTable+` (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, time.Now().UnixMicro()); err != nil {
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
	}
	return tx.Commit()
}

func queryInts(ctx context.Context, tx *sql.Tx, query string) ([]int, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// poll wakes all waiters when the database changed (PRAGMA data_version moves
// when any other connection, in this process or another, commits). It runs
// only while someone waits.
func (s *SQLite) poll(ctx context.Context, conn *sql.Conn) {
	defer close(s.polled)
	defer conn.Close()
	t := time.NewTicker(sqlitePollInterval)
	defer t.Stop()
	var last int64 = -1
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.hub.waiting() {
			last = -1
			continue
		}
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			// A transient error (the file is busy): wake waiters so they check
			// for themselves.
			s.hub.wakeAll()
			continue
		}
		if v != last {
			last = v
			s.hub.wakeAll()
		}
	}
}

// CreateSession implements Store.
func (s *SQLite) CreateSession(ctx context.Context, sess Session) error {
	sess, err := prepareSession(sess, time.Now())
	if err != nil {
		return err
	}
	if s.closed.Load() {
		return ErrClosed
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	res, err := s.db.ExecContext(ctx, `INSERT INTO sessions (id, scope, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		sess.ID, sess.Scope, sess.CreatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("session: create %q: %w", sess.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("session: create %q: %w", sess.ID, err)
	} else if n == 0 {
		return ErrExists
	}
	return nil
}

// GetSession implements Store.
func (s *SQLite) GetSession(ctx context.Context, id string) (Session, error) {
	if s.closed.Load() {
		return Session{}, ErrClosed
	}
	var sess Session
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT id, scope, created_at FROM sessions WHERE id = ?`, id).Scan(&sess.ID, &sess.Scope, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("session: get %q: %w", id, err)
	}
	sess.CreatedAt = time.UnixMicro(created).UTC()
	return sess, nil
}

// lastSeqSQL returns the session's highest seq (0 when empty), no row when the
// session does not exist. MAX over the unique index is one seek.
const lastSeqSQL = `SELECT COALESCE((SELECT MAX(seq) FROM events WHERE session_id = ?1), 0) FROM sessions WHERE id = ?1`

// Append implements Store.
func (s *SQLite) Append(ctx context.Context, sessionID string, events ...Event) ([]Event, error) {
	ps, err := prepare(events, time.Now())
	if err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if len(ps) == 0 {
		_, err := s.lastSeq(ctx, sessionID)
		return nil, err
	}
	s.writeMu.Lock()
	if len(ps) <= sqliteChunk {
		err = s.insert(ctx, nil, sessionID, ps)
	} else {
		err = s.insertTx(ctx, sessionID, ps)
	}
	s.writeMu.Unlock()
	if err != nil {
		if s.closed.Load() {
			return nil, ErrClosed
		}
		return nil, err
	}
	s.hub.notify(sessionID)
	out := make([]Event, len(ps))
	for i, p := range ps {
		out[i] = p.Event
	}
	return out, nil
}

// insertTx appends more events than one statement carries, in chunks inside
// one write transaction.
func (s *SQLite) insertTx(ctx context.Context, sessionID string, ps []prepared) error {
	// Prepare first: with ":memory:" the transaction holds the only connection.
	for _, n := range []int{sqliteChunk, len(ps) % sqliteChunk} {
		if _, err := s.insertStmt(ctx, n); n > 0 && err != nil {
			return fmt.Errorf("session: append to %q: %w", sessionID, err)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return fmt.Errorf("session: append to %q: %w", sessionID, err)
	}
	defer tx.Rollback()
	for start := 0; start < len(ps); start += sqliteChunk {
		if err := s.insert(ctx, tx, sessionID, ps[start:min(start+sqliteChunk, len(ps))]); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("session: append to %q: commit: %w", sessionID, err)
	}
	return nil
}

// insert numbers ps after the session's last seq and inserts them with one
// statement: outside a transaction it commits by itself, and SQLite takes the
// write lock before the statement reads MAX(seq), so no other process can
// slip in between. It sets ps[i].Seq.
func (s *SQLite) insert(ctx context.Context, tx *sql.Tx, sessionID string, ps []prepared) error {
	stmt, err := s.insertStmt(ctx, len(ps))
	if err != nil {
		return fmt.Errorf("session: append to %q: %w", sessionID, err)
	}
	if tx != nil {
		stmt = tx.StmtContext(ctx, stmt)
	}
	args := make([]any, 0, 1+5*len(ps))
	args = append(args, sessionID)
	for _, p := range ps {
		var callID any
		if p.callID != "" {
			callID = p.callID
		}
		args = append(args, p.Type, p.Time.UnixMicro(), callID, string(p.Data))
	}
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("session: append to %q: %w", sessionID, err)
	}
	defer rows.Close()
	var first int64
	n := 0
	for rows.Next() { // to the end: the statement commits on its last step
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return fmt.Errorf("session: append to %q: %w", sessionID, err)
		}
		if n == 0 || seq < first {
			first = seq
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("session: append to %q: %w", sessionID, err)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("session: append to %q: %w", sessionID, err)
	}
	switch n {
	case 0:
		return ErrNotFound // no session row, nothing inserted
	case len(ps):
	default:
		return fmt.Errorf("session: append to %q: inserted %d of %d events", sessionID, n, len(ps))
	}
	for i := range ps {
		ps[i].Seq = first + int64(i) // v.column1 numbers them in order
	}
	return nil
}

// insertStmt returns the prepared INSERT for n events. database/sql prepares
// it once per pooled connection.
func (s *SQLite) insertStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	if n <= 0 {
		return nil, nil
	}
	if stmt := s.stmts[n]; stmt != nil {
		return stmt, nil
	}
	var b strings.Builder
	b.WriteString(`WITH base AS MATERIALIZED (
    SELECT COALESCE((SELECT MAX(seq) FROM events WHERE session_id = ?1), 0) AS last FROM sessions WHERE id = ?1
)
INSERT INTO events (session_id, seq, type, time, call_id, data)
SELECT ?1, base.last + v.column1, v.column2, v.column3, v.column4, v.column5
FROM base, (VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		p := 2 + 4*i
		fmt.Fprintf(&b, "(%d, ?%d, ?%d, ?%d, ?%d)", i+1, p, p+1, p+2, p+3)
	}
	b.WriteString(`) AS v
RETURNING seq`)
	stmt, err := s.db.PrepareContext(ctx, b.String())
	if err != nil {
		return nil, err
	}
	s.stmts[n] = stmt
	return stmt, nil
}

// Events implements Store.
func (s *SQLite) Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.db.QueryContext(ctx,
		`SELECT seq, type, time, data FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
		sessionID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var t int64
		var data []byte
		if err := rows.Scan(&e.Seq, &e.Type, &t, &data); err != nil {
			return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
		}
		e.Time = time.UnixMicro(t).UTC()
		e.Data = data
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
	}
	if len(out) == 0 {
		if _, err := s.lastSeq(ctx, sessionID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Wait implements Store.
func (s *SQLite) Wait(ctx context.Context, sessionID string, after int64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.hub.wait(ctx, sessionID, after, s.lastSeq)
}

func (s *SQLite) lastSeq(ctx context.Context, id string) (int64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	var last int64
	err := s.db.QueryRowContext(ctx, lastSeqSQL, id).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		if s.closed.Load() {
			return 0, ErrClosed // closed while querying
		}
		return 0, fmt.Errorf("session: last seq of %q: %w", id, err)
	}
	return last, nil
}

// openCallsSQL finds tool/calls that no later tool/result closes; both
// dialects run it, followed by an ORDER BY that sorts session ids bytewise.
const openCallsSQL = `SELECT c.session_id, c.seq, c.call_id, c.data FROM events AS c
WHERE c.call_id IS NOT NULL AND c.type = 'tool/call'
  AND NOT EXISTS (SELECT 1 FROM events AS r
    WHERE r.session_id = c.session_id AND r.call_id = c.call_id AND r.type = 'tool/result' AND r.seq > c.seq)`

// OpenCalls implements Store.
func (s *SQLite) OpenCalls(ctx context.Context) ([]OpenCall, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := s.db.QueryContext(ctx, openCallsSQL+` ORDER BY c.session_id, c.seq`)
	if err != nil {
		return nil, fmt.Errorf("session: open calls: %w", err)
	}
	defer rows.Close()
	var out []OpenCall
	for rows.Next() {
		var oc OpenCall
		var callID string
		var data []byte
		if err := rows.Scan(&oc.SessionID, &oc.Seq, &callID, &data); err != nil {
			return nil, fmt.Errorf("session: open calls: %w", err)
		}
		oc.Call = decodeCall(data, callID)
		out = append(out, oc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session: open calls: %w", err)
	}
	return out, nil
}

// Close implements Store. It waits for appends in progress to finish.
func (s *SQLite) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.hub.close()
	if s.stopPoll != nil {
		s.stopPoll()
		<-s.polled
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	for _, stmt := range s.stmts {
		stmt.Close()
	}
	return s.db.Close()
}
