package sqlite

import (
	"context"
	"embed"
	"fmt"
	"strings"

	"github.com/codemode/codemode/session"
)

// migrationFS holds the schema as numbered files, migrations/NNNN_name.sql,
// applied in order at Open (see session.Migrations).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// Backend opens sqlite://FILE URLs: FILE is a path, relative to the working
// directory or absolute (sqlite:///var/lib/x.db), used verbatim, or
// ":memory:". Shared is false: a file is the log of one service process
// (others on the host may open it too, as codemode replay does, but no
// replica steps its sessions).
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
