package session

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// migrationFS holds the schema of each dialect as numbered files,
// migrations/<dialect>/NNNN_name.sql, applied in order at Open. A file, once
// released, never changes; a schema change is a new file.
//
//go:embed migrations
var migrationFS embed.FS

// migrationsTable records the applied migrations of a database.
const migrationsTable = "codemode_migrations"

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns a dialect's migrations ordered by version.
func migrations(dialect string) ([]migration, error) {
	dir := path.Join("migrations", dialect)
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, fmt.Errorf("session: read %s migrations: %w", dialect, err)
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("session: migration file %s/%s is not named NNNN_name.sql", dir, name)
		}
		body, err := fs.ReadFile(migrationFS, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := range out {
		if out[i].version != i+1 {
			return nil, fmt.Errorf("session: %s migrations are not numbered 1, 2, 3…: found %s", dialect, out[i].name)
		}
	}
	return out, nil
}

// pending returns the migrations not yet applied, given the applied versions;
// it fails when the database is newer than this binary.
func pending(all []migration, applied []int) ([]migration, error) {
	done := map[int]bool{}
	for _, v := range applied {
		if v > len(all) {
			return nil, fmt.Errorf("session: the database schema is at version %d but this binary knows only %d: upgrade codemode", v, len(all))
		}
		done[v] = true
	}
	var out []migration
	for _, m := range all {
		if !done[m.version] {
			out = append(out, m)
		}
	}
	return out, nil
}
