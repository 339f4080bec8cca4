-- Sessions and their append-only event logs. Times are unix microseconds, UTC.
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    scope      TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

-- One row per event. seq is per session, 1, 2, 3, … without gaps: an append,
-- holding the write lock, reads MAX(seq) through the unique index and inserts
-- the next numbers in the same transaction. call_id is copied out of data for
-- tool/call and tool/result, for crash recovery.
CREATE TABLE events (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    type       TEXT NOT NULL,
    time       INTEGER NOT NULL,
    call_id    TEXT,
    data       TEXT NOT NULL,
    UNIQUE (session_id, seq)
);

CREATE INDEX events_call_id ON events (session_id, call_id) WHERE call_id IS NOT NULL;
