package intl

import (
	"sort"
	"strings"

	"github.com/dop251/goja"
)

// displayNames is a resolved Intl.DisplayNames.
type displayNames struct {
	locale, style, typ, fallback, languageDisplay string
	ld                                            *localeData
}

func (e *env) installDisplayNames() {
	const service = "Intl.DisplayNames"
	avail := generalAvailable(mustSupplemental())
	proto := e.localeClass("DisplayNames", 2, false, avail, func(args []goja.Value) any {
		requested := e.canonicalizeLocaleList(arg(args, 0))
		if goja.IsUndefined(arg(args, 1)) {
			e.throwType("Required option 'type' is missing")
		}
		o := e.getOptionsObject(arg(args, 1))
		e.localeMatcher(o, service)
		d := &displayNames{}
		d.style = e.stringOption(o, "style", service, []string{"narrow", "short", "long"}, "long")
		d.typ = e.stringOption(o, "type", service, []string{"language", "region", "script", "currency", "calendar", "dateTimeField"}, "")
		if d.typ == "" {
			e.throwType("Required option 'type' is missing")
		}
		d.fallback = e.stringOption(o, "fallback", service, []string{"code", "none"}, "code")
		d.languageDisplay = e.stringOption(o, "languageDisplay", service, []string{"dialect", "standard"}, "dialect")
		r := e.resolveLocale(requested, avail, nil)
		d.locale = r.tag.String()
		ld, err := loadLocale(r.data)
		if err != nil {
			panic(err)
		}
		d.ld = ld
		return d
	})
	stateMethod(e, proto, "DisplayNames", "of", 1, func(d *displayNames, call goja.FunctionCall) goja.Value {
		code := e.toString(call.Argument(0))
		name, canonical := d.of(e, code)
		if name != "" {
			return e.rt.ToValue(name)
		}
		if d.fallback == "code" {
			return e.rt.ToValue(canonical)
		}
		return goja.Undefined()
	})
	stateMethod(e, proto, "DisplayNames", "resolvedOptions", 0, func(d *displayNames, call goja.FunctionCall) goja.Value {
		kv := []any{"locale", d.locale, "style", d.style, "type", d.typ, "fallback", d.fallback}
		if d.typ == "language" {
			kv = append(kv, "languageDisplay", d.languageDisplay)
		}
		return e.object(kv...)
	})
}

// of returns the display name of code (or "") and the canonical code the fallback shows.
// An ill-formed code is a RangeError.
func (d *displayNames) of(e *env, code string) (string, string) {
	names := d.ld.Names
	if names == nil {
		names = &namesData{}
	}
	alt := func(m map[string]string, key string) string {
		if d.style != "long" {
			if v := m[key+"-alt-short"]; v != "" {
				return v
			}
		}
		return m[key]
	}
	switch d.typ {
	case "language":
		t, ok := parseTag(code)
		if !ok || len(t.uKeys) > 0 || len(t.others) > 0 || t.private != "" {
			e.throwRange("invalid_argument")
		}
		t.canonicalize(mustSupplemental())
		canon := t.String()
		if d.languageDisplay == "dialect" {
			if v := alt(names.Languages, canon); v != "" {
				return v, canon
			}
			if t.script != "" {
				if v := alt(names.Languages, t.lang+"-"+t.script); v != "" {
					return d.withQualifiers(v, "", t.region, t.variants), canon
				}
			}
			if t.region != "" {
				if v := alt(names.Languages, t.lang+"-"+t.region); v != "" {
					return d.withQualifiers(v, t.script, "", t.variants), canon
				}
			}
		}
		base := alt(names.Languages, t.lang)
		if base == "" {
			return "", canon
		}
		return d.withQualifiers(base, t.script, t.region, t.variants), canon
	case "region":
		if !isRegionSubtag(asciiLower(code)) {
			e.throwRange("invalid_argument")
		}
		// V8 11 looks the code up as given: "us" has no name.
		return alt(names.Regions, code), code
	case "script":
		if !isScriptSubtag(asciiLower(code)) {
			e.throwRange("invalid_argument")
		}
		return alt(names.Scripts, code), code
	case "currency":
		if !isWellFormedCurrency(code) {
			e.throwRange("invalid_argument")
		}
		c := strings.ToUpper(code)
		return d.ld.Numbers.Currencies[c].Name, c
	case "calendar":
		if !isWellFormedType(code) {
			e.throwRange("invalid_argument")
		}
		c := asciiLower(code)
		if c == "gregory" {
			c = "gregorian"
		}
		return names.Calendars[c], asciiLower(code)
	case "dateTimeField":
		key := map[string]string{"era": "era", "year": "year", "quarter": "quarter", "month": "month", "weekOfYear": "week",
			"weekday": "weekday", "day": "day", "dayPeriod": "dayperiod", "hour": "hour", "minute": "minute",
			"second": "second", "timeZoneName": "zone"}[code]
		if key == "" {
			e.throwRange("invalid_argument")
		}
		if d.style != "long" {
			if f, ok := d.ld.Fields[key+"-"+d.style]; ok && f.Name != "" {
				return f.Name, code
			}
		}
		return d.ld.Fields[key].Name, code
	}
	return "", code
}

// withQualifiers is CLDR's locale display pattern: "English (United States)".
func (d *displayNames) withQualifiers(name, script, region string, variants []string) string {
	names := d.ld.Names
	var quals []string
	if script != "" {
		if v := names.Scripts[script]; v != "" {
			quals = append(quals, v)
		} else {
			quals = append(quals, script)
		}
	}
	if region != "" {
		if v := names.Regions[region]; v != "" {
			quals = append(quals, v)
		} else {
			quals = append(quals, region)
		}
	}
	for _, v := range variants {
		quals = append(quals, strings.ToUpper(v))
	}
	if len(quals) == 0 {
		return name
	}
	sep := names.Pattern["localeSeparator"]
	if sep == "" {
		sep = "{0}, {1}"
	}
	q := quals[0]
	for _, next := range quals[1:] {
		q = strings.NewReplacer("{0}", q, "{1}", next).Replace(sep)
	}
	pat := names.Pattern["localePattern"]
	if pat == "" {
		pat = "{0} ({1})"
	}
	return strings.NewReplacer("{0}", name, "{1}", q).Replace(pat)
}

// localeObject is a resolved Intl.Locale.
type localeObject struct {
	tag langTag
}

func (e *env) installLocale() {
	s := mustSupplemental()
	_, proto := e.class("Locale", 1, false, func(args []goja.Value, proto *goja.Object) *goja.Object {
		t := e.localeTag(arg(args, 0), s, "First argument to Intl.Locale constructor can't be empty or missing")
		o := e.coerceOptions(arg(args, 1))
		if v := e.stringOption(o, "language", "Intl.Locale", nil, ""); v != "" {
			if !isLangSubtag(asciiLower(v)) {
				e.throwRange("Incorrect locale information provided")
			}
			t.lang = asciiLower(v)
		}
		if v := e.stringOption(o, "script", "Intl.Locale", nil, ""); v != "" {
			if !isScriptSubtag(asciiLower(v)) {
				e.throwRange("Incorrect locale information provided")
			}
			t.script, _ = properCase(asciiLower(v), "")
		}
		if v := e.stringOption(o, "region", "Intl.Locale", nil, ""); v != "" {
			if !isRegionSubtag(asciiLower(v)) {
				e.throwRange("Incorrect locale information provided")
			}
			t.region = strings.ToUpper(v)
		}
		for _, kv := range [][2]string{{"calendar", "ca"}, {"collation", "co"}, {"hourCycle", "hc"}, {"caseFirst", "kf"}, {"numeric", "kn"}, {"numberingSystem", "nu"}} {
			var val string
			if kv[0] == "numeric" {
				switch boolOption(o, "numeric") {
				case 1:
					val = "false"
				case 2:
					val = ""
					t.setKeyword("kn", "")
				}
				if val == "" {
					continue
				}
			} else {
				var values []string
				switch kv[0] {
				case "hourCycle":
					values = []string{"h11", "h12", "h23", "h24"}
				case "caseFirst":
					values = []string{"upper", "lower", "false"}
				}
				val = e.stringOption(o, kv[0], "Intl.Locale", values, "")
				if val == "" {
					continue
				}
				if !isWellFormedType(val) {
					e.throwRange("Incorrect locale information provided")
				}
			}
			t.setKeyword(kv[1], asciiLower(val))
		}
		t.canonicalize(s)
		return e.instance("Locale", &localeObject{tag: t}, proto)
	})
	get := func(name string, f func(t langTag) goja.Value) {
		e.getter(proto, name, func(call goja.FunctionCall) goja.Value {
			return f(e.receiver(call, "Locale", name).state.(*localeObject).tag)
		})
	}
	str := func(s string) goja.Value {
		if s == "" {
			return goja.Undefined()
		}
		return e.rt.ToValue(s)
	}
	kw := func(key string) func(t langTag) goja.Value {
		return func(t langTag) goja.Value {
			v, ok := t.keyword(key)
			if !ok {
				return goja.Undefined()
			}
			return e.rt.ToValue(v)
		}
	}
	get("baseName", func(t langTag) goja.Value { return e.rt.ToValue(t.baseName()) })
	get("language", func(t langTag) goja.Value { return e.rt.ToValue(t.lang) })
	get("script", func(t langTag) goja.Value { return str(t.script) })
	get("region", func(t langTag) goja.Value { return str(t.region) })
	get("calendar", kw("ca"))
	get("collation", kw("co"))
	get("hourCycle", kw("hc"))
	get("caseFirst", kw("kf"))
	get("numberingSystem", kw("nu"))
	get("numeric", func(t langTag) goja.Value {
		v, ok := t.keyword("kn")
		return e.rt.ToValue(ok && (v == "" || v == "true"))
	})
	e.method(proto, "toString", 0, func(call goja.FunctionCall) goja.Value {
		return e.rt.ToValue(e.receiver(call, "Locale", "toString").state.(*localeObject).tag.String())
	})
	e.method(proto, "maximize", 0, func(call goja.FunctionCall) goja.Value {
		t := e.receiver(call, "Locale", "maximize").state.(*localeObject).tag
		return e.instance("Locale", &localeObject{tag: maximize(s, t)}, proto)
	})
	e.method(proto, "minimize", 0, func(call goja.FunctionCall) goja.Value {
		t := e.receiver(call, "Locale", "minimize").state.(*localeObject).tag
		return e.instance("Locale", &localeObject{tag: minimize(s, t)}, proto)
	})
}

// maximize is UTS 35's Add Likely Subtags.
func maximize(s *supplementalData, t langTag) langTag {
	lang := t.lang
	if lang == "und" {
		lang = ""
	}
	try := []string{}
	if t.script != "" && t.region != "" {
		try = append(try, join3(lang, t.script, t.region))
	}
	if t.region != "" {
		try = append(try, join3(lang, "", t.region))
	}
	if t.script != "" {
		try = append(try, join3(lang, t.script, ""))
	}
	try = append(try, join3(lang, "", ""))
	for _, k := range try {
		likely, ok := s.LikelySubtags[k]
		if !ok {
			continue
		}
		parts := strings.Split(likely, "-")
		if len(parts) != 3 {
			continue
		}
		out := t
		if out.lang == "und" {
			out.lang = parts[0]
		}
		if out.script == "" {
			out.script = parts[1]
		}
		if out.region == "" {
			out.region = parts[2]
		}
		return out
	}
	return t
}

func join3(lang, script, region string) string {
	if lang == "" {
		lang = "und"
	}
	out := lang
	if script != "" {
		out += "-" + script
	}
	if region != "" {
		out += "-" + region
	}
	return out
}

// minimize is UTS 35's Remove Likely Subtags (favoring the region).
func minimize(s *supplementalData, t langTag) langTag {
	max := maximize(s, t)
	for _, trial := range []langTag{{lang: max.lang}, {lang: max.lang, region: max.region}, {lang: max.lang, script: max.script}} {
		m := maximize(s, trial)
		if m.lang == max.lang && m.script == max.script && m.region == max.region {
			out := t
			out.lang, out.script, out.region = trial.lang, trial.script, trial.region
			return out
		}
	}
	return t
}

// supportedValuesOf is Intl.supportedValuesOf: what this implementation supports.
func (e *env) supportedValuesOf(call goja.FunctionCall) goja.Value {
	key := e.toString(call.Argument(0))
	s := mustSupplemental()
	var vals []string
	switch key {
	case "calendar":
		vals = []string{"gregory"}
	case "collation":
		seen := map[string]bool{}
		for _, ts := range collationTypes {
			for _, t := range ts {
				if !seen[t] && t != "search" {
					seen[t] = true
					vals = append(vals, t)
				}
			}
		}
		vals = append(vals, "default")
	case "currency":
		for c := range s.CurrencyDigits {
			vals = append(vals, c)
		}
		if en, err := loadLocale("en"); err == nil {
			for c := range en.Numbers.Currencies {
				if _, ok := s.CurrencyDigits[c]; !ok && len(c) == 3 {
					vals = append(vals, c)
				}
			}
		}
	case "numberingSystem":
		for n := range s.NumberingSystems {
			vals = append(vals, n)
		}
	case "timeZone":
		seen := map[string]bool{}
		for _, c := range s.ZoneIDs {
			if c == "Etc/UTC" || c == "Etc/GMT" {
				c = "UTC"
			}
			if !seen[c] && loadLocation(c) != nil {
				seen[c] = true
				vals = append(vals, c)
			}
		}
	case "unit":
		for u := range sanctionedUnits {
			vals = append(vals, u)
		}
	default:
		e.throwRange("Invalid key : %s", clip(key))
	}
	sort.Strings(vals)
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return e.rt.NewArray(out...)
}
