package sandbox

import "testing"

// TestNode24Details: the details where goja's built-ins print otherwise than V8 and the
// platform makes them V8's (values recorded with Node 24, TZ=UTC).
func TestNode24Details(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"Date toString names UTC in full", `return [new Date(0).toString(), new Date(0).toTimeString(), String(new Date(86400000)), ` + "`${new Date(0)}`" + `]`,
			`["Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)","00:00:00 GMT+0000 (Coordinated Universal Time)","Fri Jan 02 1970 00:00:00 GMT+0000 (Coordinated Universal Time)","Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)"]`},
		{"toISOString of extended years", `return [new Date(Date.UTC(10000, 0, 1)).toISOString(), new Date(Date.UTC(-1, 0, 1)).toISOString(), new Date(8.64e15).toISOString(), JSON.stringify({d: new Date(-62198755200000)})]`,
			`["+010000-01-01T00:00:00.000Z","-000001-01-01T00:00:00.000Z","+275760-09-13T00:00:00.000Z","{\"d\":\"-000001-01-01T00:00:00.000Z\"}"]`},
		{"toISOString of an invalid date", `try { new Date(NaN).toISOString() } catch (e) { return [e.name, e.message] }`, `["RangeError","Invalid time value"]`},
		{"RegExp source escapes / and line terminators", `return [new RegExp('a/b').source, new RegExp('a\nb').source, new RegExp('[/]').source, new RegExp('\\/').source, new RegExp('a\u2028b').source, new RegExp('').source, String(new RegExp('a/b', 'g')), new RegExp('\\p{L}/', 'u').source]`,
			`["a\\/b","a\\nb","[/]","\\/","a\\u2028b","(?:)","/a\\/b/g","\\p{L}\\/"]`},
		{"onabort runs where it was first set among the listeners", `
			const run = (steps) => { const c = new AbortController(), got = []; steps(c.signal, got); c.abort(); return got.join(",") }
			return [
				run((s, got) => { s.addEventListener("abort", () => got.push("L1")); s.onabort = () => got.push("on"); s.addEventListener("abort", () => got.push("L2")) }),
				run((s, got) => { s.onabort = () => got.push("on1"); s.addEventListener("abort", () => got.push("L1")); s.onabort = () => got.push("on2") }),
				run((s, got) => { s.onabort = () => got.push("on1"); s.onabort = null; s.addEventListener("abort", () => got.push("L1")); s.onabort = () => got.push("on2") }),
			]`, `["L1,on,L2","on2,L1","on2,L1"]`},
		{"plural categories in CLDR order", `return [new Intl.PluralRules('ar').resolvedOptions().pluralCategories, new Intl.PluralRules('en', {type: 'ordinal'}).resolvedOptions().pluralCategories]`,
			`[["zero","one","two","few","many","other"],["one","two","few","other"]]`},
		{"grouping separators", `return [(1234567.891).toLocaleString('de-DE'), (1234567.891).toLocaleString('fr-FR'), (1234567).toLocaleString('en-IN'), new Intl.NumberFormat('de-CH').format(1234567.5), new Intl.NumberFormat('es-ES').format(1234)]`,
			`["1.234.567,891","1` + "\u202f" + `234` + "\u202f" + `567,891","12,34,567","1'234'567.5","1234"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantValue(t, runJS(t, tt.src, nil), tt.want)
		})
	}
}
