package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/sessiontest"
	"github.com/codemode/codemode/session/sqlite"
)

func TestSQLiteConformance(t *testing.T) {
	t.Run("file", func(t *testing.T) {
		sessiontest.RunConformance(t, func(t *testing.T) session.Store {
			return sessiontest.Open(t, sqlite.Open, filepath.Join(t.TempDir(), "log.db"))
		})
	})
	t.Run("memory", func(t *testing.T) {
		sessiontest.RunConformance(t, func(t *testing.T) session.Store { return sessiontest.Open(t, sqlite.Open, ":memory:") })
	})
}

// Two stores on one file are two processes sharing it.
func TestSQLiteShared(t *testing.T) {
	sessiontest.RunShared(t, func(t *testing.T) (session.Store, session.Store) {
		path := filepath.Join(t.TempDir(), "log.db")
		return sessiontest.Open(t, sqlite.Open, path), sessiontest.Open(t, sqlite.Open, path)
	})
}

var (
	_ session.BoundedReader = (*sqlite.Store)(nil)
	_ session.WriteHealth   = (*sqlite.Store)(nil)
)
