package intl

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// TestHostileInputs feeds Intl what a hostile or confused program might: each case must
// throw the named error (or return the value), never crash, hang or allocate without
// bound, and never show a Go name.
func TestHostileInputs(t *testing.T) {
	cases := []struct{ src, want string }{
		{`new Intl.NumberFormat('en', {maximumFractionDigits: 1e9})`, "RangeError"},
		{`new Intl.NumberFormat('en', {minimumIntegerDigits: Infinity})`, "RangeError"},
		{`new Intl.NumberFormat('en').format('1'.repeat(5000))`, "RangeError"},
		{`new Intl.NumberFormat('en').format('1e999999999999')`, "∞"},
		{`new Intl.NumberFormat('en').format('1e-999999999999')`, "0"},
		{`new Intl.NumberFormat('en', {minimumFractionDigits: 100}).format(5e-324).length`, "102"},
		{`new Intl.NumberFormat('en', {maximumSignificantDigits: 21}).format(1.7976931348623157e308).length`, "411"},
		{`new Intl.NumberFormat('en').format(Symbol())`, "TypeError"},
		{`new Intl.NumberFormat('en', {get style() { throw new SyntaxError('from a getter') }})`, "SyntaxError"},
		{`new Intl.NumberFormat('en', {style: {toString() { throw new EvalError('toString') }}})`, "EvalError"},
		{`new Intl.NumberFormat('en', {style: Symbol()})`, "TypeError"},
		{`new Intl.NumberFormat('en', new Proxy({}, {get() { throw new URIError('proxy') }}))`, "URIError"},
		{`new Intl.NumberFormat({length: 1e12})`, "RangeError"},
		{`new Intl.NumberFormat({length: 2, 0: 'en', 1: {toString() { return 'de' }}}).resolvedOptions().locale`, "en"},
		{`new Intl.NumberFormat([{}])`, "RangeError"},
		{`new Intl.NumberFormat('x'.repeat(1 << 20))`, "RangeError"},
		{`new Intl.NumberFormat('en', {currency: 'x'.repeat(1 << 20), style: 'currency'})`, "RangeError"},
		{`Intl.NumberFormat.prototype.formatToParts.call(new Intl.DateTimeFormat(), 1)`, "TypeError"},
		{`Object.getOwnPropertyDescriptor(Intl.NumberFormat.prototype, 'format').get.call(1)`, "TypeError"},
		{`new Intl.DateTimeFormat('en', {timeZone: 'x'.repeat(1 << 20)})`, "RangeError"},
		{`new Intl.DateTimeFormat('en', {timeZone: {toString() { return 'Europe/Paris' }}}).resolvedOptions().timeZone`, "Europe/Paris"},
		{`new Intl.DateTimeFormat('en').format(Symbol())`, "TypeError"},
		{`new Intl.DateTimeFormat('en').format({valueOf() { throw new SyntaxError('valueOf') }})`, "SyntaxError"},
		{`new Intl.DateTimeFormat('en').format(1e300)`, "RangeError"},
		{`new Date(8.64e15).toLocaleString('en', {timeZone: 'Pacific/Kiritimati'})`, "9/13/275760, 2:00:00 PM"},
		{`'a'.localeCompare('b'.repeat(1 << 21))`, "RangeError"},
		{`new Intl.Collator().compare('a', {toString() { throw new EvalError('x') }})`, "EvalError"},
		{`new Intl.ListFormat('en').format({[Symbol.iterator]() { return {next() { throw new URIError('it') }} }})`, "URIError"},
		{`new Intl.ListFormat('en').format([Symbol()])`, "TypeError"},
		{`new Intl.RelativeTimeFormat('en').format(1e308, 'year').length > 300`, "true"},
		{`new Intl.Segmenter().segment({toString() { throw new EvalError('s') }})`, "EvalError"},
		{`new Intl.PluralRules('en').select(Symbol())`, "TypeError"},
		{`Array.prototype.toLocaleString.call({length: 1e12})`, "RangeError"},
		{`[{toLocaleString() { throw new EvalError('elem') }}].toLocaleString()`, "EvalError"},
		{`[{toLocaleString: 5}].toLocaleString()`, "TypeError"},
		{`Number.prototype.toLocaleString.call({})`, "TypeError"},
		{`BigInt.prototype.toLocaleString.call(1)`, "TypeError"},
		{`Date.prototype.toLocaleDateString.call(5)`, "TypeError"},
		{`class X extends Intl.NumberFormat {}; new X('de').format(1234.5)`, "1.234,5"},
		{`class Y extends Intl.NumberFormat { hi() { return 'hi' } }; new Y().hi()`, "hi"},
		{`var f = new Intl.NumberFormat(); f.x = 1; Object.keys(f).join()`, "x"},
		{`Object.freeze(new Intl.NumberFormat())`, "TypeError"},
		{`for (var i = 0; i < 6000; i++) (1).toLocaleString('en', {maximumFractionDigits: i % 101, minimumIntegerDigits: 1 + i % 21}); 'ok'`, "ok"},
	}
	for _, c := range cases {
		rt := newRuntime(t)
		v, err := rt.RunString(c.src)
		var got, msg string
		if err != nil {
			ex, ok := err.(*goja.Exception)
			if !ok {
				t.Errorf("%s: not a JavaScript exception: %v", c.src, err)
				continue
			}
			o, _ := ex.Value().(*goja.Object)
			if o == nil {
				t.Errorf("%s: threw a non-object %v", c.src, ex.Value())
				continue
			}
			got, msg = o.Get("name").String(), o.Get("message").String()
		} else {
			got = v.String()
		}
		if got != c.want {
			t.Errorf("%s: got %s (%s), want %s", c.src, got, msg, c.want)
		}
		for _, leak := range []string{"github.com", "golang.org", "goja", "intl.", "*", "runtime error"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%s: message %q shows %q", c.src, msg, leak)
			}
		}
	}
}

func FuzzParseTag(f *testing.F) {
	for _, s := range []string{"en-US", "EN-latn-us-u-kn-true-ca-Gregory", "de-1996-1901", "sh", "art-lojban", "en-a-bbb-u-kn-x-foo",
		"zh-Hant-TW", "en-t-de-h0-hybrid", "x-private", "und-Qaai", "en-US-POSIX", "i-klingon", "en--US", "-"} {
		f.Add(s)
	}
	s, err := supplemental()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tag, ok := canonicalTag(in, s)
		if !ok {
			return
		}
		out := tag.String()
		again, ok := canonicalTag(out, s)
		if !ok {
			t.Fatalf("%q canonicalized to %q, which does not parse", in, out)
		}
		if again.String() != out {
			t.Fatalf("%q: canonical form %q is not stable (%q)", in, out, again.String())
		}
		dataLocale(s, tag.baseName())
	})
}

func FuzzDecimalFromString(f *testing.F) {
	for _, s := range []string{"1234.5", " -0 ", "0x1F", "1e400", ".5", "5.", "1_000", "Infinity", "-1.5e-3", "0b101", "00012.3400"} {
		f.Add(s)
	}
	s, err := supplemental()
	if err != nil {
		f.Fatal(err)
	}
	_ = s
	rt := goja.New()
	e := &env{rt: rt}
	nf := newNumberFormat(e, nil, "", numberOptions{style: "decimal", notation: "standard", useGrouping: "auto",
		signDisplay: "auto", minInt: 1, maxFD: 20, roundingType: "fractionDigits", roundingIncr: 1, roundingMode: "halfExpand"})
	f.Fuzz(func(t *testing.T, in string) {
		d, ok := decimalFromString(in)
		if !ok {
			return
		}
		out := nf.format(d)
		if out == "" {
			t.Fatalf("%q formatted as nothing", in)
		}
		// The exact value round-trips through the digits when it is a plain decimal.
		if !d.nan && !d.inf && len(d.digits) > 0 && len(d.digits) < 15 && d.exp > -5 && d.exp < 15 {
			r, i, fr := nf.round(d)
			_ = r
			if strings.TrimLeft(i+fr, "0") == "" {
				t.Fatalf("%q: nonzero value %v rounded to zero at 20 digits", in, d)
			}
		}
	})
}
