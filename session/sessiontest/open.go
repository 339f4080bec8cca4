package sessiontest

import (
	"context"
	"sync"
	"testing"

	"github.com/codemode/codemode/session"
)

// Opener is a backend's Open: sqlite.Open, postgres.Open.
type Opener[S session.Store] func(ctx context.Context, url string, opts ...session.Options) (S, error)

// Open opens the store at url, fails the test when it cannot, and closes
// the store when the test ends.
func Open[S session.Store](t testing.TB, open Opener[S], url string, opts ...session.Options) S {
	t.Helper()
	s, err := open(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// OpenAtOnce opens n stores at url at the same time and closes them, failing
// the test if any open or close fails: however many instances start
// together, a new database is migrated once.
func OpenAtOnce[S session.Store](t testing.TB, open Opener[S], url string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			s, err := open(context.Background(), url)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Texts returns the text of each event, which must all be user/context
// events.
func Texts(t testing.TB, evs []session.Event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		var c session.UserContext
		if err := e.Decode(&c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Text)
	}
	return out
}
