package postgres

import (
	"context"
	"testing"

	"github.com/codemode/codemode/internal/pgtest"
	"github.com/codemode/codemode/session"
)

func TestPostgresDurability(t *testing.T) {
	ctx := context.Background()
	base := pgtest.Schema(t)
	for _, tc := range []struct {
		d      session.Durability
		params string
		want   string
	}{
		{"", "", "on"},
		{session.DurabilityFull, "&synchronous_commit=off", "on"},                    // full is flushed whatever the URL says
		{session.DurabilityFull, "&synchronous_commit=remote_apply", "remote_apply"}, // a stricter setting stands
		{session.DurabilityProcess, "", "off"},
	} {
		p, err := Open(ctx, base+tc.params, session.Options{Durability: tc.d})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := p.pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&got); err != nil || got != tc.want {
			t.Errorf("durability %q with %q: synchronous_commit = %q (%v), want %q", tc.d, tc.params, got, err, tc.want)
		}
		if _, err := p.Append(ctx, "ghost", session.Event{Type: session.TypeUserContext}); err == nil {
			t.Error("append to an unknown session succeeded")
		}
		p.Close()
	}
}
