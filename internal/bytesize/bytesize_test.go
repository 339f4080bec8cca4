package bytesize

import "testing"

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", -1: "-1 bytes", 1000: "1000 bytes", 1536: "1536 bytes", 2048: "2 KiB",
		64 << 10: "64 KiB", 1 << 20: "1 MiB", 512 << 20: "512 MiB", 1 << 30: "1 GiB", 6 << 30: "6 GiB",
		3 << 29: "1536 MiB",
	} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestApprox(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 812: "812 bytes", 1023: "1023 bytes", 1 << 10: "1 KiB", 32 << 10: "32 KiB",
		1536: "1.5 KiB", 4928307: "4.7 MiB", 4 << 20: "4 MiB", 2 << 30: "2048 MiB",
	} {
		if got := Approx(n); got != want {
			t.Errorf("Approx(%d) = %q, want %q", n, got, want)
		}
	}
}
