package session

import (
	"testing"
)

func TestParseDurability(t *testing.T) {
	for in, want := range map[string]Durability{"": DurabilityFull, "full": DurabilityFull, "process": DurabilityProcess} {
		if got, err := ParseDurability(in); err != nil || got != want {
			t.Errorf("ParseDurability(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"FULL", "normal", "off", " full"} {
		if _, err := ParseDurability(in); err == nil {
			t.Errorf("ParseDurability(%q) accepted", in)
		}
	}
}
