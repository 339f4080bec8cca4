package session_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/session"
)

// A shared store (one other processes may use at once) must say so: a
// service on it takes leases and recovers only what no one else runs.
// TestMain registers the module's stores, as app does.
func TestShared(t *testing.T) {
	for url, want := range map[string]bool{
		"postgres://u@h/db":          true,
		"postgresql://h/db":          true,
		"POSTGRES://h/db":            true,
		"sqlite://codemode.db":       false,
		"sqlite:///var/lib/x.db":     false,
		"sqlite3://codemode.db":      false,
		"memory://":                  false,
		"mem://":                     false,
		"mysql://h/db":               false,
		"codemode.db":                false,
		"postgres-but-not-a-scheme/": false,
	} {
		if got := session.Shared(url); got != want {
			t.Errorf("Shared(%q) = %v, want %v", url, got, want)
		}
	}
}

// Every registered scheme opens a store that keeps what is appended.
func TestOpenEachScheme(t *testing.T) {
	dir := t.TempDir()
	urls := map[string]func(t *testing.T) string{
		"memory":     func(*testing.T) string { return "memory://" },
		"mem":        func(*testing.T) string { return "mem://" },
		"sqlite":     func(*testing.T) string { return "sqlite://" + filepath.Join(dir, "a.db") },
		"sqlite3":    func(*testing.T) string { return "sqlite3://" + filepath.Join(dir, "b.db") },
		"postgres":   func(t *testing.T) string { return pgtest.Schema(t) },
		"postgresql": func(t *testing.T) string { return strings.Replace(pgtest.Schema(t), "postgres://", "postgresql://", 1) },
	}
	for _, scheme := range session.Schemes() {
		t.Run(scheme, func(t *testing.T) {
			url, ok := urls[scheme]
			if !ok {
				t.Fatalf("scheme %q is registered but this test does not know a URL of it", scheme)
			}
			ctx := context.Background()
			s, err := session.Open(ctx, url(t))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.CreateSession(ctx, session.Session{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			e, _ := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "t", Text: scheme})
			if _, err := s.Append(ctx, "s", e); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Events(ctx, "s", 0, 0); err != nil || len(got) != 1 || got[0].Seq != 1 {
				t.Fatalf("Events = %v, %v", got, err)
			}
		})
	}
	if _, err := session.Open(context.Background(), "mysql://h/db"); err == nil || !strings.Contains(err.Error(), "want one of "+strings.Join(session.Schemes(), ", ")) {
		t.Errorf("an unknown scheme: err = %v, want one listing the registered schemes", err)
	}
}
