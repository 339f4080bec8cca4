package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sessiontest"
	"github.com/codemode/codemode/session/sqlite"
)

func TestSQLiteConformance(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		sessiontest.RunConformance(t, func(t *testing.T) session.Store {
			return open(t, filepath.Join(t.TempDir(), "log.db"))
		})
	})
	t.Run("memory", func(t *testing.T) {
		sessiontest.RunConformance(t, func(t *testing.T) session.Store { return open(t, ":memory:") })
	})
}

// Two stores on one file are two processes sharing it.
func TestSQLiteShared(t *testing.T) {
	sessiontest.RunShared(t, func(t *testing.T) (session.Store, session.Store) {
		path := filepath.Join(t.TempDir(), "log.db")
		return open(t, path), open(t, path)
	})
}

var (
	_ session.BoundedReader = (*sqlite.Store)(nil)
	_ session.WriteHealth   = (*sqlite.Store)(nil)
)

func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
