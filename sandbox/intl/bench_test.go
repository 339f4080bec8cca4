package intl

import (
	"testing"

	"github.com/dop251/goja"
)

// BenchmarkRuntime is the floor: a fresh runtime, as the sandbox makes one per run.
func BenchmarkRuntime(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = goja.New()
	}
}

// BenchmarkRuntimeInstall is a fresh runtime with Intl installed (not touched).
func BenchmarkRuntimeInstall(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rt := goja.New()
		if err := Install(rt, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func benchScript(b *testing.B, setup, script string) {
	rt := newRuntime(b)
	if _, err := rt.RunString(setup); err != nil {
		b.Fatal(err)
	}
	prog := goja.MustCompile("bench.js", script, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rt.RunProgram(prog); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNumberFormatFormat is one format call of a constructed NumberFormat.
func BenchmarkNumberFormatFormat(b *testing.B) {
	benchScript(b, `var f = new Intl.NumberFormat('de-DE', {style: 'currency', currency: 'EUR'})`, `f.format(1234.5)`)
}

// BenchmarkNumberToLocaleString is (n).toLocaleString with a locale and options: the
// formatter comes from the process cache.
func BenchmarkNumberToLocaleString(b *testing.B) {
	benchScript(b, ``, `(1234.5).toLocaleString('en-US', {maximumFractionDigits: 2})`)
}

// BenchmarkNumberToString is the floor for the two above: a plain Number method call.
func BenchmarkNumberToString(b *testing.B) {
	benchScript(b, ``, `(1234.5).toFixed(2)`)
}
