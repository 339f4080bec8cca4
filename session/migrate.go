package session

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// MigrationsTable is the table that records a database's applied
// migrations.
const MigrationsTable = "codemode_migrations"

// Migration is one numbered change of a backend's schema: its file
// NNNN_name.sql. A file, once released, never changes; a schema change is a
// new file.
type Migration struct {
	Version int
	Name    string // the file's name
	SQL     string
}

// Migrations reads a backend's migrations, the files
// migrations/NNNN_name.sql of fsys (its embedded directory, numbered 1, 2,
// 3…), ordered by version; dialect names the backend in errors. A backend
// applies the PendingMigrations at Open, in one transaction that also
// records them in MigrationsTable, so that processes opening a database at
// once apply them once.
func Migrations(fsys fs.FS, dialect string) ([]Migration, error) {
	const dir = "migrations"
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("session: read %s migrations: %w", dialect, err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("session: %s migration file %s is not named NNNN_name.sql", dialect, name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := range out {
		if out[i].Version != i+1 {
			return nil, fmt.Errorf("session: %s migrations are not numbered 1, 2, 3…: found %s", dialect, out[i].Name)
		}
	}
	return out, nil
}

// PendingMigrations returns the migrations of all not yet applied, given
// the applied versions (read from MigrationsTable); it fails when the
// database is newer than this binary.
func PendingMigrations(all []Migration, applied []int) ([]Migration, error) {
	done := map[int]bool{}
	for _, v := range applied {
		if v > len(all) {
			return nil, fmt.Errorf("session: the database schema is at version %d but this binary knows only %d: upgrade codemode", v, len(all))
		}
		done[v] = true
	}
	var out []Migration
	for _, m := range all {
		if !done[m.Version] {
			out = append(out, m)
		}
	}
	return out, nil
}

// MigrationTx is a backend's migration transaction, as ApplyMigrations uses
// it.
type MigrationTx struct {
	// CreateTable creates MigrationsTable when it is missing.
	CreateTable string
	// Exec runs one statement; Ints runs a query of one integer column.
	Exec func(sql string, args ...any) error
	Ints func(sql string) ([]int, error)
	// Record records m, just applied, in MigrationsTable.
	Record func(m Migration) error
}

// ApplyMigrations applies, in tx, the PendingMigrations of all, recording
// each. The backend holds tx so that processes opening a database at once
// apply them once, and commits it.
func ApplyMigrations(all []Migration, tx MigrationTx) error {
	if err := tx.Exec(tx.CreateTable); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	applied, err := tx.Ints(`SELECT version FROM ` + MigrationsTable)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	todo, err := PendingMigrations(all, applied)
	if err != nil {
		return err
	}
	for _, m := range todo {
		if err := tx.Exec(m.SQL); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
		if err := tx.Record(m); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
	}
	return nil
}
