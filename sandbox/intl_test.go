package sandbox

import (
	"testing"

	"github.com/codemode/codemode/sandbox/intl"
)

// The CLDR tables stay loaded once the first program uses Intl; loaded in the middle of the
// parallel tests, the heap watchdog would charge them to whatever runs were executing,
// including the memory-limit tests' 1 MiB runs. Loading them before any test runs keeps the
// package's tests independent of their order.
func init() {
	if err := intl.Preload(); err != nil {
		panic(err)
	}
}

func TestIntl(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"NumberFormat", `return new Intl.NumberFormat("de-DE", {style: "currency", currency: "EUR"}).format(1234.5)`, "\"1.234,50\u00a0€\""},
		{"toLocaleString", `return (1234.5).toLocaleString("de-DE")`, `"1.234,5"`},
		{"toLocaleString en-US default", `return (1234567.891).toLocaleString()`, `"1,234,567.891"`},
		{"toLocaleString through eval", `return eval("(1234.5).toLocale" + "String('de-DE')")`, `"1.234,5"`},
		{"Intl becomes a data property", `Intl; const d = Object.getOwnPropertyDescriptor(globalThis, "Intl"); return [typeof d.value, d.writable, d.enumerable, d.configurable]`, `["object",true,false,true]`},
		{"Intl is assignable", `Intl = 5; return Intl`, `5`},
		{"localeCompare", `return ["b10", "b9", "a100"].sort((a, b) => a.localeCompare(b, undefined, {numeric: true}))`, `["a100","b9","b10"]`},
		{"Date toLocaleString in UTC", `return new Date(Date.UTC(2024, 0, 2, 15, 4, 5)).toLocaleString("en-US")`, `"1/2/2024, 3:04:05 PM"`},
		{"DateTimeFormat default time zone", `return new Intl.DateTimeFormat().resolvedOptions().timeZone`, `"UTC"`},
		// Reading the descriptor does not run the getter: Intl is still unbuilt.
		{"a run that never touches Intl does not build it", `const d = Object.getOwnPropertyDescriptor(globalThis, "Intl"); return typeof d.get`, `"function"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runJS(t, c.src, nil)
			if res.Err != nil {
				t.Fatalf("failed: %+v", res.Err)
			}
			if string(res.Value) != c.want {
				t.Fatalf("got %s, want %s", res.Value, c.want)
			}
		})
	}
}

// BenchmarkRunToFixed is the floor for BenchmarkRunToLocaleString: a run that formats a
// number without Intl.
func BenchmarkRunToFixed(b *testing.B) { benchmarkRunProgram(b, nil, "", `return (1234.5).toFixed(2)`) }

// BenchmarkRunToLocaleString is a run whose program names toLocaleString: Intl and the
// Number, BigInt, Date and Array methods are installed, and one number is formatted.
func BenchmarkRunToLocaleString(b *testing.B) {
	benchmarkRunProgram(b, nil, "", `return (1234.5).toLocaleString('de-DE')`)
}

// BenchmarkRunNumberFormat is a run that builds Intl and one NumberFormat.
func BenchmarkRunNumberFormat(b *testing.B) {
	benchmarkRunProgram(b, nil, "", `return new Intl.NumberFormat('de-DE', {style: 'currency', currency: 'EUR'}).format(1234.5)`)
}

// format and compare are getters of functions bound to their instance: the same function on
// every read, usable detached (arr.map(nf.format), names.sort(coll.compare)), and refusing an
// object that is not an instance of their class.
func TestIntlBoundFunctions(t *testing.T) {
	wantValue(t, runJS(t, `
		const nf = new Intl.NumberFormat("en-US"), df = new Intl.DateTimeFormat("en-US", {timeZone: "UTC"}), co = new Intl.Collator("en", {numeric: true})
		const detached = nf.format
		let refused = ""
		try { Object.getOwnPropertyDescriptor(Intl.NumberFormat.prototype, "format").get.call({}) } catch (e) { refused = e.name }
		return [nf.format === nf.format, df.format === df.format, co.compare === co.compare, nf.format !== new Intl.NumberFormat("en-US").format,
			[1234.5, 2].map(detached), df.format(0), ["a10", "a9"].sort(co.compare), refused]`, nil),
		`[true,true,true,true,["1,234.5","2"],"1/1/1970",["a9","a10"],"TypeError"]`)
}
