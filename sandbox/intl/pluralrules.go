package intl

import (
	"slices"

	"github.com/dop251/goja"
)

// pluralRulesObject is a resolved Intl.PluralRules.
type pluralRulesObject struct {
	locale  string
	ordinal bool
	digits  *numberFormat // formats the operand, for its visible fraction digits
	rules   *pluralRules
}

func (e *env) installPluralRules() {
	avail := generalAvailable(mustSupplemental())
	proto := e.localeClass("PluralRules", 0, false, avail, func(args []goja.Value) any {
		requested := e.canonicalizeLocaleList(arg(args, 0))
		o := e.coerceOptions(arg(args, 1))
		e.localeMatcher(o, "Intl.PluralRules")
		typ := e.stringOption(o, "type", "Intl.PluralRules", []string{"cardinal", "ordinal"}, "cardinal")
		opt := numberOptions{style: "decimal", notation: "standard", useGrouping: "false", signDisplay: "auto"}
		e.digitOptions(o, &opt, 0, 3)
		r := e.resolveLocale(requested, avail, nil)
		f := newNumberFormat(e, []langTag{r.tag}, "latn", opt)
		p := &pluralRulesObject{
			locale:  r.tag.String(),
			ordinal: typ == "ordinal",
			digits:  f,
			rules:   pluralRulesFor(pluralLang(r.data), typ == "ordinal"),
		}
		return p
	})
	stateMethod(e, proto, "PluralRules", "select", 1, func(p *pluralRulesObject, call goja.FunctionCall) goja.Value {
		return e.rt.ToValue(p.selectNumber(call.Argument(0).ToFloat()))
	})
	stateMethod(e, proto, "PluralRules", "selectRange", 2, func(p *pluralRulesObject, call goja.FunctionCall) goja.Value {
		a, b := call.Argument(0), call.Argument(1)
		if goja.IsUndefined(a) || goja.IsUndefined(b) {
			e.throwType("start or end is undefined")
		}
		x, y := a.ToFloat(), b.ToFloat()
		if x != x || y != y {
			e.throwRange("Invalid number range: NaN")
		}
		// CLDR's plural ranges resolve to the end's category for the languages it lists
		// (en, de, fr, es, ...); that is what is implemented.
		return e.rt.ToValue(p.selectNumber(y))
	})
	stateMethod(e, proto, "PluralRules", "resolvedOptions", 0, func(p *pluralRulesObject, call goja.FunctionCall) goja.Value {
		o := p.digits.opt
		typ := "cardinal"
		if p.ordinal {
			typ = "ordinal"
		}
		kv := []any{"locale", p.locale, "type", typ, "minimumIntegerDigits", o.minInt}
		if o.roundingType != "fractionDigits" {
			kv = append(kv, "minimumSignificantDigits", o.minSD, "maximumSignificantDigits", o.maxSD)
		}
		if o.roundingType != "significantDigits" {
			kv = append(kv, "minimumFractionDigits", o.minFD, "maximumFractionDigits", o.maxFD)
		}
		// In CLDR's order (zero, one, two, few, many, other), as ICU 74 and later give them
		// (Node 22 and later).
		cats := append([]string{}, p.rules.order...)
		slices.SortFunc(cats, func(a, b string) int { return pluralRank[a] - pluralRank[b] })
		vals := make([]any, len(cats))
		for i, c := range cats {
			vals[i] = c
		}
		kv = append(kv, "pluralCategories", e.rt.NewArray(vals...),
			"roundingIncrement", o.roundingIncr, "roundingMode", o.roundingMode,
			"roundingPriority", o.roundingPriority, "trailingZeroDisplay", o.trailingZero)
		return e.object(kv...)
	})
}

// pluralRank orders the plural categories as CLDR lists them.
var pluralRank = map[string]int{"zero": 0, "one": 1, "two": 2, "few": 3, "many": 4, "other": 5}

func (p *pluralRulesObject) selectNumber(x float64) string {
	d := decimalFromFloat(x)
	if d.nan || d.inf {
		return "other"
	}
	_, i, f := p.digits.round(d)
	return p.rules.category(operands(i, f))
}
