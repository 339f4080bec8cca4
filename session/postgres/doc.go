// Package postgres is the session log several replicas share: a
// [session.Store] in a PostgreSQL database, through pgx, built from package
// session's kit: its writes go through a [session.Committer], its Wait
// through [session.Waiters] fed by LISTEN/NOTIFY. [Open] connects;
// [Register] makes [session.Open] open postgres:// URLs, as a shared store
// ([session.Shared]).
package postgres
