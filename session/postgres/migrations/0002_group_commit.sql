-- Group commit, leases, checkpoints and session lifecycle.
--
-- updated_at is the later of created_at and its last event's time;
-- retention deletes by it. It has no index, so that the UPDATE every commit
-- makes of a session row stays a HOT update; retention scans.
--
-- The lease: lease_owner holds it (NULL when free) until lease_expires (the
-- server's clock); lease_token grows each time it changes hands, and fenced
-- writes commit only while their token is the session's. Both live on the
-- session row, whose lock every append already takes.
ALTER TABLE sessions
    ADD COLUMN updated_at    timestamptz,
    ADD COLUMN lease_owner   text,
    ADD COLUMN lease_token   bigint NOT NULL DEFAULT 0,
    ADD COLUMN lease_expires timestamptz;

UPDATE sessions SET updated_at = GREATEST(created_at,
    (SELECT time FROM events WHERE session_id = sessions.id ORDER BY seq DESC LIMIT 1));
ALTER TABLE sessions ALTER COLUMN updated_at SET NOT NULL;

-- Listing, newest first, optionally by scope; ids compare bytewise.
CREATE INDEX sessions_created ON sessions (created_at, id COLLATE "C");
CREATE INDEX sessions_scope ON sessions (scope, created_at, id COLLATE "C");

-- A session's checkpoint: the derived state of its log up to seq, verbatim JSON.
CREATE TABLE checkpoints (
    session_id text PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    state      text NOT NULL
);
