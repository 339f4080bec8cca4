package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	driver "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/codemode/codemode/session"
)

// Store is the embedded session.Store: one database file in WAL mode, through the
// pure-Go modernc.org/sqlite driver (no cgo).
//
// Group commit: one writer goroutine takes every write queued since its last
// commit and commits them in one BEGIN IMMEDIATE transaction, so one WAL
// flush (synchronous=FULL, DurabilityFull) makes them all durable; with
// DurabilityProcess (synchronous=NORMAL) commits are not flushed, and a power
// loss can drop the last ones.
//
// Sequence numbers: holding the database's write lock, the writer reads each
// session's last seq (MAX(seq), one seek in the unique index the insert
// writes anyway) and numbers the new events after it in the same
// transaction; nothing else of the session is written per commit. Writers in other processes on the same file wait for the
// lock (busy_timeout) rather than collide; UNIQUE(session_id, seq) backs
// that up. Within one process, write transactions are serialized in Go
// first, which is cheaper than contending for the file lock.
//
// Leases are updated with synchronous=NORMAL: taking one costs no flush. That loses nothing a holder relies on: the WAL
// is written in order, so the next flushed commit (the holder's first write)
// makes the lease durable too, and before it the holder has done nothing a
// crash could expose.
//
// A flush is fdatasync(2) where the system has it, as in SQLite's own Linux
// builds (see flushWithFdatasync).
//
// Checkpoints (copying the WAL back into the database file) run on a
// goroutine of their own, not in the commit that fills the WAL (see
// checkpointer).
//
// Wait is woken in-process at once, and by other processes' appends through a
// poll of PRAGMA data_version while anyone waits.
type Store struct {
	*session.Core // Submit, Append, CreateSession, Wait, WriteErr, Stats; closed state

	db      *sql.DB
	waiters *session.Waiters

	writeMu sync.Mutex  // serializes this process's write transactions
	stmts   sqliteStmts // Prepared on db; closed by Close
	// inserts[k] inserts k rows of events, prepared on first use; guarded
	// by writeMu.
	inserts [sqliteMaxInsert + 1]*sql.Stmt
	// writer runs every write transaction: one connection, so that its
	// page cache stays warm (SQLite drops a connection's cache whenever
	// another connection committed). The pool itself for :memory:.
	writer    sqliteConn // guarded by writeMu
	writeFull bool       // synchronous=FULL, which leases lower
	broken    error      // set when the writer could not restore FULL; guarded by writeMu

	stopPoll    context.CancelFunc // nil for :memory:
	polled      chan struct{}      // closed when the poller has stopped
	checkpoints *checkpointer      // nil for :memory:
}

// sqliteStmts are the writer's other statements.
type sqliteStmts struct {
	state, states, create, createFresh, checkpoint *sql.Stmt // the writer's
	// The reads every step makes, prepared once rather than parsed per call.
	events, lastSeq, session, usedCallID, loadCheckpoint *sql.Stmt
}

var _ session.Store = (*Store)(nil)

const (
	// sqliteBusyTimeout is how long a write waits for another process's lock.
	sqliteBusyTimeout = 10 * time.Second
	// sqlitePollInterval bounds how late Wait sees another process's append.
	sqlitePollInterval = 200 * time.Millisecond
	// sqliteMaxInsert: one INSERT carries up to this many rows of events,
	// so that a commit takes one statement for up to this many rows (a
	// statement costs more than a row); the statements for 1 to
	// sqliteWarmInserts rows, what one step writes, are prepared when the
	// store opens, the others on first use.
	sqliteMaxInsert   = 64
	sqliteWarmInserts = 4
)

// flushWithFdatasync makes SQLite flush commits with fdatasync(2) instead of
// fsync(2), process-wide, once. SQLite's own builds do so wherever their
// configure script finds fdatasync (every Linux distribution's);
// modernc.org/sqlite, transpiled without that check, defaults to fsync. The
// durability is the same: fdatasync writes a file's data and the metadata
// needed to read it back (its size), and skips only its timestamps, whose
// journal commit fsync waits for whenever the WAL or the database grows (a
// new WAL's first cycle, a checkpoint's new pages): a write and flush that
// grows a file is the one it makes faster (BENCHMARKS.md, "Figures behind the code's choices").
// Where fdatasync does not exist (macOS, Windows) SQLite keeps its own
// flush, and this does nothing.
var flushWithFdatasync = sync.OnceFunc(func() { _, _ = driver.Fdatasync(true) })

// Open opens (creating if needed) the SQLite database at path and
// applies the schema migrations. ":memory:" opens a private in-memory
// database on a single connection. opts, when given, is one Options.
func Open(ctx context.Context, path string, opts ...session.Options) (*Store, error) {
	o, err := session.CheckOptions(opts)
	if err != nil {
		return nil, err
	}
	memory := path == ":memory:"
	params := url.Values{}
	params.Add("_pragma", "busy_timeout("+strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10)+")")
	params.Add("_pragma", "temp_store(MEMORY)") // statement journals, if any, stay off the disk
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
		flushWithFdatasync()
		sync := "FULL"
		if o.Durability == session.DurabilityProcess {
			sync = "NORMAL"
		}
		params.Add("_pragma", "synchronous("+sync+")")
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
	s := &Store{db: db, waiters: session.NewWaiters(), writeFull: !memory && o.Durability == session.DurabilityFull}
	if err := s.init(ctx, memory); err != nil {
		s.stopBackground()
		s.closeStmts()
		db.Close()
		return nil, fmt.Errorf("session: open sqlite %s: %w", path, err)
	}
	s.Core = session.NewCore(s.waiters, s.commitBatch, s.committed, s.lastSeq)
	return s, nil
}

// stopBackground stops the poller and the checkpointer, those that started.
func (s *Store) stopBackground() {
	if s.stopPoll != nil {
		s.stopPoll()
		<-s.polled
	}
	if s.checkpoints != nil {
		s.checkpoints.close()
	}
}

func (s *Store) init(ctx context.Context, memory bool) error {
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
	s.writer = s.db
	if !memory {
		// The writer and the poller take their connections first, so that
		// the statements below are prepared on a connection left to readers:
		// the first read after a start does not open and prepare one.
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return err
		}
		s.writer = conn
		if conn, err = s.db.Conn(ctx); err != nil {
			return err
		}
		pollCtx, stop := context.WithCancel(context.Background())
		s.stopPoll, s.polled = stop, make(chan struct{})
		go s.poll(pollCtx, conn)
		if conn, err = s.db.Conn(ctx); err != nil {
			return err
		}
		if err := s.startCheckpointer(ctx, s.writer, conn); err != nil {
			return err
		}
	}
	if err := s.prepare(ctx); err != nil {
		return err
	}
	return s.warmWriter(ctx)
}

// warmWriter prepares the write statements on the writer's connection too
// (database/sql keeps them there), so that the first commit after a start
// does not.
func (s *Store) warmWriter(ctx context.Context) error {
	tx, err := s.writer.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range slices.Concat(s.inserts[1:sqliteWarmInserts+1], []*sql.Stmt{s.stmts.state, s.stmts.states, s.stmts.create, s.stmts.createFresh, s.stmts.checkpoint}) {
		if err := tx.StmtContext(ctx, stmt).Close(); err != nil {
			return err
		}
	}
	return nil
}

// insert returns the statement that inserts k rows of events, preparing it
// on first use (on another of the pool's connections than the writer's).
// Callers hold writeMu.
func (s *Store) insert(ctx context.Context, k int) (*sql.Stmt, error) {
	if stmt := s.inserts[k]; stmt != nil {
		return stmt, nil
	}
	var b strings.Builder
	b.WriteString(`INSERT OR ROLLBACK INTO events (session_id, seq, type, time, call_id, data, n) VALUES `)
	for i := 0; i < k; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?)")
	}
	stmt, err := s.db.PrepareContext(ctx, b.String())
	if err != nil {
		return nil, err
	}
	s.inserts[k] = stmt
	return stmt, nil
}

// prepare prepares the writer's statements.
func (s *Store) prepare(ctx context.Context) error {
	warm := sqliteWarmInserts
	if s.writer == s.db {
		// :memory:, on one connection, which a write transaction holds: no
		// statement can be prepared during one.
		warm = sqliteMaxInsert
	}
	for k := 1; k <= warm; k++ {
		if _, err := s.insert(ctx, k); err != nil {
			return err
		}
	}
	for _, q := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		// OR ROLLBACK: a constraint failure (a bug) fails the whole commit
		// anyway, so SQLite keeps no statement journal.
		{&s.stmts.state, `SELECT COALESCE((SELECT MAX(seq) FROM events WHERE session_id = ?1), 0), lease_owner, lease_token FROM sessions WHERE id = ?1`},
		{&s.stmts.states, `SELECT id, ` + sqliteLastSeq + `, lease_owner, lease_token FROM sessions
			WHERE id IN (SELECT value FROM json_each(?1))`},
		{&s.stmts.create, `INSERT OR ROLLBACK INTO sessions (id, scope, created_at) VALUES (?, ?, ?)`},
		{&s.stmts.createFresh, `INSERT INTO sessions (id, scope, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`},
		{&s.stmts.checkpoint, `INSERT OR ROLLBACK INTO checkpoints (session_id, seq, state) VALUES (?, ?, ?)
			ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, state = excluded.state WHERE excluded.seq >= checkpoints.seq`},
		// A row's seq is its last event's, so the rows holding events after
		// ?2 are the index's after it. The session's own row says, in the
		// same read, whether it exists: one row of NULLs for a session
		// without events after ?2.
		{&s.stmts.events, `SELECT e.seq, e.n, e.type, e.time, e.data FROM sessions AS s
			LEFT JOIN events AS e ON e.session_id = s.id AND e.seq > ?2
			WHERE s.id = ?1 ORDER BY e.seq LIMIT ?3`},
		{&s.stmts.lastSeq, `SELECT ` + sqliteLastSeq + ` FROM sessions WHERE id = ?`},
		{&s.stmts.session, `SELECT ` + sqliteSessionColumns + ` FROM sessions WHERE id = ?`},
		{&s.stmts.usedCallID, `SELECT 1 FROM events WHERE session_id = ? AND call_id = ? AND type = 'tool/call' LIMIT 1`},
		{&s.stmts.loadCheckpoint, `SELECT c.seq, c.state FROM sessions AS s LEFT JOIN checkpoints AS c ON c.session_id = s.id WHERE s.id = ?`},
	} {
		stmt, err := s.db.PrepareContext(ctx, q.sql)
		if err != nil {
			return err
		}
		*q.stmt = stmt
	}
	return nil
}

func (s *Store) closeStmts() {
	for _, stmt := range slices.Concat(s.inserts[1:], []*sql.Stmt{s.stmts.state, s.stmts.states, s.stmts.create, s.stmts.createFresh, s.stmts.checkpoint,
		s.stmts.events, s.stmts.lastSeq, s.stmts.session, s.stmts.usedCallID, s.stmts.loadCheckpoint}) {
		if stmt != nil {
			stmt.Close()
		}
	}
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
		var se *driver.Error
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
func (s *Store) migrate(ctx context.Context) error {
	all, err := session.Migrations(migrationFS, "sqlite")
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	err = session.ApplyMigrations(all, session.MigrationTx{
		CreateTable: `CREATE TABLE IF NOT EXISTS ` + session.MigrationsTable + ` (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`,
		Exec: exec,
		Ints: func(q string) ([]int, error) { return column[int](tx.QueryContext(ctx, q)) },
		Record: func(m session.Migration) error {
			return exec(`INSERT INTO `+session.MigrationsTable+` (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, time.Now().UnixMicro())
		},
	})
	if err != nil {
		return err
	}
	return tx.Commit()
}

// column reads the one column of each row a query returned (its rows and error).
func column[T any](rows *sql.Rows, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
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
func (s *Store) poll(ctx context.Context, conn *sql.Conn) {
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
		if !s.waiters.Waiting() {
			last = -1
			continue
		}
		var v int64
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
			// A transient error (the file is busy): wake waiters so they check
			// for themselves.
			s.waiters.WakeAll()
			continue
		}
		if v != last {
			last = v
			s.waiters.WakeAll()
		}
	}
}

// GetSession implements session.Store.
func (s *Store) GetSession(ctx context.Context, id string) (session.Session, error) {
	return s.Get(id, func() ([]session.Session, error) {
		return scanSQLiteSessions(s.stmts.session.QueryContext(ctx, id))
	})
}

// sqliteSessionColumns are what scanSQLiteSessions reads: a session's last
// seq and update time come from its last event, one seek each.
const sqliteSessionColumns = `id, scope, created_at, ` + sqliteLastSeq + `, ` + sqliteUpdatedAt

const (
	sqliteLastSeq   = `COALESCE((SELECT MAX(seq) FROM events WHERE session_id = sessions.id), 0)`
	sqliteUpdatedAt = `MAX(created_at, COALESCE((SELECT time FROM events WHERE session_id = sessions.id ORDER BY seq DESC LIMIT 1), 0))`
)

func scanSQLiteSessions(rows *sql.Rows, err error) ([]session.Session, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session.Session
	for rows.Next() {
		var sess session.Session
		var created, updated int64
		if err := rows.Scan(&sess.ID, &sess.Scope, &created, &sess.LastSeq, &updated); err != nil {
			return nil, err
		}
		sess.CreatedAt, sess.UpdatedAt = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
		out = append(out, sess)
	}
	return out, rows.Err()
}

// sqliteSession is a session as a commit changes it.
type sqliteSession struct {
	exists     bool
	inserted   bool             // created at once for the batch's first write to it, which creates it
	created    *session.Session // created by this commit, still to insert
	last       int64            // its last seq
	owner      sql.NullString
	token      int64
	checkpoint *session.Checkpoint // the newest this commit saves
}

// check returns why p cannot be written to the session as it stands.
func (st *sqliteSession) check(p *session.Pending) error {
	switch {
	case p.Create != nil && st.exists:
		return session.ErrExists
	case p.Create == nil && !st.exists:
		return session.ErrNotFound
	case p.Lease != nil && (!st.owner.Valid || st.owner.String != p.Lease.Owner || st.token != p.Lease.Token):
		return session.LeaseLost(p.SessionID, *p.Lease)
	}
	if p.Checkpoint != nil {
		p.Base = st.last
		if p.Create != nil {
			p.Base = 0
		}
		if p.CheckpointPast() {
			return session.CheckpointPastLog(p.SessionID, p.Checkpoint.Seq, p.Base)
		}
	}
	return nil
}

// sqliteFewSessions: a commit of at most this many sessions reads them one
// statement each (an index seek apiece), more with one statement over a
// JSON array, whose fixed cost is a few seeks'.
const sqliteFewSessions = 6

// readSessions reads the sessions a batch writes (last seq, lease) and
// returns them by id and in the order first written. A session whose first
// write in the batch creates it (a new session, almost always) is not read:
// it is created at once, and read only if it exists already.
func (s *Store) readSessions(ctx context.Context, tx *sql.Tx, batch []*session.Pending) (map[string]*sqliteSession, []string, error) {
	sessions := map[string]*sqliteSession{}
	var order, read []string
	for _, p := range batch {
		if sessions[p.SessionID] == nil {
			sessions[p.SessionID] = &sqliteSession{}
			order = append(order, p.SessionID)
			if p.Create != nil {
				if err := s.createFresh(ctx, tx, p.Create, sessions[p.SessionID]); err != nil {
					return nil, nil, err
				}
			}
			if !sessions[p.SessionID].inserted {
				read = append(read, p.SessionID)
			}
		}
	}
	fail := func(err error) (map[string]*sqliteSession, []string, error) {
		return nil, nil, fmt.Errorf("session: commit: read sessions: %w", err)
	}
	if len(read) <= sqliteFewSessions {
		var state *sql.Stmt
		for _, id := range read {
			if state == nil {
				state = tx.StmtContext(ctx, s.stmts.state)
			}
			st := sessions[id]
			switch err := state.QueryRowContext(ctx, id).Scan(&st.last, &st.owner, &st.token); {
			case err == nil:
				st.exists = true
			case !errors.Is(err, sql.ErrNoRows):
				return fail(err)
			}
		}
		return sessions, order, nil
	}
	ids, err := json.Marshal(read)
	if err != nil {
		return fail(err)
	}
	rows, err := tx.StmtContext(ctx, s.stmts.states).QueryContext(ctx, string(ids))
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		st := &sqliteSession{exists: true}
		if err := rows.Scan(&id, &st.last, &st.owner, &st.token); err != nil {
			return fail(err)
		}
		sessions[id] = st
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return sessions, order, nil
}

// createFresh creates a session the batch's first write to it creates,
// unless it exists (then the write fails with ErrExists, as checked later).
func (s *Store) createFresh(ctx context.Context, tx *sql.Tx, c *session.Session, st *sqliteSession) error {
	res, err := tx.StmtContext(ctx, s.stmts.createFresh).ExecContext(ctx, c.ID, c.Scope, c.CreatedAt.UnixMicro())
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil {
		return fmt.Errorf("session: commit: create %q: %w", c.ID, err)
	}
	st.inserted = n == 1
	return nil
}

// commitBatch commits a batch in one write transaction: it checks each
// write against the session rows as the writes before it left them, then
// inserts every event with the fewest statements.
func (s *Store) commitBatch(batch []*session.Pending) error {
	err := s.commitTx(batch)
	if err != nil && !sqliteRefusal(err) {
		return session.Unavailable(err)
	}
	return err
}

// sqliteRefusal reports whether a failed commit is SQLite refusing the
// batch's data (a constraint, a value too big) rather than the database
// failing (busy, full, read-only, I/O, corrupt), which committing the
// writes one by one would not help.
func sqliteRefusal(err error) bool {
	var se *driver.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_RANGE:
		return true
	}
	return false
}

// commitTx is commitBatch's transaction.
func (s *Store) commitTx(batch []*session.Pending) error {
	ctx := context.Background()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	tx, err := s.writer.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		return fmt.Errorf("session: commit: %w", err)
	}
	defer tx.Rollback()
	sessions, order, err := s.readSessions(ctx, tx, batch)
	if err != nil {
		return err
	}
	var rows []any // event rows' columns, sqliteColumns per row
	for _, p := range batch {
		p.Base, p.Err = 0, nil
		st := sessions[p.SessionID]
		inserted := st.inserted
		st.inserted = false // for this write only: a second create of the session fails
		if err := st.check(p); err != nil {
			p.Err = err
			continue
		}
		if p.Create != nil {
			*st = sqliteSession{exists: true, created: p.Create}
			if inserted {
				st.created = nil // created already
			}
		}
		p.Base = st.last
		rows = appendEventRows(rows, p.SessionID, p.Base, p.Events)
		st.last += int64(len(p.Events))
		if p.Checkpoint != nil {
			if seq := p.CheckpointSeq(); st.checkpoint == nil || seq >= st.checkpoint.Seq {
				st.checkpoint = &session.Checkpoint{Seq: seq, State: p.Checkpoint.State}
			}
		}
	}
	var create *sql.Stmt
	for _, id := range order {
		if c := sessions[id].created; c != nil {
			if create == nil {
				create = tx.StmtContext(ctx, s.stmts.create)
			}
			if _, err := create.ExecContext(ctx, c.ID, c.Scope, c.CreatedAt.UnixMicro()); err != nil {
				return fmt.Errorf("session: commit: create %q: %w", id, err)
			}
		}
	}
	var saveCheckpoint *sql.Stmt
	for _, id := range order {
		if st := sessions[id]; st.checkpoint != nil {
			if saveCheckpoint == nil {
				saveCheckpoint = tx.StmtContext(ctx, s.stmts.checkpoint)
			}
			if _, err := saveCheckpoint.ExecContext(ctx, id, st.checkpoint.Seq, string(st.checkpoint.State)); err != nil {
				return fmt.Errorf("session: commit: checkpoint of %q: %w", id, err)
			}
		}
	}
	for n := len(rows) / sqliteColumns; n > 0; {
		k := min(n, sqliteMaxInsert)
		stmt, err := s.insert(ctx, k)
		if err == nil {
			_, err = tx.StmtContext(ctx, stmt).ExecContext(ctx, rows[:sqliteColumns*k]...)
		}
		if err != nil {
			return fmt.Errorf("session: commit: insert events: %w", err)
		}
		rows, n = rows[sqliteColumns*k:], n-k
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("session: commit: %w", err)
	}
	return nil
}

// committed counts a committed batch's pages for the checkpointer (the
// Core has woken the waiters of the sessions it wrote).
func (s *Store) committed(batch []*session.Pending) {
	if s.checkpoints != nil {
		s.checkpoints.wrote(batch)
	}
}

// Events implements session.Store.
func (s *Store) Events(ctx context.Context, sessionID string, after int64, limit int) ([]session.Event, error) {
	return s.EventsWithin(ctx, sessionID, after, limit, 0)
}

// EventsWithin implements session.BoundedReader. A packed row is unpacked whole and
// cut where the bound falls, so a read holds at most one row (256 KiB of
// packed events, or one event) beyond maxBytes.
func (s *Store) EventsWithin(ctx context.Context, sessionID string, after int64, limit, maxBytes int) ([]session.Event, error) {
	if s.Closed() {
		return nil, session.ErrClosed
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.stmts.events.QueryContext(ctx, sessionID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
	}
	defer rows.Close()
	var out []session.Event
	exists := false
	counted, total := 0, 0 // out[:counted] hold total bytes of data
	for (limit < 0 || len(out) < limit) && (maxBytes <= 0 || total < maxBytes) && rows.Next() {
		exists = true
		var e session.Event
		var seq, n, t sql.NullInt64
		var typ sql.NullString
		var data []byte
		if err := rows.Scan(&seq, &n, &typ, &t, &data); err != nil {
			return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
		}
		if !seq.Valid {
			break // the session, without events after after
		}
		e.Seq, e.Type = seq.Int64, typ.String
		if n.Int64 == 1 {
			e.Time = time.UnixMicro(t.Int64).UTC()
			e.Data = data
			out = append(out, e)
		} else if out, err = session.UnpackEvents(out, e.Seq-n.Int64+1, n.Int64, data, after, limit); err != nil {
			return nil, fmt.Errorf("session: events of %q: seq %d: %w", sessionID, e.Seq, err)
		}
		var keep int
		keep, total = session.WithinBytes(out[counted:], total, maxBytes)
		out = out[:counted+keep]
		counted = len(out)
	}
	if err := rows.Err(); err != nil {
		if s.Closed() {
			return nil, session.ErrClosed
		}
		return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
	}
	if !exists {
		return nil, session.ErrNotFound
	}
	return out, nil
}

func (s *Store) lastSeq(ctx context.Context, id string) (int64, error) {
	return s.LastSeq(id, sql.ErrNoRows, func(last *int64) error {
		return s.stmts.lastSeq.QueryRowContext(ctx, id).Scan(last)
	})
}

// LoadCheckpoint implements session.Store.
func (s *Store) LoadCheckpoint(ctx context.Context, sessionID string) (session.Checkpoint, error) {
	if s.Closed() {
		return session.Checkpoint{}, session.ErrClosed
	}
	var seq sql.NullInt64
	var state []byte
	err := s.stmts.loadCheckpoint.QueryRowContext(ctx, sessionID).Scan(&seq, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return session.Checkpoint{}, session.ErrNotFound
	}
	if err != nil {
		return session.Checkpoint{}, fmt.Errorf("session: checkpoint of %q: %w", sessionID, err)
	}
	if !seq.Valid {
		return session.Checkpoint{}, nil
	}
	return session.Checkpoint{Seq: seq.Int64, State: state}, nil
}

// leaseExec runs a lease statement on the writer with synchronous=NORMAL
// (see Store), under writeMu.
func (s *Store) leaseExec(ctx context.Context, f func(q sqliteConn) error) error {
	if s.Closed() {
		return session.ErrClosed
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.Closed() {
		return session.ErrClosed
	}
	if s.broken != nil {
		return s.broken
	}
	if !s.writeFull {
		return f(s.writer)
	}
	if _, err := s.writer.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
		return err
	}
	err := f(s.writer)
	if _, rerr := s.writer.ExecContext(context.Background(), "PRAGMA synchronous = FULL"); rerr != nil {
		// A writer that cannot flush its commits must not commit any.
		s.broken = fmt.Errorf("session: restore synchronous=FULL: %w", rerr)
		return errors.Join(err, s.broken)
	}
	return err
}

// sqliteConn is a *sql.DB or a *sql.Conn.
type sqliteConn interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// AcquireLease implements session.Store. Expiry is judged by this machine's clock,
// which every process sharing the file shares.
func (s *Store) AcquireLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (session.Lease, error) {
	if err := session.CheckLease(owner, ttl); err != nil {
		return session.Lease{}, err
	}
	start := time.Now()
	l := session.Lease{SessionID: sessionID, Owner: owner, Expires: start.Add(ttl)}
	err := s.leaseExec(ctx, func(q sqliteConn) error {
		now := time.Now().UnixMicro()
		err := q.QueryRowContext(ctx, `UPDATE sessions SET
			lease_token = CASE WHEN lease_owner IS ?2 THEN lease_token ELSE lease_token + 1 END,
			lease_owner = ?2, lease_expires = ?3
			WHERE id = ?1 AND (lease_owner IS NULL OR lease_owner = ?2 OR lease_expires <= ?4)
			RETURNING lease_token`, sessionID, owner, now+ttl.Microseconds(), now).Scan(&l.Token)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var holder sql.NullString
		var expires int64
		err = q.QueryRowContext(ctx, `SELECT lease_owner, lease_expires FROM sessions WHERE id = ?`, sessionID).Scan(&holder, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return session.ErrNotFound
		}
		if err != nil {
			return err
		}
		return session.Leased(sessionID, holder.String, time.UnixMicro(expires))
	})
	if err != nil {
		return session.Lease{}, sqliteLeaseError("acquire", sessionID, err)
	}
	return l, nil
}

// ReleaseLease implements session.Store.
func (s *Store) ReleaseLease(ctx context.Context, l session.Lease) error {
	err := s.leaseExec(ctx, func(q sqliteConn) error {
		res, err := q.ExecContext(ctx, `UPDATE sessions SET lease_owner = NULL, lease_expires = 0
			WHERE id = ? AND lease_owner = ? AND lease_token = ?`, l.SessionID, l.Owner, l.Token)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var one int
		if err := q.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, l.SessionID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return session.ErrNotFound
		} else if err != nil {
			return err
		}
		return session.LeaseLost(l.SessionID, l)
	})
	return sqliteLeaseError("release", l.SessionID, err)
}

// sqliteLeaseError wraps a lease statement's failure; the store's own errors
// pass as they are.
func sqliteLeaseError(what, sessionID string, err error) error {
	if err == nil || errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrLeased) || errors.Is(err, session.ErrLeaseLost) || errors.Is(err, session.ErrClosed) {
		return err
	}
	return fmt.Errorf("session: %s lease of %q: %w", what, sessionID, err)
}

// ListSessions implements session.Store.
func (s *Store) ListSessions(ctx context.Context, f session.SessionFilter) (session.SessionPage, error) {
	return s.List(f, func(after *session.Cursor, n int) ([]session.Session, error) {
		var where []string
		var args []any
		if f.Scope != "" {
			where, args = append(where, "scope = ?"), append(args, f.Scope)
		}
		if after != nil {
			where, args = append(where, "(created_at, id) < (?, ?)"), append(args, after.Created, after.ID)
		}
		q := `SELECT ` + sqliteSessionColumns + ` FROM sessions`
		if len(where) > 0 {
			q += " WHERE " + strings.Join(where, " AND ")
		}
		return scanSQLiteSessions(s.db.QueryContext(ctx, q+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, n)...))
	})
}

// DeleteSession implements session.Store.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if s.Closed() {
		return session.ErrClosed
	}
	n, err := s.deleteSessions(ctx, []string{id})
	if err != nil {
		return fmt.Errorf("session: delete %q: %w", id, err)
	}
	if n == 0 {
		return session.ErrNotFound
	}
	return nil
}

// deleteSessions deletes sessions in one transaction and returns how many
// existed.
func (s *Store) deleteSessions(ctx context.Context, ids []string) (int, error) {
	s.writeMu.Lock()
	n, err := s.deleteLocked(ctx, ids)
	s.writeMu.Unlock()
	if err == nil {
		for _, id := range ids {
			s.waiters.Notify(id)
		}
	}
	return n, err
}

func (s *Store) deleteLocked(ctx context.Context, ids []string) (int, error) {
	if s.broken != nil {
		return 0, s.broken
	}
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	n := 0
	for _, id := range ids {
		for _, q := range []string{`DELETE FROM events WHERE session_id = ?`, `DELETE FROM checkpoints WHERE session_id = ?`} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return 0, err
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return 0, err
		}
		d, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		n += int(d)
	}
	return n, tx.Commit()
}

// Prune implements session.Store: each round deletes up to PruneChunk sessions in
// one transaction, so the writer waits at most for one round.
func (s *Store) Prune(ctx context.Context, r session.Retention) (int, error) {
	return s.Core.Prune(ctx, r, s.pruneRound)
}

func (s *Store) pruneRound(ctx context.Context, r session.Retention) ([]string, int, error) {
	ids, err := s.pruneCandidates(ctx, r, time.Now())
	if err != nil || len(ids) == 0 {
		return nil, 0, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n, err := s.deleteLocked(ctx, ids)
	return ids, n, err
}

// pruneCandidates returns up to PruneChunk sessions r no longer keeps and
// no live lease holds, the least recently updated first.
func (s *Store) pruneCandidates(ctx context.Context, r session.Retention, now time.Time) ([]string, error) {
	var cond []string
	var args []any
	if r.MaxAge > 0 {
		cond, args = append(cond, "updated < ?"), append(args, now.Add(-r.MaxAge).UnixMicro())
	}
	if r.MaxCount > 0 {
		// Older than the MaxCount-th most recently updated session.
		var updated int64
		var id string
		err := s.db.QueryRowContext(ctx, `SELECT `+sqliteUpdatedAt+` AS updated, id FROM sessions ORDER BY updated DESC, id DESC LIMIT 1 OFFSET ?`,
			r.MaxCount-1).Scan(&updated, &id)
		switch {
		case err == nil:
			cond, args = append(cond, "(updated, id) < (?, ?)"), append(args, updated, id)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	if len(cond) == 0 {
		return nil, nil
	}
	return column[string](s.db.QueryContext(ctx, `SELECT id FROM (SELECT id, `+sqliteUpdatedAt+` AS updated, lease_owner, lease_expires FROM sessions)
		WHERE (`+strings.Join(cond, " OR ")+`) AND NOT (lease_owner IS NOT NULL AND lease_expires > ?)
		ORDER BY updated, id LIMIT ?`, append(args, now.UnixMicro(), session.PruneChunk)...))
}

// openCallsSQL finds tool/calls that no later tool/result closes; an ORDER
// BY that sorts session ids bytewise follows it.
const openCallsSQL = `SELECT c.session_id, c.seq, c.call_id, c.data FROM events AS c
WHERE c.call_id IS NOT NULL AND c.type = 'tool/call'
  AND NOT EXISTS (SELECT 1 FROM events AS r
    WHERE r.session_id = c.session_id AND r.call_id = c.call_id AND r.type = 'tool/result' AND r.seq > c.seq)`

// UsedCallIDs implements session.Store.
func (s *Store) UsedCallIDs(ctx context.Context, sessionID string, ids []string) ([]string, error) {
	if s.Closed() {
		return nil, session.ErrClosed
	}
	if _, err := s.GetSession(ctx, sessionID); err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		var one int
		err := s.stmts.usedCallID.QueryRowContext(ctx, sessionID, id).Scan(&one)
		switch {
		case err == nil:
			out = append(out, id)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("session: used call ids: %w", err)
		}
	}
	return out, nil
}

// OpenCalls implements session.Store.
func (s *Store) OpenCalls(ctx context.Context) ([]session.OpenCall, error) {
	if s.Closed() {
		return nil, session.ErrClosed
	}
	rows, err := s.db.QueryContext(ctx, openCallsSQL+` ORDER BY c.session_id, c.seq`)
	if err != nil {
		return nil, fmt.Errorf("session: open calls: %w", err)
	}
	defer rows.Close()
	var out []session.OpenCall
	for rows.Next() {
		var oc session.OpenCall
		var callID string
		var data []byte
		if err := rows.Scan(&oc.SessionID, &oc.Seq, &callID, &data); err != nil {
			return nil, fmt.Errorf("session: open calls: %w", err)
		}
		oc.Call = session.DecodeCall(data, callID)
		out = append(out, oc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session: open calls: %w", err)
	}
	return out, nil
}

// Close implements session.Store. It commits the writes already submitted first.
func (s *Store) Close() error {
	if !s.Stop() {
		return nil
	}
	s.stopBackground()
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if conn, ok := s.writer.(*sql.Conn); ok {
		conn.Close()
	}
	s.closeStmts()
	return s.db.Close()
}
