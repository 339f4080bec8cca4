package session

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the Store for several replicas sharing one log, through pgx.
//
// An append is one statement in its own transaction: it raises the session
// row's last_seq by the number of events (row-locking the session until
// commit, so concurrent appenders on any replica queue up), numbers the events
// from the old value, inserts them and sends a NOTIFY. PRIMARY KEY
// (session_id, seq) backs the numbering up. Durable when the commit returns
// (with the server's default synchronous_commit=on).
//
// Wait listens on a dedicated connection (LISTEN), so an append on any replica
// wakes the waiters on every replica; after the listener reconnects, every
// waiter checks its log again, so a notification lost meanwhile delays no one.
//
// The tables live in the connection's current schema: add search_path=NAME to
// the URL to keep several logs in one database.
type Postgres struct {
	pool    *pgxpool.Pool
	hub     *hub
	channel string // NOTIFY channel of this schema
	closed  atomic.Bool

	stopListen context.CancelFunc
	listened   chan struct{} // closed when the listener has stopped
}

var _ Store = (*Postgres)(nil)

// migrationLockKey serializes migrations of every codemode schema in a database.
const migrationLockKey = 0x636f64656d6f6465 // "codemode"

// OpenPostgres connects to the PostgreSQL database at url (postgres://… or
// postgresql://…, with pgx's parameters), applies the schema migrations and
// starts listening for other replicas' appends.
func OpenPostgres(ctx context.Context, url string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("session: postgres URL: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("session: open postgres: %w", err)
	}
	p := &Postgres{pool: pool, hub: newHub()}
	if err := p.init(ctx, cfg.ConnConfig); err != nil {
		pool.Close()
		return nil, fmt.Errorf("session: open postgres: %w", err)
	}
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
func (p *Postgres) CreateSession(ctx context.Context, s Session) error {
	s, err := prepareSession(s, time.Now())
	if err != nil {
		return err
	}
	if p.closed.Load() {
		return ErrClosed
	}
	tag, err := p.pool.Exec(ctx, `INSERT INTO sessions (id, scope, created_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
		s.ID, s.Scope, s.CreatedAt)
	if err != nil {
		return fmt.Errorf("session: create %q: %w", s.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrExists
	}
	return nil
}

// GetSession implements Store.
func (p *Postgres) GetSession(ctx context.Context, id string) (Session, error) {
	if p.closed.Load() {
		return Session{}, ErrClosed
	}
	var s Session
	err := p.pool.QueryRow(ctx, `SELECT id, scope, created_at FROM sessions WHERE id = $1`, id).Scan(&s.ID, &s.Scope, &s.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("session: get %q: %w", id, err)
	}
	s.CreatedAt = s.CreatedAt.UTC()
	return s, nil
}

// appendSQL numbers, inserts and announces a batch in one statement. The
// UPDATE takes the session's row lock; a session that does not exist yields
// no row.
const appendSQL = `WITH s AS (
    UPDATE sessions SET last_seq = last_seq + $2 WHERE id = $1 RETURNING last_seq - $2 AS base
), ins AS (
    INSERT INTO events (session_id, seq, type, time, call_id, data)
    SELECT $1, s.base + e.ord, e.type, e.time, NULLIF(e.call_id, ''), e.data
    FROM s, unnest($3::text[], $4::timestamptz[], $5::text[], $6::text[]) WITH ORDINALITY AS e (type, time, call_id, data, ord)
    RETURNING 1
)
SELECT s.base, (SELECT count(*) FROM ins), (SELECT count(*) FROM (SELECT pg_notify($7, $1)) AS n) FROM s`

// Append implements Store.
func (p *Postgres) Append(ctx context.Context, sessionID string, events ...Event) ([]Event, error) {
	ps, err := prepare(events, time.Now())
	if err != nil {
		return nil, err
	}
	if p.closed.Load() {
		return nil, ErrClosed
	}
	if len(ps) == 0 {
		_, err := p.lastSeq(ctx, sessionID)
		return nil, err
	}
	types := make([]string, len(ps))
	times := make([]time.Time, len(ps))
	callIDs := make([]string, len(ps))
	data := make([]string, len(ps))
	for i, e := range ps {
		types[i], times[i], callIDs[i], data[i] = e.Type, e.Time, e.callID, string(e.Data)
	}
	var base, inserted, notified int64
	err = p.pool.QueryRow(ctx, appendSQL, sessionID, int64(len(ps)), types, times, callIDs, data, p.channel).
		Scan(&base, &inserted, &notified)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		if p.closed.Load() {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("session: append to %q: %w", sessionID, err)
	}
	if inserted != int64(len(ps)) {
		return nil, fmt.Errorf("session: append to %q: inserted %d of %d events", sessionID, inserted, len(ps))
	}
	p.hub.notify(sessionID)
	out := make([]Event, len(ps))
	for i, e := range ps {
		out[i] = e.Event
		out[i].Seq = base + int64(i) + 1
	}
	return out, nil
}

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

// Close implements Store.
func (p *Postgres) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	p.hub.close()
	p.stopListen()
	<-p.listened
	p.pool.Close()
	return nil
}
