package worker

import (
	"log/slog"
	"testing"
)

// newTestPool makes a pool of workers re-executing this test binary (which imports this
// package, so EnvVar turns it into a worker) and closes it when the test ends.
func newTestPool(t testing.TB, opts Options) *Pool {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
