package fdlibm

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// TestMatchesV8 checks every function bit for bit against V8's answers (testdata/v8.json,
// recorded by testdata/record.mjs).
func TestMatchesV8(t *testing.T) {
	b, err := os.ReadFile("testdata/v8.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][4]string
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2500 {
		t.Fatalf("%d rows, want at least 2500", len(rows))
	}
	float := func(h string) float64 {
		u, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		return math.Float64frombits(u)
	}
	fns := []struct {
		name string
		f    func(float64) float64
	}{{"sin", Sin}, {"cos", Cos}, {"tan", Tan}}
	for _, row := range rows {
		x := float(row[0])
		for i, fn := range fns {
			want, got := float(row[i+1]), fn.f(x)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%s(%v) = %v, V8 gives %v", fn.name, x, got, want)
			}
		}
	}
}

// Go's math package differs from V8 on many of the same arguments, so the test above can fail.
func TestGoMathDiffers(t *testing.T) {
	if math.Sin(-19.95) == Sin(-19.95) {
		t.Fatal("math.Sin(-19.95) is V8's answer: the recorded data would not tell the two apart")
	}
}

func BenchmarkSin(b *testing.B) {
	b.ReportAllocs()
	x := 0.0
	for b.Loop() {
		x += Sin(x + 1.5)
	}
}
