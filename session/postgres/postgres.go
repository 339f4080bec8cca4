package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/codemode/codemode/session"
)

// Store is the session.Store for several replicas sharing one log, through pgx.
//
// Group commit: one writer goroutine takes every write queued since its last
// commit and sends them in one round trip: one set-based statement for the
// whole batch (two when it creates sessions), so one WAL flush
// (synchronous_commit=on, DurabilityFull) makes them all durable. With
// DurabilityProcess the store's connections set synchronous_commit=off: a
// commit is not waited for, and a server crash can lose the last ones (never
// partly).
//
// Sequence numbers: a commit locks its sessions' rows (in id order, so two
// replicas' commits never deadlock; concurrent writers on any replica queue
// up), numbers each session's new events after its last_seq, inserts them,
// raises last_seq and sends a NOTIFY, all in one statement (see
// pgCommitSQL). PRIMARY KEY (session_id, seq) backs the numbering up.
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
type Store struct {
	*session.Core // Submit, Append, CreateSession, Wait, WriteErr, Stats; closed state

	pool    *pgxpool.Pool
	waiters *session.Waiters
	channel string // NOTIFY channel of this schema

	stopListen context.CancelFunc
	listened   chan struct{} // closed when the listener has stopped
}

var _ session.Store = (*Store)(nil)

// migrationLockKey serializes migrations of every codemode schema in a database.
const migrationLockKey = 0x636f64656d6f6465 // "codemode"

// Open connects to the PostgreSQL database at url (postgres://… or
// postgresql://…, with pgx's parameters), applies the schema migrations and
// starts listening for other replicas' appends. opts, when given, is one
// Options.
func Open(ctx context.Context, url string, opts ...session.Options) (*Store, error) {
	o, err := session.CheckOptions(opts)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("session: postgres URL: %w", err)
	}
	listenConfig := cfg.ConnConfig.Copy()
	if o.Durability == session.DurabilityProcess {
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
	p := &Store{pool: pool, waiters: session.NewWaiters()}
	if err := p.init(ctx, listenConfig); err != nil {
		pool.Close()
		return nil, fmt.Errorf("session: open postgres: %w", err)
	}
	p.Core = session.NewCore(p.waiters, p.commitBatch, nil, p.lastSeq) // other replicas hear the NOTIFY
	return p, nil
}

func (p *Store) init(ctx context.Context, connConfig *pgx.ConnConfig) error {
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
func (p *Store) migrate(ctx context.Context) error {
	all, err := session.Migrations(migrationFS, "postgres")
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
	exec := func(q string, args ...any) error {
		_, err := tx.Exec(ctx, q, args...)
		return err
	}
	err = session.ApplyMigrations(all, session.MigrationTx{
		CreateTable: `CREATE TABLE IF NOT EXISTS ` + session.MigrationsTable + ` (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		Exec: exec,
		Ints: func(q string) ([]int, error) {
			rows, _ := tx.Query(ctx, q)
			return pgx.CollectRows(rows, pgx.RowTo[int])
		},
		Record: func(m session.Migration) error {
			return exec(`INSERT INTO `+session.MigrationsTable+` (version, name) VALUES ($1, $2)`, m.Version, m.Name)
		},
	})
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// listenerAppName names the listener's connection in pg_stat_activity.
const listenerAppName = "codemode-listener"

// listenConn opens the listener's own connection (outside the pool: it
// blocks in WaitForNotification) and subscribes to the channel.
func (p *Store) listenConn(ctx context.Context, connConfig *pgx.ConnConfig) (*pgx.Conn, error) {
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
func (p *Store) listen(ctx context.Context, connConfig *pgx.ConnConfig, conn *pgx.Conn) {
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
			p.waiters.WakeAll() // notifications sent while disconnected were lost
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
			p.waiters.WakeAll()
			continue
		}
		p.waiters.Notify(n.Payload)
	}
}

// GetSession implements session.Store.
func (p *Store) GetSession(ctx context.Context, id string) (session.Session, error) {
	return p.Get(id, func() ([]session.Session, error) {
		return collectPgSessions(p.pool.Query(ctx, `SELECT `+pgSessionColumns+` FROM sessions WHERE id = $1`, id))
	})
}

// pgSessionColumns are what collectPgSessions reads.
const pgSessionColumns = `id, scope, created_at, last_seq, updated_at`

func collectPgSessions(rows pgx.Rows, err error) ([]session.Session, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (session.Session, error) {
		var s session.Session
		err := row.Scan(&s.ID, &s.Scope, &s.CreatedAt, &s.LastSeq, &s.UpdatedAt)
		s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
		return s, err
	})
}

// A commit is a pipeline of two statements, one round trip, run by the
// server as one implicit transaction. pgCreateSQL inserts the sessions the
// batch creates (the first create of each id), in id order, marked with
// last_seq -1, a value only this transaction can see; pgCommitSQL then
// judges every write as the writes before it in the batch leave its session,
// set-wise:
//
//   - it locks the batch's session rows in id order (so replicas' commits
//     never deadlock) and reads them as they are;
//   - a create succeeds when its row is marked (ours), and is the first of
//     its id; a write to a session before its create, or to none, finds none;
//     a fenced write needs the lease's owner and token;
//   - each write's events are numbered after its session's last seq plus
//     the events of the writes before it that succeed (a checkpoint naming a
//     seq must be within that);
//   - it inserts the events, sets each session's last_seq and updated_at
//     (the later of created_at and its last event's time),
//     saves each session's newest checkpoint, NOTIFYs, and returns each
//     write's outcome and base in order.
const (
	pgCreateSQL = `INSERT INTO sessions (id, scope, created_at, updated_at, last_seq)
SELECT id, scope, created, created, -1 FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS c (id, scope, created)
ORDER BY id COLLATE "C"
ON CONFLICT (id) DO NOTHING`

	pgCommitSQL = `WITH ops AS (
    SELECT * FROM unnest($1::text[], $2::bool[], $3::int8[], $4::text[], $5::int8[], $6::int8[], $7::text[], $8::timestamptz[])
        WITH ORDINALITY AS o (sid, is_create, n, fence_owner, fence_token, cp_seq, cp_state, last_time, i)
), locked AS MATERIALIZED (
    SELECT id, last_seq, lease_owner, lease_token FROM sessions
    WHERE id = ANY ($1::text[]) ORDER BY id COLLATE "C" FOR UPDATE
), judged AS (
    SELECT o.*, l.last_seq AS prior, l.lease_owner, l.lease_token,
        min(o.i) FILTER (WHERE o.is_create) OVER (PARTITION BY o.sid) AS first_create
    FROM ops AS o LEFT JOIN locked AS l ON l.id = o.sid
), checked AS (
    SELECT j.*, CASE
        WHEN j.prior IS NULL THEN 'notfound'
        WHEN j.is_create AND (j.prior >= 0 OR j.i <> j.first_create) THEN 'exists'
        WHEN NOT j.is_create AND j.prior < 0 AND j.i < j.first_create THEN 'notfound'
        WHEN j.fence_owner IS NOT NULL AND (j.lease_owner IS DISTINCT FROM j.fence_owner OR j.lease_token <> j.fence_token) THEN 'leaselost'
    END AS failure
    FROM judged AS j
), numbered AS (
    SELECT c.*, greatest(c.prior, 0) + coalesce(sum(c.n) FILTER (WHERE c.failure IS NULL)
        OVER (PARTITION BY c.sid ORDER BY c.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::int8 AS base
    FROM checked AS c
), outcome AS MATERIALIZED (
    SELECT nb.*, CASE WHEN nb.failure IS NULL AND nb.cp_seq > nb.base THEN 'cppast' ELSE nb.failure END AS result
    FROM numbered AS nb
), ins AS (
    INSERT INTO events (session_id, seq, type, time, call_id, data)
    SELECT o.sid, o.base + e.ord, e.type, e.time, NULLIF(e.call_id, ''), e.data
    FROM unnest($9::int8[], $10::int8[], $11::text[], $12::timestamptz[], $13::text[], $14::text[]) AS e (op, ord, type, time, call_id, data)
    JOIN outcome AS o ON o.i = e.op AND o.result IS NULL
), upd AS (
    UPDATE sessions AS s SET last_seq = t.last,
        updated_at = CASE WHEN t.last_time IS NULL THEN s.updated_at ELSE GREATEST(s.created_at, t.last_time) END
    FROM (SELECT sid, max(base + n) AS last, (array_agg(last_time ORDER BY i DESC) FILTER (WHERE n > 0))[1] AS last_time
        FROM outcome WHERE result IS NULL GROUP BY sid) AS t
    WHERE s.id = t.sid
), cp AS (
    INSERT INTO checkpoints (session_id, seq, state)
    SELECT DISTINCT ON (sid) sid, COALESCE(cp_seq, base + n), cp_state FROM outcome
    WHERE result IS NULL AND cp_state IS NOT NULL
    ORDER BY sid, COALESCE(cp_seq, base + n) DESC, i DESC
    ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, state = excluded.state WHERE checkpoints.seq <= excluded.seq
)
SELECT result, base, (SELECT count(pg_notify($15, w.sid)) FROM (SELECT DISTINCT sid FROM outcome WHERE result IS NULL AND n > 0) AS w)
FROM outcome ORDER BY i`
)

// pgWriteSQL is pgCommitSQL for the commonest batch, one write to an
// existing session (whose checkpoint, if any, covers its events): it costs
// the server a fraction of the set-based statement. A write it cannot make
// (no such session, a lost lease) changes nothing and returns no row.
const pgWriteSQL = `WITH s AS (
    UPDATE sessions SET last_seq = last_seq + $2,
        updated_at = CASE WHEN $3::timestamptz IS NULL THEN updated_at ELSE GREATEST(created_at, $3) END
    WHERE id = $1 AND ($4::text IS NULL OR (lease_owner = $4 AND lease_token = $5))
    RETURNING last_seq - $2 AS base
), ins AS (
    INSERT INTO events (session_id, seq, type, time, call_id, data)
    SELECT $1, s.base + e.ord, e.type, e.time, NULLIF(e.call_id, ''), e.data
    FROM s, unnest($6::text[], $7::timestamptz[], $8::text[], $9::text[]) WITH ORDINALITY AS e (type, time, call_id, data, ord)
), cp AS (
    INSERT INTO checkpoints (session_id, seq, state) SELECT $1, s.base + $2, $10 FROM s WHERE $10::text IS NOT NULL
    ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, state = excluded.state WHERE checkpoints.seq <= excluded.seq
)
SELECT s.base, (SELECT count(pg_notify($11, $1)) FROM s WHERE $2 > 0) FROM s`

// pgCommitTimeout bounds one attempt at a commit.
const pgCommitTimeout = time.Minute

// commitBatch commits a batch in one round trip. It retries, up to three
// times, when the server certainly committed nothing and the failure may
// pass: nothing reached the server, a deadlock or serialization failure, or
// a connection the server ended (a restart, a failover, an administrator).
// A commit whose outcome nobody can know (the connection broke after the
// server may have committed) is never retried: its writes fail saying so.
func (p *Store) commitBatch(batch []*session.Pending) error {
	for attempt := 1; ; attempt++ {
		err, uncertain := p.commitOnce(batch)
		if err == nil {
			return nil
		}
		if uncertain {
			return session.Unavailable(fmt.Errorf("session: commit (its outcome is unknown: the writes may have committed): %w", err))
		}
		if transient(err) && attempt < 4 && !p.Closed() {
			time.Sleep(time.Duration(attempt) * 5 * time.Millisecond)
			continue
		}
		if !refusal(err) {
			return session.Unavailable(fmt.Errorf("session: commit: %w", err))
		}
		return fmt.Errorf("session: commit: %w", err)
	}
}

// transient reports whether a failed commit may succeed if tried again.
func transient(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return pgconn.SafeToRetry(err)
	}
	switch {
	case pgErr.Code == "40P01", pgErr.Code == "40001": // deadlock, serialization failure
		return true
	case strings.HasPrefix(pgErr.Code, "57"), strings.HasPrefix(pgErr.Code, "08"): // operator intervention, connection
		return true
	}
	return false
}

// refusal reports whether a failed commit is the server refusing the
// batch's data (a data exception, a constraint, a value too large), which
// committing its writes one by one isolates, rather than the server or the
// connection failing (transient codes, insufficient resources such as a
// full disk, system errors, or no answer at all).
func refusal(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || transient(err) {
		return false
	}
	return !strings.HasPrefix(pgErr.Code, "53") && !strings.HasPrefix(pgErr.Code, "58") && !strings.HasPrefix(pgErr.Code, "XX")
}

// serverEnded reports whether err is the server ending the connection.
func serverEnded(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "57") || strings.HasPrefix(pgErr.Code, "08"))
}

// commitOnce sends the batch's pipeline and reads each write's outcome.
// uncertain reports a failure after which the server may have committed:
// the server commits at the pipeline's end, after every statement's result,
// so an error from the server in place of a result means it did not, and an
// error before anything reached it too.
func (p *Store) commitOnce(batch []*session.Pending) (err error, uncertain bool) {
	ctx, cancel := context.WithTimeout(context.Background(), pgCommitTimeout)
	defer cancel()
	n := len(batch)
	sids, creates, counts := make([]string, n), make([]bool, n), make([]int64, n)
	owners, tokens, cpSeqs, cpStates, lastTimes := make([]*string, n), make([]int64, n), make([]*int64, n), make([]*string, n), make([]*time.Time, n)
	var evOp, evOrd []int64
	var types, callIDs, data []string
	var times []time.Time
	var newIDs, newScopes []string
	var newCreated []time.Time
	created := map[string]bool{}
	for i, q := range batch {
		q.Base, q.Err = 0, nil
		sids[i], creates[i], counts[i] = q.SessionID, q.Create != nil, int64(len(q.Events))
		if c := q.Create; c != nil && !created[c.ID] {
			created[c.ID] = true
			newIDs, newScopes, newCreated = append(newIDs, c.ID), append(newScopes, c.Scope), append(newCreated, c.CreatedAt)
		}
		if l := q.Lease; l != nil {
			owners[i], tokens[i] = &l.Owner, l.Token
		}
		if c := q.Checkpoint; c != nil {
			state := string(c.State)
			cpStates[i] = &state
			if c.Seq != 0 || len(q.Events) == 0 {
				cpSeqs[i] = &c.Seq // else the last of its events
			}
		}
		for j, e := range q.Events {
			evOp, evOrd = append(evOp, int64(i+1)), append(evOrd, int64(j+1))
			types, times, callIDs, data = append(types, e.Type), append(times, e.Time), append(callIDs, e.CallID), append(data, string(e.Data))
		}
		if len(q.Events) > 0 {
			lastTimes[i] = &q.Events[len(q.Events)-1].Time
		}
	}
	if q := batch[0]; n == 1 && q.Create == nil && (q.Checkpoint == nil || len(q.Events) > 0 && q.Checkpoint.Seq == 0) {
		return p.commitOne(ctx, q, owners[0], tokens[0], cpStates[0], lastTimes[0], types, times, callIDs, data)
	}
	b := &pgx.Batch{}
	if len(newIDs) > 0 {
		b.Queue(pgCreateSQL, newIDs, newScopes, newCreated)
	}
	b.Queue(pgCommitSQL, sids, creates, counts, owners, tokens, cpSeqs, cpStates, lastTimes, evOp, evOrd, types, times, callIDs, data, p.channel)
	br := p.pool.SendBatch(ctx, b)
	defer br.Close()
	// While reading results, only a broken connection leaves the outcome open.
	midway := func(err error) (error, bool) {
		var pgErr *pgconn.PgError
		return err, !errors.As(err, &pgErr) && !pgconn.SafeToRetry(err)
	}
	if len(newIDs) > 0 {
		if _, err := br.Exec(); err != nil {
			return midway(err)
		}
	}
	rows, err := br.Query()
	if err != nil {
		return midway(err)
	}
	i := 0
	for rows.Next() {
		var result *string
		var base, notified int64
		if err := rows.Scan(&result, &base, &notified); err != nil {
			rows.Close()
			return midway(err)
		}
		if i >= n {
			rows.Close()
			return fmt.Errorf("session: commit returned more outcomes than its %d writes", n), true
		}
		q := batch[i]
		q.Base = base
		if result != nil {
			switch *result {
			case "notfound":
				q.Err = session.ErrNotFound
			case "exists":
				q.Err = session.ErrExists
			case "leaselost":
				q.Err = session.LeaseLost(q.SessionID, *q.Lease)
			default: // cppast
				q.Err = session.CheckpointPastLog(q.SessionID, q.Checkpoint.Seq, base)
			}
		}
		i++
	}
	if err := rows.Err(); err != nil {
		return midway(err)
	}
	if i != n {
		return fmt.Errorf("session: commit returned %d outcomes for %d writes", i, n), true
	}
	// The commit itself: a refusal from the server rolled back, but the
	// server ending the connection now, or the connection breaking, may
	// have come after it committed.
	if err := br.Close(); err != nil {
		var pgErr *pgconn.PgError
		return err, !pgconn.SafeToRetry(err) && (!errors.As(err, &pgErr) || serverEnded(err))
	}
	return nil, false
}

// commitOne commits a lone write with pgWriteSQL; see commitOnce.
func (p *Store) commitOne(ctx context.Context, q *session.Pending, owner *string, token int64, cpState *string, lastTime *time.Time,
	types []string, times []time.Time, callIDs, data []string) (error, bool) {
	rows, err := p.pool.Query(ctx, pgWriteSQL, q.SessionID, int64(len(q.Events)), lastTime, owner, token,
		types, times, callIDs, data, cpState, p.channel)
	if err != nil {
		var pgErr *pgconn.PgError
		return err, !errors.As(err, &pgErr) && !pgconn.SafeToRetry(err)
	}
	// As in a pipeline: the server commits after the statement's result, so
	// an error from it in place of the result means it did not.
	var base, notified int64
	got := rows.Next()
	if got {
		if err := rows.Scan(&base, &notified); err != nil {
			rows.Close()
			return err, true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		var pgErr *pgconn.PgError
		if !got {
			return err, !errors.As(err, &pgErr) && !pgconn.SafeToRetry(err)
		}
		return err, !pgconn.SafeToRetry(err) && (!errors.As(err, &pgErr) || serverEnded(err))
	}
	if got {
		q.Base = base
		return nil, false
	}
	// Nothing written; say why (as the session is now).
	var owned *string
	var held int64
	err = p.pool.QueryRow(ctx, `SELECT lease_owner, lease_token FROM sessions WHERE id = $1`, q.SessionID).Scan(&owned, &held)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		q.Err = session.ErrNotFound
	case err != nil:
		q.Err = fmt.Errorf("session: commit to %q: %w", q.SessionID, err)
	case q.Lease != nil:
		q.Err = session.LeaseLost(q.SessionID, *q.Lease)
	default:
		q.Err = fmt.Errorf("session: commit to %q: the session changed meanwhile", q.SessionID)
	}
	return nil, false
}

// Events implements session.Store.
func (p *Store) Events(ctx context.Context, sessionID string, after int64, limit int) ([]session.Event, error) {
	return p.EventsWithin(ctx, sessionID, after, limit, 0)
}

// EventsWithin implements session.BoundedReader. The bound is applied in the query
// (a running sum of octet_length, which PostgreSQL reads from a TOASTed
// value's header without fetching it), so the rows past it are never sent.
func (p *Store) EventsWithin(ctx context.Context, sessionID string, after int64, limit, maxBytes int) ([]session.Event, error) {
	if p.Closed() {
		return nil, session.ErrClosed
	}
	var lim *int64
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	q, args := `SELECT seq, type, time, data FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		[]any{sessionID, after, lim}
	if maxBytes > 0 {
		q = `SELECT seq, type, time, data FROM (
			SELECT seq, type, time, data, SUM(octet_length(data)) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) - octet_length(data) AS before
			FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3) AS page
			WHERE before < $4 ORDER BY seq`
		args = append(args, int64(maxBytes))
	}
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("session: events of %q: %w", sessionID, err)
	}
	var out []session.Event
	total := 0
	for (maxBytes <= 0 || total < maxBytes) && rows.Next() {
		var e session.Event
		var data string
		if err = rows.Scan(&e.Seq, &e.Type, &e.Time, &data); err != nil {
			break
		}
		e.Time = e.Time.UTC()
		e.Data = []byte(data)
		out = append(out, e)
		total += len(data)
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
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

func (p *Store) lastSeq(ctx context.Context, id string) (int64, error) {
	return p.LastSeq(id, pgx.ErrNoRows, func(last *int64) error {
		return p.pool.QueryRow(ctx, `SELECT last_seq FROM sessions WHERE id = $1`, id).Scan(last)
	})
}

// UsedCallIDs implements session.Store.
func (p *Store) UsedCallIDs(ctx context.Context, sessionID string, ids []string) ([]string, error) {
	if p.Closed() {
		return nil, session.ErrClosed
	}
	var known bool
	var used []string
	err := p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1),
		COALESCE((SELECT array_agg(DISTINCT call_id) FROM events WHERE session_id = $1 AND type = 'tool/call' AND call_id = ANY($2)), '{}')`,
		sessionID, ids).Scan(&known, &used)
	if err != nil {
		return nil, fmt.Errorf("session: used call ids: %w", err)
	}
	if !known {
		return nil, session.ErrNotFound
	}
	return used, nil
}

// OpenCalls implements session.Store.
func (p *Store) OpenCalls(ctx context.Context) ([]session.OpenCall, error) {
	if p.Closed() {
		return nil, session.ErrClosed
	}
	rows, err := p.pool.Query(ctx, openCallsSQL+` ORDER BY c.session_id COLLATE "C", c.seq`)
	if err != nil {
		return nil, fmt.Errorf("session: open calls: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanOpenCall)
	if err != nil {
		return nil, fmt.Errorf("session: open calls: %w", err)
	}
	return out, nil
}

// openCallsSQL finds tool/calls that no later tool/result closes; an ORDER
// BY that sorts session ids bytewise follows it.
const openCallsSQL = `SELECT c.session_id, c.seq, c.call_id, c.data FROM events AS c
WHERE c.call_id IS NOT NULL AND c.type = 'tool/call'
  AND NOT EXISTS (SELECT 1 FROM events AS r
    WHERE r.session_id = c.session_id AND r.call_id = c.call_id AND r.type = 'tool/result' AND r.seq > c.seq)`

// scanOpenCall reads a row of openCallsSQL.
func scanOpenCall(row pgx.CollectableRow) (session.OpenCall, error) {
	var oc session.OpenCall
	var callID, data string
	err := row.Scan(&oc.SessionID, &oc.Seq, &callID, &data)
	oc.Call = session.DecodeCall([]byte(data), callID)
	return oc, err
}

// LapsedLeases implements session.LeaseSweeper. Expiry is judged by the server's
// clock; the sessions holding a lease are found through their index.
func (p *Store) LapsedLeases(ctx context.Context) ([]string, []session.OpenCall, error) {
	if p.Closed() {
		return nil, nil, session.ErrClosed
	}
	rows, err := p.pool.Query(ctx, `SELECT id FROM sessions
WHERE lease_owner IS NOT NULL AND lease_expires <= clock_timestamp() ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, nil, fmt.Errorf("session: lapsed leases: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, nil, fmt.Errorf("session: lapsed leases: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	rows, err = p.pool.Query(ctx, openCallsSQL+` AND c.session_id = ANY ($1::text[]) ORDER BY c.session_id COLLATE "C", c.seq`, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("session: lapsed leases: %w", err)
	}
	open, err := pgx.CollectRows(rows, scanOpenCall)
	if err != nil {
		return nil, nil, fmt.Errorf("session: lapsed leases: %w", err)
	}
	return ids, open, nil
}

// LoadCheckpoint implements session.Store.
func (p *Store) LoadCheckpoint(ctx context.Context, sessionID string) (session.Checkpoint, error) {
	if p.Closed() {
		return session.Checkpoint{}, session.ErrClosed
	}
	var seq *int64
	var state *string
	err := p.pool.QueryRow(ctx, `SELECT c.seq, c.state FROM sessions AS s LEFT JOIN checkpoints AS c ON c.session_id = s.id WHERE s.id = $1`,
		sessionID).Scan(&seq, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Checkpoint{}, session.ErrNotFound
	}
	if err != nil {
		return session.Checkpoint{}, fmt.Errorf("session: checkpoint of %q: %w", sessionID, err)
	}
	if seq == nil {
		return session.Checkpoint{}, nil
	}
	return session.Checkpoint{Seq: *seq, State: json.RawMessage(*state)}, nil
}

// AcquireLease implements session.Store. Expiry is judged by the server's clock.
func (p *Store) AcquireLease(ctx context.Context, sessionID, owner string, ttl time.Duration) (session.Lease, error) {
	if err := session.CheckLease(owner, ttl); err != nil {
		return session.Lease{}, err
	}
	if p.Closed() {
		return session.Lease{}, session.ErrClosed
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
		return session.Lease{}, fmt.Errorf("session: acquire lease of %q: %w", sessionID, err)
	}
	switch {
	case token != nil:
		return session.Lease{SessionID: sessionID, Owner: owner, Token: *token, Expires: start.Add(ttl)}, nil
	case !exists:
		return session.Lease{}, session.ErrNotFound
	}
	// Read the holder afresh: the statement's snapshot may predate it.
	var holder *string
	var expires *time.Time
	err = p.pool.QueryRow(ctx, `SELECT lease_owner, lease_expires FROM sessions WHERE id = $1`, sessionID).Scan(&holder, &expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Lease{}, session.ErrNotFound
	}
	if err != nil {
		return session.Lease{}, fmt.Errorf("session: acquire lease of %q: %w", sessionID, err)
	}
	if holder == nil || expires == nil {
		return session.Lease{}, fmt.Errorf("%w: session %q changed hands meanwhile", session.ErrLeased, sessionID)
	}
	return session.Lease{}, session.Leased(sessionID, *holder, *expires)
}

// ReleaseLease implements session.Store.
func (p *Store) ReleaseLease(ctx context.Context, l session.Lease) error {
	if p.Closed() {
		return session.ErrClosed
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
		return session.ErrNotFound
	}
	return session.LeaseLost(l.SessionID, l)
}

// ListSessions implements session.Store.
func (p *Store) ListSessions(ctx context.Context, f session.SessionFilter) (session.SessionPage, error) {
	return p.List(f, func(after *session.Cursor, n int) ([]session.Session, error) {
		var where []string
		args := []any{n}
		if f.Scope != "" {
			args = append(args, f.Scope)
			where = append(where, fmt.Sprintf("scope = $%d", len(args)))
		}
		if after != nil {
			args = append(args, time.UnixMicro(after.Created), after.ID)
			where = append(where, fmt.Sprintf(`(created_at, id COLLATE "C") < ($%d, $%d)`, len(args)-1, len(args)))
		}
		q := `SELECT ` + pgSessionColumns + ` FROM sessions`
		if len(where) > 0 {
			q += " WHERE " + strings.Join(where, " AND ")
		}
		return collectPgSessions(p.pool.Query(ctx, q+` ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $1`, args...))
	})
}

// DeleteSession implements session.Store: one round trip, locking the session row
// first so that no write slips in between.
func (p *Store) DeleteSession(ctx context.Context, id string) error {
	if p.Closed() {
		return session.ErrClosed
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
	p.waiters.Notify(id)
	if found == 0 {
		return session.ErrNotFound
	}
	return nil
}

// Prune implements session.Store: each round deletes up to PruneChunk sessions in
// one transaction, skipping sessions a writer holds at that moment (they are
// in use).
func (p *Store) Prune(ctx context.Context, r session.Retention) (int, error) {
	return p.Core.Prune(ctx, r, func(ctx context.Context, r session.Retention) ([]string, int, error) {
		ids, err := p.pruneRound(ctx, r)
		return ids, len(ids), err
	})
}

func (p *Store) pruneRound(ctx context.Context, r session.Retention) ([]string, error) {
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
ORDER BY updated_at, id COLLATE "C" LIMIT `+strconv.Itoa(session.PruneChunk)+`
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

// Close implements session.Store. It commits the writes already submitted first.
func (p *Store) Close() error {
	if !p.Stop() {
		return nil
	}
	p.stopListen()
	<-p.listened
	p.pool.Close()
	return nil
}
