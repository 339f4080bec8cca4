package postgres

import (
	"context"
	"embed"

	"github.com/codemode/codemode/session"
)

// migrationFS holds the schema as numbered files, migrations/NNNN_name.sql,
// applied in order at Open (see session.Migrations).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// Backend opens postgres:// and postgresql:// URLs (see Open). Replicas
// share the database: Shared is true.
var Backend = session.Backend{
	Open: func(ctx context.Context, url string, o session.Options) (session.Store, error) {
		return Open(ctx, url, o)
	},
	Shared: true,
}

// Register registers Backend for the schemes postgres and postgresql.
func Register() {
	session.Register("postgres", Backend)
	session.Register("postgresql", Backend)
}
