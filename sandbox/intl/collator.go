package intl

import (
	"strings"
	"unicode"

	"github.com/dop251/goja"
	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// collatorOptions are a Collator's resolved options.
type collatorOptions struct {
	locale            string
	usage             string
	sensitivity       string
	ignorePunctuation bool
	collation         string
	numeric           bool
	caseFirst         string
}

// collator is a resolved Collator. It wraps golang.org/x/text/collate (CLDR's root
// collation and language tailorings); a collate.Collator is not safe for concurrent use,
// so each belongs to one runtime.
type collator struct {
	opt  collatorOptions
	coll *collate.Collator
	// caseColl breaks the ties of sensitivity "case" (x/text has no case level): it
	// compares the strings without their diacritics at full strength.
	caseColl *collate.Collator
}

// collationLanguages lack a collation of their own in ICU, which V8 then resolves to the
// default locale; collationLocales are the regional and script variants that have one.
var (
	collationLanguages = map[string]bool{"ak": false, "ba": false, "cv": false, "eu": false, "gd": false, "jv": false,
		"pcm": false, "qu": false, "rm": false, "sd": false, "shn": false, "so": false, "ti": false, "yue": false}
	collationLocales = map[string]bool{"en-US": true, "ar-SA": true, "bs-Cyrl": true, "de-AT": true, "fa-AF": true,
		"fr-CA": true, "kk-Arab": true, "pa-Guru": true, "sr-Cyrl": true, "sr-Cyrl-BA": true, "sr-Cyrl-ME": true,
		"sr-Latn": true, "sr-Latn-BA": true, "zh-Hans": true, "zh-Hans-SG": true, "zh-Hant": true, "zh-Hant-HK": true,
		"zh-Hant-MO": true, "zh-TW": true, "zh-HK": true, "zh-CN": true, "zh-SG": true, "zh-MO": true}
	collationTypes = map[string][]string{
		"de": {"phonebk", "eor", "search"}, "es": {"trad", "search"}, "zh": {"pinyin", "stroke", "zhuyin", "unihan", "big5han", "gb2312"},
		"ja": {"unihan"}, "ko": {"searchjl", "unihan"}, "sv": {"search", "trad"}, "fi": {"trad", "search"},
	}
)

func collatorAvailable(s *supplementalData) availability {
	general := generalAvailable(s)
	return func(base string) bool {
		if collationLocales[base] {
			return true
		}
		if strings.ContainsRune(base, '-') {
			return false
		}
		if ok, listed := collationLanguages[base]; listed && !ok {
			return false
		}
		return general(base)
	}
}

// collatorRequest is what a Collator's options said, read in ECMA-402's order.
type collatorRequest struct {
	requested   []langTag
	usage, co   string
	numeric     int
	caseFirst   string
	sensitivity string
	ignorePunct int
}

func (q *collatorRequest) key(e *env) string {
	var b strings.Builder
	b.WriteString(e.localesKey(q.requested))
	b.WriteString(strings.Join([]string{q.usage, q.co, string(rune('0' + q.numeric)), q.caseFirst, q.sensitivity, string(rune('0' + q.ignorePunct))}, "|"))
	return b.String()
}

func (e *env) readCollatorOptions(locales, options goja.Value) *collatorRequest {
	const service = "Intl.Collator"
	q := &collatorRequest{requested: e.canonicalizeLocaleList(locales)}
	o := e.coerceOptions(options)
	q.usage = e.stringOption(o, "usage", service, []string{"sort", "search"}, "sort")
	e.localeMatcher(o, service)
	q.co = e.stringOption(o, "collation", service, nil, "")
	if q.co != "" && !isWellFormedType(q.co) {
		e.throwRange("Invalid collation : %s", clip(q.co))
	}
	q.numeric = boolOption(o, "numeric")
	q.caseFirst = e.stringOption(o, "caseFirst", service, []string{"upper", "lower", "false"}, "")
	q.sensitivity = e.stringOption(o, "sensitivity", service, []string{"base", "accent", "case", "variant"}, "")
	q.ignorePunct = boolOption(o, "ignorePunctuation")
	return q
}

func (e *env) newCollator(q *collatorRequest) *collator {
	var opt collatorOptions
	opt.usage = q.usage
	co, numeric, caseFirst := q.co, q.numeric, q.caseFirst
	s := mustSupplemental()
	keys := []keySpec{
		{key: "co", option: co, hasOpt: co != "",
			supports: func(data, v string) bool {
				lang, _, _ := strings.Cut(data, "-")
				for _, t := range collationTypes[lang] {
					if t == v && t != "search" {
						return true
					}
				}
				return false
			},
			def: func(string) string { return "default" }},
		{key: "kf", option: caseFirst, hasOpt: caseFirst != "",
			supports: func(_, v string) bool { return v == "upper" || v == "lower" || v == "false" },
			def:      func(string) string { return "false" }},
		{key: "kn", option: map[int]string{1: "false", 2: "true"}[numeric], hasOpt: numeric != 0,
			supports: func(_, v string) bool { return v == "true" || v == "false" },
			def:      func(string) string { return "false" }},
	}
	r := e.resolveLocale(q.requested, collatorAvailable(s), keys)
	opt.collation = r.values["co"]
	if opt.collation == "pinyin" {
		opt.collation = "default" // zh's default is pinyin; ICU reports it as default
	}
	opt.caseFirst = r.values["kf"]
	opt.numeric = r.values["kn"] == "true"
	opt.locale = r.tag.String()
	opt.sensitivity = q.sensitivity
	if opt.sensitivity == "" {
		opt.sensitivity = "variant"
	}
	opt.ignorePunctuation = q.ignorePunct == 2 || q.ignorePunct == 0 && r.tag.lang == "th"
	c := &collator{opt: opt}
	tagText := r.tag.baseName()
	if v := r.values["co"]; v != "default" && v != "" {
		tagText += "-u-co-" + v
	}
	tag, err := language.Parse(tagText)
	if err != nil {
		tag = language.Und
	}
	var copts []collate.Option
	switch opt.sensitivity {
	case "base":
		copts = append(copts, collate.IgnoreCase, collate.IgnoreDiacritics)
	case "accent":
		copts = append(copts, collate.IgnoreCase)
	case "case":
		copts = append(copts, collate.IgnoreCase, collate.IgnoreDiacritics)
		var co []collate.Option
		if opt.numeric {
			co = append(co, collate.Numeric)
		}
		c.caseColl = collate.New(tag, co...)
	}
	if opt.numeric {
		copts = append(copts, collate.Numeric)
	}
	c.coll = collate.New(tag, copts...)
	return c
}

// compare compares two strings (ECMA-402 CompareStrings).
func (c *collator) compare(a, b string) int {
	if c.opt.ignorePunctuation {
		a, b = dropPunctuation(a), dropPunctuation(b)
	}
	if c.opt.caseFirst == "upper" && (c.opt.sensitivity == "variant" || c.opt.sensitivity == "case") {
		// x/text orders lower case first at the tertiary level; swapping the case of both
		// strings inverts exactly that order.
		a, b = swapCase(a), swapCase(b)
	}
	r := c.coll.CompareString(a, b)
	if r == 0 && c.caseColl != nil {
		r = c.caseColl.CompareString(stripDiacritics(a), stripDiacritics(b))
	}
	return r
}

func stripDiacritics(s string) string {
	return norm.NFC.String(strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s)))
}

func dropPunctuation(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsUpper(r):
			return unicode.ToLower(r)
		case unicode.IsLower(r):
			return unicode.ToUpper(r)
		}
		return r
	}, s)
}

// maxCompareString bounds each string given to a Collator (in UTF-16 units); collation
// keys grow with the input, so a giant string is a RangeError rather than a stall.
const maxCompareString = 1 << 20

func (e *env) compareArgs(a, b goja.Value) (string, string) {
	x, y := e.toString(a), e.toString(b)
	if len(x) > maxCompareString || len(y) > maxCompareString {
		e.throwRange("String too long to compare (more than %d characters)", maxCompareString)
	}
	return x, y
}

func (e *env) installCollator() {
	avail := collatorAvailable(mustSupplemental())
	proto := e.localeClass("Collator", 0, true, avail, func(args []goja.Value) any {
		return e.newCollator(e.readCollatorOptions(arg(args, 0), arg(args, 1)))
	})
	e.boundGetter(proto, "Collator", "compare", 2, func(state any, call goja.FunctionCall) goja.Value {
		x, y := e.compareArgs(call.Argument(0), call.Argument(1))
		return e.rt.ToValue(state.(*collator).compare(x, y))
	})
	stateMethod(e, proto, "Collator", "resolvedOptions", 0, func(c *collator, call goja.FunctionCall) goja.Value {
		o := c.opt
		return e.object("locale", o.locale, "usage", o.usage, "sensitivity", o.sensitivity,
			"ignorePunctuation", o.ignorePunctuation, "collation", o.collation, "numeric", o.numeric, "caseFirst", o.caseFirst)
	})
}

// maxRuntimeCollators bounds the collators localeCompare keeps per runtime.
const maxRuntimeCollators = 64

// localeCompare is String.prototype.localeCompare (ECMA-402 19.1.1): the collator for
// the locales and options, kept per runtime so that a sort comparator calling it stays
// cheap.
func (e *env) localeCompare(call goja.FunctionCall) goja.Value {
	this := call.This
	if this == nil || goja.IsUndefined(this) || goja.IsNull(this) {
		e.throwType("String.prototype.localeCompare called on null or undefined")
	}
	a, b := e.compareArgs(this, call.Argument(0))
	q := e.readCollatorOptions(call.Argument(1), call.Argument(2))
	k := q.key(e)
	c := e.collators[k]
	if c == nil {
		c = e.newCollator(q)
		if e.collators == nil {
			e.collators = map[string]*collator{}
		}
		if len(e.collators) < maxRuntimeCollators {
			e.collators[k] = c
		}
	}
	return e.rt.ToValue(c.compare(a, b))
}
