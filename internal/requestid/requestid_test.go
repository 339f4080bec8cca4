package requestid

import (
	"context"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"abc-123", true},
		{"A_b.c:d/e", true},
		{strings.Repeat("x", MaxLen), true},
		{strings.Repeat("x", MaxLen+1), false},
		{"", false},
		{"has space", false},
		{"tab\t", false},
		{"new\nline", false},
		{"é", false},
		{"\x7f", false},
	} {
		if got := Valid(tc.id); got != tc.want {
			t.Errorf("Valid(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestNewAndContext(t *testing.T) {
	a, b := New(), New()
	if !Valid(a) || a == b || len(a) != 24 {
		t.Fatalf("New() = %q, %q", a, b)
	}
	if From(context.Background()) != "" {
		t.Fatal("an empty context carries an id")
	}
	if got := From(With(context.Background(), a)); got != a {
		t.Fatalf("From(With(%q)) = %q", a, got)
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"abc", "", "a b", "\x00", strings.Repeat("y", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !Valid(id) {
			return
		}
		if len(id) > MaxLen || strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r > '~' }) {
			t.Fatalf("Valid(%q) holds", id)
		}
	})
}
