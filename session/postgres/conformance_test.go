package postgres_test

import (
	"testing"

	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/session"
	"github.com/codemode/codemode/session/postgres"
	"github.com/codemode/codemode/session/sessiontest"
)

func TestPostgresConformance(t *testing.T) {
	sessiontest.RunConformance(t, func(t *testing.T) session.Store { return sessiontest.Open(t, postgres.Open, pgtest.Schema(t)) })
}

// Two stores on one schema are two replicas sharing it.
func TestPostgresShared(t *testing.T) {
	sessiontest.RunShared(t, func(t *testing.T) (session.Store, session.Store) {
		u := pgtest.Schema(t)
		return sessiontest.Open(t, postgres.Open, u), sessiontest.Open(t, postgres.Open, u)
	})
}

var (
	_ session.BoundedReader = (*postgres.Store)(nil)
	_ session.WriteHealth   = (*postgres.Store)(nil)
	_ session.LeaseSweeper  = (*postgres.Store)(nil)
)
