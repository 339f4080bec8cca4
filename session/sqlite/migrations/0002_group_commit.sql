-- Leases, checkpoints and session listing.
--
-- A session's last seq and last update are read from its events (MAX(seq)
-- and the time of that event, one seek each), not kept here: a column that
-- every commit rewrote would add a page per session to each commit's flush.
--
-- The lease: lease_owner holds it (NULL when free) until lease_expires (unix
-- microseconds); lease_token grows each time it changes hands, and fenced
-- writes commit only while their token is the session's.
ALTER TABLE sessions ADD COLUMN lease_owner TEXT;
ALTER TABLE sessions ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN lease_expires INTEGER NOT NULL DEFAULT 0;

-- Listing, newest first, optionally by scope.
CREATE INDEX sessions_created ON sessions (created_at, id);
CREATE INDEX sessions_scope ON sessions (scope, created_at, id);

-- A session's checkpoint: the derived state of its log up to seq, verbatim JSON.
CREATE TABLE checkpoints (
    session_id TEXT PRIMARY KEY,
    seq        INTEGER NOT NULL,
    state      TEXT NOT NULL
);
