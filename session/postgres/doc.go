// Package postgres is the session log several replicas share: a
// [session.Store] in a PostgreSQL database, through pgx, built from package
// session's kit: an embedded [session.Core] runs its writes through a
// [session.Committer] and its Wait through [session.Waiters], which
// LISTEN/NOTIFY wakes across replicas. [Open] connects;
// [Register] makes [session.Open] open postgres:// URLs, as a shared store
// ([session.Shared]).
package postgres
