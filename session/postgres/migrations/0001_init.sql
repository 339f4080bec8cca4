-- Sessions and their append-only event logs.
-- last_seq is the session's highest seq: an append raises it by the number of
-- events it adds (which row-locks the session until commit) and numbers its
-- events from the old value, so concurrent appenders on any replica never
-- collide or leave gaps.
CREATE TABLE sessions (
    id         text PRIMARY KEY,
    scope      text NOT NULL,
    created_at timestamptz NOT NULL,
    last_seq   bigint NOT NULL DEFAULT 0
);

-- data is text, not jsonb: the log keeps the writer's bytes exactly (jsonb
-- would reorder keys and rewrite numbers such as -0). call_id is copied out
-- of data for tool/call and tool/result, for crash recovery.
CREATE TABLE events (
    session_id text NOT NULL REFERENCES sessions (id),
    seq        bigint NOT NULL,
    type       text NOT NULL,
    time       timestamptz NOT NULL,
    call_id    text,
    data       text NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE INDEX events_call_id ON events (session_id, call_id) WHERE call_id IS NOT NULL;
