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

// BenchmarkRuntimeInstall is a fresh runtime with the lazy Intl global installed (not
// touched), as the sandbox installs it for a program that never names a toLocale method.
func BenchmarkRuntimeInstall(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rt := goja.New()
		if err := Install(rt, &Options{SkipBuiltins: true}); err != nil {
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

// BenchmarkDateTimeFormatFormat is one format call of a constructed DateTimeFormat.
func BenchmarkDateTimeFormatFormat(b *testing.B) {
	benchScript(b, `var f = new Intl.DateTimeFormat('en-US', {dateStyle: 'medium', timeStyle: 'short', timeZone: 'America/New_York'}); var d = new Date(1704207845123)`, `f.format(d)`)
}

// BenchmarkDateToLocaleString is Date.prototype.toLocaleString with a locale and options.
func BenchmarkDateToLocaleString(b *testing.B) {
	benchScript(b, `var d = new Date(1704207845123)`, `d.toLocaleString('de-DE', {timeZone: 'Europe/Berlin'})`)
}

// BenchmarkDateToISOString is the floor for the two above.
func BenchmarkDateToISOString(b *testing.B) {
	benchScript(b, `var d = new Date(1704207845123)`, `d.toISOString()`)
}

// BenchmarkLocaleCompareSort sorts 100 names with localeCompare.
func BenchmarkLocaleCompareSort(b *testing.B) {
	benchScript(b, `var names = []; for (var i = 0; i < 100; i++) names.push(['Zoë', 'émile', 'Ana', 'bob', 'Ölaf'][i % 5] + (i * 7919 % 100))`,
		`names.slice().sort(function (a, b) { return a.localeCompare(b); })`)
}

// BenchmarkSortFloor sorts the same names by code unit.
func BenchmarkSortFloor(b *testing.B) {
	benchScript(b, `var names = []; for (var i = 0; i < 100; i++) names.push(['Zoë', 'émile', 'Ana', 'bob', 'Ölaf'][i % 5] + (i * 7919 % 100))`,
		`names.slice().sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; })`)
}

// BenchmarkRuntimeInstallBuiltins is a fresh runtime with Intl and the toLocale* methods
// installed: what a run whose program mentions toLocaleString pays.
func BenchmarkRuntimeInstallBuiltins(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rt := goja.New()
		if err := Install(rt, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstIntl is a fresh runtime whose program reads Intl once: building the
// namespace (the CLDR tables are already loaded).
func BenchmarkFirstIntl(b *testing.B) {
	prog := goja.MustCompile("bench.js", `Intl.NumberFormat`, false)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		rt := goja.New()
		if err := Install(rt, &Options{SkipBuiltins: true}); err != nil {
			b.Fatal(err)
		}
		if _, err := rt.RunProgram(prog); err != nil {
			b.Fatal(err)
		}
	}
}
