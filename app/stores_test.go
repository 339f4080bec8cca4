package app_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/codemode/codemode/app"
	"github.com/codemode/codemode/config"
	"github.com/codemode/codemode/session"
)

// config keeps its own list of store schemes (it does not import the
// stores): it must accept exactly the schemes registered for session.Open,
// but for the aliases only session.Open knows.
func TestConfigAcceptsTheRegisteredStores(t *testing.T) {
	app.RegisterStores()
	aliases := []string{"sqlite3", "mem"}
	for _, scheme := range append(session.Schemes(), "mysql", "file", "redis") {
		url := scheme + "://x.db"
		if scheme == "memory" || scheme == "mem" {
			url = scheme + "://"
		}
		cfg := config.Default()
		cfg.Store = url
		err := cfg.Validate()
		accepted := err == nil || !strings.Contains(err.Error(), "want sqlite://FILE")
		want := slices.Contains(session.Schemes(), scheme) && !slices.Contains(aliases, scheme)
		if accepted != want {
			t.Errorf("config accepts store %q: %v, want %v (registered: %v; err %v)", url, accepted, want, session.Schemes(), err)
		}
	}
}

// A shared store (PostgreSQL) is recognised by its backend, not a prefix:
// recovery then waits out what another replica may still be running.
func TestRecoveryAgeOfSharedStores(t *testing.T) {
	for url, shared := range map[string]bool{
		"postgres://u@h/db":    true,
		"postgresql://h/db":    true,
		"sqlite://codemode.db": false,
		"memory://":            false,
	} {
		cfg := config.Default()
		cfg.Store = url
		a := &app.App{Config: cfg}
		if got := a.RecoveryAge() > 0; got != shared {
			t.Errorf("%s: RecoveryAge %v, want shared %v", url, a.RecoveryAge(), shared)
		}
	}
}
