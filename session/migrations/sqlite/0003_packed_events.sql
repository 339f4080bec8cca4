-- Packed events: a write's consecutive events without a call id (a run's
-- nested dispatch events, notices, contexts) may share one row, so that a
-- run of many tool calls costs its commit one row and one index entry, not
-- two per call. n is how many events a row holds; seq is the first one's,
-- and the row's time the last one's. A row of one event (n = 1) is stored as
-- before; a row of more holds them in data as a JSON array of
-- [type, time, data] triples (time in unix microseconds). Rows with a call
-- id always hold one event, so crash recovery and the call-id index read
-- them as before.
ALTER TABLE events ADD COLUMN n INTEGER NOT NULL DEFAULT 1;
