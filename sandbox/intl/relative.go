package intl

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// relativeTimeFormat is a resolved Intl.RelativeTimeFormat.
type relativeTimeFormat struct {
	locale, style, numeric, nu string
	ld                         *localeData
	number                     *numberFormat
}

var relativeUnits = map[string]string{
	"second": "second", "seconds": "second", "minute": "minute", "minutes": "minute", "hour": "hour", "hours": "hour",
	"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
	"quarter": "quarter", "quarters": "quarter", "year": "year", "years": "year",
}

func (e *env) installRelativeTimeFormat() {
	const service = "Intl.RelativeTimeFormat"
	avail := generalAvailable(mustSupplemental())
	proto := e.localeClass("RelativeTimeFormat", 0, false, avail, func(args []goja.Value) any {
		requested := e.canonicalizeLocaleList(arg(args, 0))
		o := e.coerceOptions(arg(args, 1))
		e.localeMatcher(o, service)
		nu := e.stringOption(o, "numberingSystem", service, nil, "")
		if nu != "" && !isWellFormedType(nu) {
			e.throwRange("Invalid numberingSystem : %s", clip(nu))
		}
		nu = asciiLower(nu)
		r := e.resolveLocale(requested, avail, []keySpec{numberingSystemKey(nu, nu != "")})
		f := &relativeTimeFormat{locale: r.tag.String(), nu: r.values["nu"]}
		f.style = e.stringOption(o, "style", service, []string{"long", "short", "narrow"}, "long")
		f.numeric = e.stringOption(o, "numeric", service, []string{"always", "auto"}, "always")
		ld, err := loadLocale(r.data)
		if err != nil {
			panic(err)
		}
		f.ld = ld
		opt := numberOptions{style: "decimal", notation: "standard", useGrouping: "auto", signDisplay: "auto",
			minInt: 1, minFD: 0, maxFD: 3, roundingType: "fractionDigits", roundingPriority: "auto",
			roundingIncr: 1, roundingMode: "halfExpand", trailingZero: "auto"}
		f.number = newNumberFormat(e, []langTag{r.tag}, f.nu, opt)
		return f
	})
	stateMethod(e, proto, "RelativeTimeFormat", "format", 2, func(f *relativeTimeFormat, call goja.FunctionCall) goja.Value {
		return e.rt.ToValue(joinParts(e.relativeParts(f, call, "format")))
	})
	stateMethod(e, proto, "RelativeTimeFormat", "formatToParts", 2, func(f *relativeTimeFormat, call goja.FunctionCall) goja.Value {
		ps := e.relativeParts(f, call, "formatToParts")
		vals := make([]any, len(ps))
		for i, p := range ps {
			if p.unit != "" {
				vals[i] = e.object("type", p.typ, "value", p.value, "unit", p.unit)
			} else {
				vals[i] = e.object("type", p.typ, "value", p.value)
			}
		}
		return e.rt.NewArray(vals...)
	})
	stateMethod(e, proto, "RelativeTimeFormat", "resolvedOptions", 0, func(f *relativeTimeFormat, call goja.FunctionCall) goja.Value {
		return e.object("locale", f.locale, "style", f.style, "numeric", f.numeric, "numberingSystem", f.nu)
	})
}

type unitPart struct {
	part
	unit string
}

// relativeParts is ECMA-402 PartitionRelativeTimePattern.
func (e *env) relativeParts(f *relativeTimeFormat, call goja.FunctionCall, method string) []unitPart {
	value := call.Argument(0).ToFloat()
	unitName := e.toString(call.Argument(1))
	if math.IsNaN(value) || math.IsInf(value, 0) {
		e.throwRange("Value need to be finite number for Intl.RelativeTimeFormat.prototype.%s()", method)
	}
	unit, ok := relativeUnits[unitName]
	if !ok {
		e.throwRange("Invalid unit argument for Intl.RelativeTimeFormat.prototype.%s() '%s'", method, clip(unitName))
	}
	key := unit
	if f.style != "long" {
		key += "-" + f.style
	}
	field, ok := f.ld.Fields[key]
	if !ok {
		field = f.ld.Fields[unit]
	}
	if f.numeric == "auto" && value == math.Trunc(value) && math.Abs(value) <= 2 {
		s := strconv.Itoa(int(value))
		if rel, ok := field.Relative[s]; ok && rel != "" {
			return []unitPart{{part: part{"literal", rel}}}
		}
	}
	past := value < 0 || value == 0 && math.Signbit(value)
	num := f.number.parts(decimalFromFloat(math.Abs(value)))
	_, i, fr := f.number.round(decimalFromFloat(math.Abs(value)))
	category := f.number.plural.category(operands(i, fr))
	patterns := field.Future
	if past {
		patterns = field.Past
	}
	pattern := patterns[category]
	if pattern == "" {
		pattern = patterns["other"]
	}
	var out []unitPart
	before, after, ok := strings.Cut(pattern, "{0}")
	if !ok { // Arabic's dual: "قبل يومين", no number
		return []unitPart{{part: part{"literal", pattern}}}
	}
	if before != "" {
		out = append(out, unitPart{part: part{"literal", before}})
	}
	for _, p := range num {
		out = append(out, unitPart{part: p, unit: unit})
	}
	if after != "" {
		out = append(out, unitPart{part: part{"literal", after}})
	}
	return out
}

// listFormat is a resolved Intl.ListFormat.
type listFormat struct {
	locale, typ, style string
	lang               string
	patterns           map[string]string
}

func (e *env) installListFormat() {
	const service = "Intl.ListFormat"
	avail := generalAvailable(mustSupplemental())
	proto := e.localeClass("ListFormat", 0, false, avail, func(args []goja.Value) any {
		r, o := e.resolveArgs(args, service, avail)
		f := &listFormat{locale: r.tag.String(), lang: r.tag.lang}
		f.typ = e.stringOption(o, "type", service, []string{"conjunction", "disjunction", "unit"}, "conjunction")
		f.style = e.stringOption(o, "style", service, []string{"long", "short", "narrow"}, "long")
		ld, err := loadLocale(r.data)
		if err != nil {
			panic(err)
		}
		key := map[string]string{"conjunction": "standard", "disjunction": "or", "unit": "unit"}[f.typ]
		if f.style != "long" {
			key += "-" + f.style
		}
		f.patterns = ld.Lists[key]
		return f
	})
	stateMethod(e, proto, "ListFormat", "format", 1, func(f *listFormat, call goja.FunctionCall) goja.Value {
		return e.rt.ToValue(joinParts(f.parts(e.stringList(call.Argument(0)))))
	})
	stateMethod(e, proto, "ListFormat", "formatToParts", 1, func(f *listFormat, call goja.FunctionCall) goja.Value {
		return e.partsArray(f.parts(e.stringList(call.Argument(0))), "")
	})
	stateMethod(e, proto, "ListFormat", "resolvedOptions", 0, func(f *listFormat, call goja.FunctionCall) goja.Value {
		return e.object("locale", f.locale, "type", f.typ, "style", f.style)
	})
}

// maxListItems bounds the lists ListFormat formats.
const maxListItems = 1 << 20

// stringList is ECMA-402 StringListFromIterable.
func (e *env) stringList(v goja.Value) []string {
	if v == nil || goja.IsUndefined(v) {
		return nil
	}
	var out []string
	e.rt.ForOf(v, func(item goja.Value) bool {
		if !goja.IsString(item) {
			e.throwType("Iterable yielded %s which is not a string", e.describe(item))
		}
		if len(out) >= maxListItems {
			e.throwRange("List too long to format (more than %d items)", maxListItems)
		}
		out = append(out, item.String())
		return true
	})
	return out
}

// parts is ECMA-402 CreatePartsFromList, with ICU's Spanish and Hebrew conjunction
// adjustments (y → e before an i sound, o → u before an o sound, ו- before a non-Hebrew
// word).
func (f *listFormat) parts(items []string) []part {
	n := len(items)
	switch n {
	case 0:
		return nil
	case 1:
		return []part{{"element", items[0]}}
	}
	pat := func(name string, next string) string {
		p := f.patterns[name]
		if p == "" {
			p = "{0}, {1}"
		}
		return f.adjust(p, next)
	}
	// Build from the end: the last pair uses "end" (or "2" for two items).
	var pattern string
	if n == 2 {
		pattern = pat("2", items[1])
	} else {
		pattern = pat("end", items[n-1])
	}
	acc := []part{{"element", items[n-2]}}
	acc = substitute2(pattern, acc, []part{{"element", items[n-1]}})
	for i := n - 3; i >= 0; i-- {
		name := "middle"
		if i == 0 {
			name = "start"
		}
		acc = substitute2(pat(name, items[i+1]), []part{{"element", items[i]}}, acc)
	}
	return acc
}

func substitute2(pattern string, a, b []part) []part {
	var out []part
	for _, piece := range splitGlue(pattern) {
		switch piece {
		case "{0}":
			out = append(out, a...)
		case "{1}":
			out = append(out, b...)
		default:
			out = append(out, part{"literal", piece})
		}
	}
	return out
}

func (f *listFormat) adjust(pattern, next string) string {
	lower := strings.ToLower(next)
	switch f.lang {
	case "es":
		if f.typ != "disjunction" && strings.Contains(pattern, " y ") {
			if (strings.HasPrefix(lower, "i") || strings.HasPrefix(lower, "hi")) && !strings.HasPrefix(lower, "hia") && !strings.HasPrefix(lower, "hie") && !strings.HasPrefix(lower, "hio") && !strings.HasPrefix(lower, "hiu") {
				return strings.Replace(pattern, " y ", " e ", 1)
			}
		}
		if f.typ == "disjunction" && strings.Contains(pattern, " o ") {
			// "once" (11, 11 000, 11 000 000) starts with an o sound too.
			eleven := strings.HasPrefix(lower, "11") && allDigits(lower) && len(lower)%3 == 2
			if strings.HasPrefix(lower, "o") || strings.HasPrefix(lower, "ho") || strings.HasPrefix(lower, "8") || eleven {
				return strings.Replace(pattern, " o ", " u ", 1)
			}
		}
	case "he":
		if r, _ := utf8.DecodeRuneInString(next); r != utf8.RuneError && !unicode.Is(unicode.Hebrew, r) && strings.Contains(pattern, "ו{1}") {
			return strings.Replace(pattern, "ו{1}", "ו-{1}", 1)
		}
	}
	return pattern
}
