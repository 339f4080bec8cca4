package postgres_test

import (
	"context"
	"testing"

	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sessiontest"
)

func TestPostgresConformance(t *testing.T) {
	sessiontest.RunConformance(t, func(t *testing.T) session.Store { return open(t, pgtest.Schema(t)) })
}

// Two stores on one schema are two replicas sharing it.
func TestPostgresShared(t *testing.T) {
	sessiontest.RunShared(t, func(t *testing.T) (session.Store, session.Store) {
		u := pgtest.Schema(t)
		return open(t, u), open(t, u)
	})
}

var (
	_ session.BoundedReader = (*postgres.Store)(nil)
	_ session.WriteHealth   = (*postgres.Store)(nil)
	_ session.LeaseSweeper  = (*postgres.Store)(nil)
)

func open(t testing.TB, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
