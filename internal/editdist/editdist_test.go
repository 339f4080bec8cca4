package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{
		{"math_add", "math_add", 3, 0},
		{"util_ehco", "util_echo", 3, 2},
		{"kv_sett", "kv_set", 3, 1},
		{"", "abc", 5, 3},
		{"fils", "files_list", 3, 4}, // over the limit: limit+1
		{"ü", "u", 2, 1},
		{"completely", "different", 3, 4},
	} {
		if got := Distance(tc.a, tc.b, tc.limit); got != tc.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.limit, got, tc.want)
		}
	}
}

// Symmetric, zero only for equal strings, never above limit+1.
func FuzzDistance(f *testing.F) {
	f.Add("util_echo", "util_ehco", 3)
	f.Fuzz(func(t *testing.T, a, b string, limit int) {
		limit = limit & 15
		d := Distance(a, b, limit)
		if d != Distance(b, a, limit) || d > limit+1 || d < 0 || Distance(a, a, limit) != 0 {
			t.Fatalf("Distance(%q, %q, %d) = %d", a, b, limit, d)
		}
	})
}

// Names whose lengths differ by more than the limit cost no allocation,
// however long: Distance is called with every tool name.
func TestDistanceOfFarLengthsAllocatesNothing(t *testing.T) {
	long := string(make([]byte, 1<<20))
	if allocs := testing.AllocsPerRun(10, func() {
		if d := Distance(long, "math_add", 3); d != 4 {
			t.Fatalf("Distance = %d, want 4", d)
		}
	}); allocs != 0 {
		t.Fatalf("%v allocations for names of far lengths", allocs)
	}
}
