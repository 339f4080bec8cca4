package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sessiontest"
	"github.com/codemode/codemode/session/sqlite"
)

func TestSQLiteMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "log.db")

	// Opened at once by several instances, a new file is migrated once.
	sessiontest.OpenAtOnce(t, sqlite.Open, path, 4)

	// Reopening keeps the data and applies nothing twice.
	s := sessiontest.Open(t, sqlite.Open, path)
	if err := s.CreateSession(ctx, session.Session{ID: "kept"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = sessiontest.Open(t, sqlite.Open, path)
	if _, err := s.GetSession(ctx, "kept"); err != nil {
		t.Fatalf("after reopening: %v", err)
	}
	s.Close()

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if want := migrationFiles(t); db.QueryRow(`SELECT count(*) FROM codemode_migrations`).Scan(&n) != nil || n != want {
		t.Fatalf("codemode_migrations has %d rows, want %d", n, want)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q (%v), want wal", mode, err)
	}

	// A database from a newer binary is refused with a clear error.
	if _, err := db.Exec(`INSERT INTO codemode_migrations (version, name, applied_at) VALUES (99, '0099_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, path); err == nil || !strings.Contains(err.Error(), "upgrade codemode") {
		t.Fatalf("opening a newer schema: err = %v", err)
	}
}

// migrationFiles counts the migrations.
func migrationFiles(t *testing.T) int {
	entries, err := os.ReadDir("migrations")
	if err != nil || len(entries) == 0 {
		t.Fatalf("migrations: %d files, %v", len(entries), err)
	}
	return len(entries)
}
