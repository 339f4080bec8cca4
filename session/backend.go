package session

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Backend is a kind of store, opened by the scheme of a store URL (see
// Register and Open).
type Backend struct {
	// Open opens the store url names (the whole URL, scheme included) with
	// o, already checked (see CheckOptions).
	Open func(ctx context.Context, url string, o Options) (Store, error)
	// Shared reports that other processes may use the store at once: a
	// database server rather than a file or memory of this process. A
	// service on a shared store takes a session's lease for each step and
	// recovers only the calls no one else can still be running.
	Shared bool
}

var schemes = struct {
	sync.RWMutex
	backends map[string]Backend // by lower-case scheme; guarded by the mutex
}{backends: map[string]Backend{
	"memory": memoryBackend,
	"mem":    memoryBackend,
}}

// memoryBackend opens memory://, a Memory.
var memoryBackend = Backend{Open: func(_ context.Context, url string, _ Options) (Store, error) {
	if _, rest, _ := strings.Cut(url, "://"); rest != "" {
		return nil, fmt.Errorf("session: store URL %q: memory:// takes no path", url)
	}
	return NewMemory(), nil
}}

// Register makes Open open the URLs of scheme (matched without regard to
// case) with b. Registering a scheme again replaces its backend. memory://
// (also mem://) is registered by this package; session/sqlite and
// session/postgres register theirs with their Register functions. It panics
// on an empty scheme or a nil b.Open: both are programming errors.
func Register(scheme string, b Backend) {
	if scheme == "" || b.Open == nil {
		panic("session: Register of an empty scheme or a nil Open")
	}
	schemes.Lock()
	defer schemes.Unlock()
	schemes.backends[strings.ToLower(scheme)] = b
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	schemes.RLock()
	defer schemes.RUnlock()
	out := make([]string, 0, len(schemes.backends))
	for s := range schemes.backends {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// backendOf returns the backend of a URL's scheme.
func backendOf(url string) (Backend, error) {
	scheme, _, ok := strings.Cut(url, "://")
	if !ok {
		return Backend{}, fmt.Errorf("session: store URL %q has no scheme: want sqlite://FILE, postgres://… or memory://", url)
	}
	schemes.RLock()
	b, found := schemes.backends[strings.ToLower(scheme)]
	schemes.RUnlock()
	if !found {
		return Backend{}, fmt.Errorf("session: store URL %q: unknown scheme %q: want one of %s", url, scheme, strings.Join(Schemes(), ", "))
	}
	return b, nil
}

// Open opens the store a URL names, by its scheme's registered Backend:
//
//	sqlite://codemode.db       a SQLite file, relative to the working directory (session/sqlite)
//	sqlite:///var/lib/x.db     an absolute path
//	sqlite://:memory:          a private in-memory SQLite database
//	postgres://user@host/db    PostgreSQL (also postgresql://…); pgx URL parameters apply (session/postgres)
//	memory://                  an in-memory store for tests
//
// It fails, listing the registered schemes, for a scheme no backend has
// registered. opts, when given, is one Options.
func Open(ctx context.Context, url string, opts ...Options) (Store, error) {
	o, err := CheckOptions(opts)
	if err != nil {
		return nil, err
	}
	b, err := backendOf(url)
	if err != nil {
		return nil, err
	}
	return b.Open(ctx, url, o)
}

// Shared reports whether the store url names is one other processes may use
// at once (its Backend's Shared); false for an unknown scheme.
func Shared(url string) bool {
	b, err := backendOf(url)
	return err == nil && b.Shared
}
