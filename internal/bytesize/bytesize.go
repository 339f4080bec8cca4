// Package bytesize renders byte counts for messages and prompts, the one place that knows
// the units: a limit in the largest binary unit that divides it ("64 MiB"), a measured size
// rounded for people ("4.7 MiB").
package bytesize

import (
	"fmt"
	"strings"
)

// Format renders n in the largest binary unit that divides it (GiB, MiB or KiB), else in
// bytes: "1 GiB", "512 KiB", "1536 bytes", "0 bytes".
func Format(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Approx renders n for people, to one decimal of a KiB or MiB with a trailing ".0"
// dropped: "812 bytes", "32 KiB", "4.7 MiB", "2048 MiB".
func Approx(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return oneDecimal(float64(n)/(1<<10)) + " KiB"
	default:
		return oneDecimal(float64(n)/(1<<20)) + " MiB"
	}
}

func oneDecimal(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") }
