package positive

import (
	"testing"
	"time"
)

func TestOr(t *testing.T) {
	for _, tc := range []struct{ v, def, want int }{{0, 5, 5}, {-1, 5, 5}, {3, 5, 3}, {1, 0, 1}} {
		if got := Or(tc.v, tc.def); got != tc.want {
			t.Errorf("Or(%d, %d) = %d, want %d", tc.v, tc.def, got, tc.want)
		}
	}
	if got := Or(time.Duration(0), time.Second); got != time.Second {
		t.Errorf("Or(0s, 1s) = %v", got)
	}
}
