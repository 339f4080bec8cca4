-- Lapsed leases are looked for every few seconds (LapsedLeases): only the
-- sessions holding a lease are indexed, so that the sweep reads those and
-- not every session. Commits do not change these columns, so their
-- updates of sessions stay heap-only.
CREATE INDEX sessions_lease ON sessions (lease_expires) WHERE lease_owner IS NOT NULL;
