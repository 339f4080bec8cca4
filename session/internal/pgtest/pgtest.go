// Package pgtest gives the session tests a PostgreSQL database: the one
// $CODEMODE_TEST_POSTGRES_URL names, else the local server at Default when
// it answers; tests skip, saying why, when there is none.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// Env names the test database.
	Env = "CODEMODE_TEST_POSTGRES_URL"
	// Default is tried when Env is unset.
	Default = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

var (
	probe    sync.Once
	probeErr error
)

// URL returns $CODEMODE_TEST_POSTGRES_URL, else Default when it answers.
func URL() (string, error) {
	if u := os.Getenv(Env); u != "" {
		return u, nil
	}
	probe.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, Default)
		if err != nil {
			probeErr = fmt.Errorf("%s is unset and %s does not answer (%v)", Env, Default, err)
			return
		}
		conn.Close(ctx)
	})
	return Default, probeErr
}

// Base returns the test database's URL, or skips the test.
func Base(t testing.TB) string {
	t.Helper()
	u, err := URL()
	if err != nil {
		t.Skipf("PostgreSQL tests skipped: %v", err)
	}
	return u
}

// Schema creates a schema of its own for the test (so that tests and test
// binaries running at once never see each other's sessions or open calls),
// drops it afterwards, and returns a URL that uses it. It skips the test
// when there is no database.
func Schema(t testing.TB) string {
	t.Helper()
	base := Base(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "codemode_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", base, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
