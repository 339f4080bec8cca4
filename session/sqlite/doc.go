// Package sqlite is the embedded session log: a [session.Store] in one
// SQLite file (WAL mode, the pure-Go modernc.org/sqlite driver), built from
// package session's kit: an embedded [session.Core] runs its writes through
// a [session.Committer] and its Wait through [session.Waiters]. [Open] opens
// a file; [Register] makes [session.Open] open sqlite:// URLs.
//
// Files: sqlite.go (the store, its commit and reads), pack.go (several
// events in one row), checkpoint.go (WAL checkpoints off the commit path),
// migrations/ (the schema).
package sqlite
