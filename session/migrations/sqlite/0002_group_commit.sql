-- Group commit, leases, checkpoints and session lifecycle.
--
-- last_seq is the session's highest seq (also its number of events): a
-- commit, holding the write lock, numbers new events from it and raises it.
-- updated_at (unix microseconds) is the later of created_at and its events'
-- latest time; retention deletes by it.
--
-- The lease: lease_owner holds it (NULL when free) until lease_expires (unix
-- microseconds); lease_token grows each time it changes hands, and fenced
-- writes commit only while their token is the session's.
ALTER TABLE sessions ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN lease_owner TEXT;
ALTER TABLE sessions ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0;

UPDATE sessions SET
    last_seq = COALESCE((SELECT MAX(seq) FROM events WHERE session_id = sessions.id), 0),
    updated_at = MAX(created_at, COALESCE((SELECT MAX(time) FROM events WHERE session_id = sessions.id), created_at));

-- Listing (newest first, optionally by scope) and retention.
CREATE INDEX sessions_created ON sessions (created_at, id);
CREATE INDEX sessions_scope ON sessions (scope, created_at, id);
CREATE INDEX sessions_updated ON sessions (updated_at, id);

-- A session's checkpoint: the derived state of its log up to seq, verbatim JSON.
CREATE TABLE checkpoints (
    session_id TEXT PRIMARY KEY,
    seq        INTEGER NOT NULL,
    state      TEXT NOT NULL
);
