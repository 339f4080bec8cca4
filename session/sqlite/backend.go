package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/codemode/codemode/session"
)

//go:embed migrations/*.sql
var embedded embed.FS

// migrationFS holds the schema as numbered files, migrations/NNNN_name.sql,
// applied in order at Open (see session.Migrations).
var migrationFS = func() fs.FS {
	sub, err := fs.Sub(embedded, "migrations")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}()

// Backend opens sqlite://FILE URLs: FILE is a path, relative to the working
// directory or absolute (sqlite:///var/lib/x.db), used verbatim, or
// ":memory:". A file is used by this process alone, as far as the service
// is concerned: Shared is false.
var Backend = session.Backend{Open: openURL}

// Register registers Backend for the schemes sqlite and sqlite3.
func Register() {
	session.Register("sqlite", Backend)
	session.Register("sqlite3", Backend)
}

func openURL(ctx context.Context, url string, o session.Options) (session.Store, error) {
	_, path, _ := strings.Cut(url, "://")
	if path == "" {
		return nil, fmt.Errorf("session: store URL %q names no file", url)
	}
	return Open(ctx, path, o)
}
