package pgtest

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	t.Setenv(Env, "postgres://someone@db.example/x")
	if u, err := URL(); err != nil || u != "postgres://someone@db.example/x" {
		t.Fatalf("with %s set: %q %v", Env, u, err)
	}
	// Unset: the local server at Default, or an error that says what was
	// tried, for the skip message.
	t.Setenv(Env, "")
	u, err := URL()
	if u != Default {
		t.Fatalf("unset: %q, want %q", u, Default)
	}
	if err != nil && (!strings.Contains(err.Error(), Env+" is unset") || !strings.Contains(err.Error(), Default)) {
		t.Fatalf("unset: %v", err)
	}
}
