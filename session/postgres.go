package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the Store for several replicas sharing one log, through pgx.
//
// Group commit: one writer goroutine takes every write queued since its last
// commit and sends them in one round trip: a pipeline of one statement per
// write, run by the server as one implicit transaction, so one WAL flush
// (synchronous_commit=on, DurabilityFull) makes them all durable. With
// DurabilityProcess the store's connections set synchronous_commit=off: a
// commit is not waited for, and a server crash can lose the last ones (never
// partly).
//
// Sequence numbers: a write's statement raises its session row's last_seq
// by its number of events (row-locking the session until commit, so
// concurrent writers on any replica queue up), numbers the events from the
// old value, inserts them and sends a NOTIFY; a write to a new session
// inserts the row with its last_seq. The statements of a commit take the
// row locks in the order of the session ids (the batch is sorted, keeping
// each session's writes in order), so two replicas' commits never deadlock.
// PRIMARY KEY (session_id, seq) backs the numbering up.
//
// Wait listens on a dedicated connection (LISTEN), so an append on any replica
// wakes the waiters on every replica; after the listener reconnects, every
// waiter checks its log again, so a notification lost meanwhile delays no one.
//
// Leases live on the session row and expire by the server's clock, which
// every replica shares.
//
// The tables live in the connection's current schema: add search_path=NAME to
// the URL to keep several logs in one database.
type Postgres struct {
	pool    *pgxpool.Pool
	hub     *hub
	channel string // NOTIFY channel of this schema
	closed  atomic.Bool
	commits *committer

	stopListen context.CancelFunc
	listened   chan struct{} // closed when the listener has stopped
}

var _ Store = (*Postgres)(nil)

// migrationLockKey serializes migrations of every codemode schema in a database.
const migrationLockKey = 0x636f64656d6f6465 // "codemode"

// OpenPostgres connects to the PostgreSQL database at url (postgres://… or
// postgresql://…, with pgx's parameters), applies the schema migrations and
// starts listening for other replicas' appends. opts, when given, is one
// Options.
func OpenPostgres(ctx context.Context, url string, opts ...Options) (*Postgres, error) {
	o, err := options(opts)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("session: postgres URL: %w", err)
	}
	listenConfig := cfg.ConnConfig.Copy()
	if o.Durability == DurabilityProcess {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	} else {
		// Full means flushed: a server or URL default of off is raised to on
		// (stricter settings, such as remote_apply, stand).
		cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
			_, err := conn.Exec(ctx, `SELECT CASE WHEN current_setting('synchronous_commit') = 'off'
				THEN set_config('synchronous_commit', 'on', false) END`)
			return err
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("session: open postgres: %w", err)
	}
	p := &Postgres{pool: pool, hub: newHub()}
	if err := p.init(ctx, listenConfig); err != nil {
		pool.Close()
		return nil, fmt.Errorf("session: open postgres: %w", err)
	}
	p.commits = newCommitter(p.commitBatch, p.committed)
	return p, nil
}

func (p *Postgres) init(ctx context.Context, connConfig *pgx.ConnConfig) error {
	var schema *string
	if err := p.pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	if schema == nil {
		return errors.New("no current schema: the search_path names no existing schema")
	}
	p.channel = "codemode_events"
	if *schema != "public" {
		p.channel += "_" + *schema
	}
	if len(p.channel) > 63 { // PostgreSQL truncates identifiers
		p.channel = p.channel[:63]
	}
	if err := p.migrate(ctx); err != nil {
		return err
	}
	conn, err := p.listenConn(ctx, connConfig)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	listenCtx, stop := context.WithCancel(context.Background())
	p.stopListen, p.listened = stop, make(chan struct{})
	go p.listen(listenCtx, connConfig, conn)
	return nil
}

// migrate applies the pending migrations in one transaction under an advisory
// lock, so replicas starting together apply them once.
func (p *Postgres) migrate(ctx context.Context) error {
	all, err := migrations("postgres")
	if err != nil {
		return err
	}
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLockKey)); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+migrationsTable+` (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	rows, _ := tx.Query(ctx, `SELECT version FROM `+migrationsTable)
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	todo, err := pending(all, applied)
	if err != nil {
		return err
	}
	for _, m := range todo {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+migrationsTable+` (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
	}
	return tx.Commit(ctx)
}

// listenerAppName names the listener's connection in pg_stat_activity.
const listenerAppName = "codemode-listener"

// listenConn opens the listener's own connection (outside the pool: it
// blocks in WaitForNotification) and subscribes to the channel.
func (p *Postgres) listenConn(ctx context.Context, connConfig *pgx.ConnConfig) (*pgx.Conn, error) {
	cfg := connConfig.Copy()
	cfg.RuntimeParams["application_name"] = listenerAppName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{p.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// listen relays notifications (payload: a session id) to the hub until ctx
// ends, reconnecting with backoff when the connection fails.
func (p *Postgres) listen(ctx context.Context, connConfig *pgx.ConnConfig, conn *pgx.Conn) {
	defer close(p.listened)
	backoff := 50 * time.Millisecond
	for {
		if conn == nil {
			var err error
			if conn, err = p.listenConn(ctx, connConfig); err != nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 50 * time.Millisecond
			p.hub.wakeAll() // notifications sent while disconnected were lost
		}
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(closeCtx)
			cancel()
			conn = nil
			if ctx.Err() != nil {
				return
			}
			p.hub.wakeAll()
			continue
		}
		p.hub.notify(n.Payload)
	}
}

// CreateSession implements Store.
func (p *Postgres) CreateSession(ctx context.Context, s Session) error { return createVia(ctx, p, s) }

// GetSession implements Store.
func (p *Postgres) GetSession(ctx context.Context, id string) (Session, error) {
	if p.closed.Load() {
		return Session{}, ErrClosed
	}
	rows, err := p.pool.Query(ctx, `SELECT `+pgSessionColumns+` FROM sessions WHERE id = $1`, id)
	if err != nil {
		return Session{}, fmt.Errorf("session: get %q: %w", id, err)
	}
	got, err := collectPgSessions(rows)
	if err != nil {
		return Session{}, fmt.Errorf("session: get %q: %w", id, err)
	}
	if len(got) == 0 {
		return Session{}, ErrNotFound
	}
	return got[0], nil
}

// pgSessionColumns are what collectPgSessions reads.
const pgSessionColumns = `id, scope, created_at, last_seq, updated_at`

func collectPgSessions(rows pgx.Rows) ([]Session, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Session, error) {
		var s Session
		err := row.Scan(&s.ID, &s.Scope, &s.CreatedAt, &s.LastSeq, &s.UpdatedAt)
		s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
		return s, err
	})
}

// Append implements Store.
func (p *Postgres) Append(ctx context.Context, sessionID string, events ...Event) ([]Event, error) {
	return appendVia(ctx, p, p.lastSeq, sessionID, events)
}

// Submit implements Store.
func (p *Postgres) Submit(ctx context.Context, w Write) *Ticket {
	if p.closed.Load() {
		return failed(ErrClosed)
	}
	return p.commits.submit(ctx, w)
}

// Stats returns the store's group-commit counts.
func (p *Postgres) Stats() CommitStats { return p.commits.stats() }

// pgCreateSQL creates a session with its first events and checkpoint; it
// returns whether it did, and NOTIFYs when it appended.
const pgCreateSQL = `WITH c AS (
    INSERT INTO sessions (id, scope, created_at, updated_at, last_seq) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (id) DO NOTHING
    RETURNING id
), ins AS (
    INSERT INTO events (session_id, seq, type, time, call_id, data)
    SELECT c.id, e.ord, e.type, e.time, NULLIF(e.call_id, ''), e.data
    FROM c, unnest($6::text[], $7::timestamptz[], $8::text[], $9::text[]) WITH ORDINALITY AS e (type, time, call_id, data, ord)
), cp AS (
    INSERT INTO checkpoints (session_id, seq, state) SELECT c.id, $10, $11 FROM c WHERE $11::text IS NOT NULL
)
SELECT count(*), (SELECT count(pg_notify($12, c.id)) FROM c WHERE $5 > 0) FROM c`

// pgAppendSQL makes a write to an existing session: it raises last_seq
// (taking the row lock), inserts the events numbered from the old value,
// saves the checkpoint unless a newer one is saved, and NOTIFYs. A write that
// cannot be made (no such session, a lost lease, a checkpoint past the log)
// changes nothing and returns a NULL base with the row as it was, from which
// the reason is read.
const pgAppendSQL = `WITH s AS (
    UPDATE sessions SET last_seq = last_seq + $2, updated_at = GREATEST(updated_at, $3)
    WHERE id = $1
      AND ($4::text IS NULL OR (lease_owner = $4 AND lease_token = $5))
      AND ($6::bigint IS NULL OR $6 <= last_seq + $2)
    RETURNING last_seq - $2 AS base
), ins AS (
    INSERT INTO events (session_id, seq, type, time, call_id, data)
    SELECT $1, s.base + e.ord, e.type, e.time, NULLIF(e.call_id, ''), e.data
    FROM s, unnest($7::text[], $8::timestamptz[], $9::text[], $10::text[]) WITH ORDINALITY AS e (type, time, call_id, data, ord)
), cp AS (
    INSERT INTO checkpoints (session_id, seq, state)
    SELECT $1, COALESCE($6, s.base + $2), $11 FROM s WHERE $11::text IS NOT NULL
    ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, state = excluded.state WHERE checkpoints.seq <= excluded.seq
)
SELECT s.base, cur.last_seq, cur.lease_owner, cur.lease_token, (SELECT count(pg_notify($12, $1)) FROM s WHERE $2 > 0)
FROM (SELECT 1) AS one LEFT JOIN s ON true LEFT JOIN sessions AS cur ON cur.id = $1`

// pgCommitTimeout bounds one attempt at a commit.
const pgCommitTimeout = time.Minute

// commitBatch commits a batch in one round trip, retrying when the server
// rolled it back for a deadlock or a serialization failure, or when nothing
// reached the server.
func (p *Postgres) commitBatch(batch []*queued) error {
	order := make([]*queued, len(batch))
	copy(order, batch)
	slices.SortStableFunc(order, func(a, b *queued) int { return strings.Compare(a.sessionID, b.sessionID) })
	for attempt := 1; ; attempt++ {
		err := p.commitOnce(order)
		if err == nil {
			return nil
		}
		var pgErr *pgconn.PgError
		serverRolledBack := errors.As(err, &pgErr)
		retry := pgconn.SafeToRetry(err) || serverRolledBack && (pgErr.Code == "40P01" || pgErr.Code == "40001")
		if retry && attempt < 4 && !p.closed.Load() {
			time.Sleep(time.Duration(attempt) * 5 * time.Millisecond)
			continue
		}
		if serverRolledBack || pgconn.SafeToRetry(err) {
			return fmt.Errorf("session: commit: %w", err)
		}
		return fmt.Errorf("session: commit (its outcome is unknown: the writes may have committed): %w", err)
	}
}

// commitOnce sends one pipeline of the batch's statements.
func (p *Postgres) commitOnce(order []*queued) error {
	ctx, cancel := context.WithTimeout(context.Background(), pgCommitTimeout)
	defer cancel()
	b := &pgx.Batch{}
	for _, q := range order {
		q.base, q.err = 0, nil
		n := len(q.events)
		types, times, callIDs, data := make([]string, n), make([]time.Time, n), make([]string, n), make([]string, n)
		var latest *time.Time
		for i, e := range q.events {
			types[i], times[i], callIDs[i], data[i] = e.Type, e.Time, e.callID, string(e.Data)
			if latest == nil || e.Time.After(*latest) {
				latest = &times[i]
			}
		}
		var cpSeq *int64
		var cpState *string
		if c := q.checkpoint; c != nil {
			state := string(c.State)
			cpState = &state
			if c.Seq != 0 || n == 0 {
				cpSeq = &c.Seq
			}
		}
		if c := q.create; c != nil {
			updated := c.CreatedAt
			if latest != nil && latest.After(updated) {
				updated = *latest
			}
			seq := int64(n)
			if cpSeq != nil {
				seq = *cpSeq
			}
			b.Queue(pgCreateSQL, c.ID, c.Scope, c.CreatedAt, updated, int64(n), types, times, callIDs, data, seq, cpState, p.channel)
			continue
		}
		var owner *string
		var token int64
		if l := q.lease; l != nil {
			owner, token = &l.Owner, l.Token
		}
		b.Queue(pgAppendSQL, q.sessionID, int64(n), latest, owner, token, cpSeq, types, times, callIDs, data, cpState, p.channel)
	}
	br := p.pool.SendBatch(ctx, b)
	for _, q := range order {
		if q.create != nil {
			var created, notified int64
			if err := br.QueryRow().Scan(&created, &notified); err != nil {
				br.Close()
				return err
			}
			if created == 0 {
				q.err = ErrExists
			}
			continue
		}
		var base, last, token *int64
		var owner *string
		var notified int64
		if err := br.QueryRow().Scan(&base, &last, &owner, &token, &notified); err != nil {
			br.Close()
			return err
		}
		switch {
		case base != nil:
			q.base = *base
		case last == nil:
			q.err = ErrNotFound
		case q.lease != nil && (owner == nil || *owner != q.lease.Owner || *token != q.lease.Token):
			q.err = leaseLost(q.sessionID, *q.lease)
		default:
			q.base = *last
			q.err = checkpointPastLog(q.sessionID, q.checkpointSeq(), *last+int64(len(q.events)))
		}
	}
	return br.Close()
}

// committed wakes this process's waiters of every session a batch wrote
// (other replicas hear the NOTIFY).
func (p *Postgres) committed(batch []*queued) { notifyWritten(p.hub, batch) }

// Events implements Store.
func (p *Postgres) Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	var lim *int64
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := p.pool.Query(ctx,
		`SELECT seq, type, time, data FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		sessionID, after, lim)
	if err != nil {
		return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Event, error) {
		var e Event
		var data string
		err := row.Scan(&e.Seq, &e.Type, &e.Time, &data)
		e.Time = e.Time.UTC()
		e.Data = []byte(data)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
	}
	if len(out) == 0 {
		if _, err := p.lastSeq(ctx, sessionID); err != nil {
			return nil, err
		}
		return nil, nil
	}
	return out, nil
}

// Wait implements Store.
func (p *Postgres) Wait(ctx context.Context, sessionID string, after int64) error {
	if p.closed.Load() {
		return ErrClosed
	}
	return p.hub.wait(ctx, sessionID, after, p.lastSeq)
}

func (p *Postgres) lastSeq(ctx context.Context, id string) (int64, error) {
	if p.closed.Load() {
		return 0, ErrClosed
	}
	var last int64
	err := p.pool.QueryRow(ctx, `SELECT last_seq FROM sessions WHERE id = $1`, id).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		if p.closed.Load() {
			return 0, ErrClosed // closed while querying
		}
		return 0, fmt.Errorf("session: last seq of %q: %w", id, err)
	}
	return last, nil
}

// OpenCalls implements Store.
func (p *Postgres) OpenCalls(ctx context.Context) ([]OpenCall, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := p.pool.Query(ctx, openCallsSQL+` ORDER BY c.session_id COLLATE "C", c.seq`)
	if err != nil {
		return nil, fmt.Errorf("session: open calls: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (OpenCall, error) {
		var oc OpenCall
		var callID, data string
		err := row.Scan(&oc.SessionID, &oc.Seq, &callID, &data)
		oc.Call = decodeCall([]byte(data), callID)
		return oc, err
	})
	if err != nil {
		return nil, fmt.Errorf("session: open calls: %w", err)
	}
	return out, nil
}

// LoadCheckpoint implements Store.
func (p *Postgres) LoadCheckpoint(ctx context.Context, sessionID string) (Checkpoint, error) {
	if p.closed.Load() {
		return Checkpoint{}, ErrClosed
	}
	var seq *int64
	var state *string
	err := p.pool.QueryRow(ctx, `SELECT c.seq, c.state FROM sessions AS s LEFT JOIN checkpoints AS c ON c.session_id = s.id WHERE s.id = $1`,
		sessionID).Scan(&seq, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return Checkpoint{}, ErrNotFound
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("session: checkpoint of %q: %w", sessionID, err)
	}
	if seq == nil {
		return Checkpoint{}, nil
	}
	return Checkpoint{Seq: *seq, State: json.RawMessage(*state)}, nil
}

// AcquireLease implements Store. Expiry is judged by the server's clock.
func (p *Postgres) AcquireLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (Lease, error) {
	if err := checkLease(owner, ttl); err != nil {
		return Lease{}, err
	}
	if p.closed.Load() {
		return Lease{}, ErrClosed
	}
	start := time.Now()
	var token *int64
	var exists bool
	err := p.pool.QueryRow(ctx, `WITH u AS (
    UPDATE sessions SET
        lease_token = CASE WHEN lease_owner IS NOT DISTINCT FROM $2 THEN lease_token ELSE lease_token + 1 END,
        lease_owner = $2,
        lease_expires = clock_timestamp() + $3::float8 * interval '1 second'
    WHERE id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_expires <= clock_timestamp())
    RETURNING lease_token
)
SELECT (SELECT lease_token FROM u), EXISTS (SELECT 1 FROM sessions WHERE id = $1)`, sessionID, owner, ttl.Seconds()).Scan(&token, &exists)
	if err != nil {
		return Lease{}, fmt.Errorf("session: acquire lease of %q: %w", sessionID, err)
	}
	switch {
	case token != nil:
		return Lease{SessionID: sessionID, Owner: owner, Token: *token, Expires: start.Add(ttl)}, nil
	case !exists:
		return Lease{}, ErrNotFound
	}
	// Read the holder afresh: the statement's snapshot may predate it.
	var holder *string
	var expires *time.Time
	err = p.pool.QueryRow(ctx, `SELECT lease_owner, lease_expires FROM sessions WHERE id = $1`, sessionID).Scan(&holder, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, ErrNotFound
	}
	if err != nil {
		return Lease{}, fmt.Errorf("session: acquire lease of %q: %w", sessionID, err)
	}
	if holder == nil || expires == nil {
		return Lease{}, fmt.Errorf("%w: session %q changed hands meanwhile", ErrLeased, sessionID)
	}
	return Lease{}, leased(sessionID, *holder, *expires)
}

// ReleaseLease implements Store.
func (p *Postgres) ReleaseLease(ctx context.Context, l Lease) error {
	if p.closed.Load() {
		return ErrClosed
	}
	var released, exists bool
	err := p.pool.QueryRow(ctx, `WITH u AS (
    UPDATE sessions SET lease_owner = NULL, lease_expires = NULL WHERE id = $1 AND lease_owner = $2 AND lease_token = $3 RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM u), EXISTS (SELECT 1 FROM sessions WHERE id = $1)`, l.SessionID, l.Owner, l.Token).Scan(&released, &exists)
	switch {
	case err != nil:
		return fmt.Errorf("session: release lease of %q: %w", l.SessionID, err)
	case released:
		return nil
	case !exists:
		return ErrNotFound
	}
	return leaseLost(l.SessionID, l)
}

// ListSessions implements Store.
func (p *Postgres) ListSessions(ctx context.Context, f SessionFilter) (SessionPage, error) {
	limit, err := pageLimit(f.Limit)
	if err != nil {
		return SessionPage{}, err
	}
	after, paged, err := parseCursor(f.Cursor)
	if err != nil {
		return SessionPage{}, err
	}
	if p.closed.Load() {
		return SessionPage{}, ErrClosed
	}
	var where []string
	args := []any{limit + 1}
	if f.Scope != "" {
		args = append(args, f.Scope)
		where = append(where, fmt.Sprintf("scope = $%d", len(args)))
	}
	if paged {
		args = append(args, time.UnixMicro(after.created), after.id)
		where = append(where, fmt.Sprintf(`(created_at, id COLLATE "C") < ($%d, $%d)`, len(args)-1, len(args)))
	}
	q := `SELECT ` + pgSessionColumns + ` FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := p.pool.Query(ctx, q+` ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $1`, args...)
	if err != nil {
		return SessionPage{}, fmt.Errorf("session: list: %w", err)
	}
	got, err := collectPgSessions(rows)
	if err != nil {
		return SessionPage{}, fmt.Errorf("session: list: %w", err)
	}
	return page(got, limit), nil
}

// DeleteSession implements Store: one round trip, locking the session row
// first so that no write slips in between.
func (p *Postgres) DeleteSession(ctx context.Context, id string) error {
	if p.closed.Load() {
		return ErrClosed
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT count(*) FROM (SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE) AS l`, id)
	b.Queue(`DELETE FROM events WHERE session_id = $1`, id)
	b.Queue(`DELETE FROM sessions WHERE id = $1`, id) // the checkpoint goes with it
	b.Queue(`SELECT pg_notify($1, $2)`, p.channel, id)
	br := p.pool.SendBatch(ctx, b)
	var found int64
	err := br.QueryRow().Scan(&found)
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session: delete %q: %w", id, err)
	}
	p.hub.notify(id)
	if found == 0 {
		return ErrNotFound
	}
	return nil
}

// Prune implements Store: each round deletes up to pruneChunk sessions in
// one transaction, skipping sessions a writer holds at that moment (they are
// in use).
func (p *Postgres) Prune(ctx context.Context, r Retention) (int, error) {
	if err := checkRetention(r); err != nil {
		return 0, err
	}
	total := 0
	for {
		if p.closed.Load() {
			return total, ErrClosed
		}
		ids, err := p.pruneRound(ctx, r)
		total += len(ids)
		if err != nil {
			return total, fmt.Errorf("session: prune: %w", err)
		}
		for _, id := range ids {
			p.hub.notify(id)
		}
		if len(ids) < pruneChunk {
			return total, nil
		}
	}
}

func (p *Postgres) pruneRound(ctx context.Context, r Retention) ([]string, error) {
	var cond []string
	var args []any
	if r.MaxAge > 0 {
		args = append(args, r.MaxAge.Seconds())
		cond = append(cond, fmt.Sprintf("updated_at < now() - $%d::float8 * interval '1 second'", len(args)))
	}
	if r.MaxCount > 0 {
		var updated time.Time
		var id string
		err := p.pool.QueryRow(ctx, `SELECT updated_at, id FROM sessions ORDER BY updated_at DESC, id COLLATE "C" DESC LIMIT 1 OFFSET $1`,
			r.MaxCount-1).Scan(&updated, &id)
		switch {
		case err == nil:
			args = append(args, updated, id)
			cond = append(cond, fmt.Sprintf(`(updated_at, id COLLATE "C") < ($%d, $%d)`, len(args)-1, len(args)))
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, err
		}
	}
	if len(cond) == 0 {
		return nil, nil
	}
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.Background())
	rows, err := tx.Query(ctx, `SELECT id FROM sessions
WHERE (`+strings.Join(cond, " OR ")+`) AND NOT (lease_owner IS NOT NULL AND lease_expires > clock_timestamp())
ORDER BY updated_at, id COLLATE "C" LIMIT `+strconv.Itoa(pruneChunk)+`
FOR UPDATE SKIP LOCKED`, args...)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM events WHERE session_id = ANY($1)`, ids)
	b.Queue(`DELETE FROM sessions WHERE id = ANY($1)`, ids)
	b.Queue(`SELECT count(pg_notify($1, id)) FROM unnest($2::text[]) AS id`, p.channel, ids)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return ids, nil
}

// Close implements Store. It commits the writes already submitted first.
func (p *Postgres) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.hub.close()
	p.commits.close()
	p.stopListen()
	<-p.listened
	p.pool.Close()
	return nil
}
