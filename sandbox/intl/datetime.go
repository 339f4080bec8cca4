package intl

import (
	"cmp"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// dateOptions are a DateTimeFormat's options as read (ECMA-402 CreateDateTimeFormat).
type dateOptions struct {
	calendar, nu       string
	hour12             int // 0 undefined, 1 false, 2 true
	hourCycle          string
	timeZone           string // canonical id
	weekday, era       string
	year, month, day   string
	dayPeriod          string
	hour               string
	minute, second     string
	fractional         int
	timeZoneName       string
	dateStyle          string
	timeStyle          string
	required, default_ string
}

// dateFormat is a resolved, immutable DateTimeFormat, shared by every runtime.
type dateFormat struct {
	locale    string
	calendar  string
	nu        string
	zone      *zone
	ld        *localeData
	dataTag   string
	region    string
	pattern   string
	toks      []patternToken
	skeleton  string // the request skeleton (for formatRange)
	hourCycle string // "" when the pattern has no hour
	opt       dateOptions
	digits    digitSet
	decimal   string
	gen       *generator
}

var (
	dateFormatCache sync.Map
	dateCacheSize   atomic.Int64
)

// dateComponents are the component options in the order ECMA-402 reads them, each with its
// values and its field of dateOptions (nil for fractionalSecondDigits, a number).
var dateComponents = []struct {
	name   string
	values []string
	field  func(*dateOptions) *string
}{
	{"weekday", []string{"narrow", "short", "long"}, func(o *dateOptions) *string { return &o.weekday }},
	{"era", []string{"narrow", "short", "long"}, func(o *dateOptions) *string { return &o.era }},
	{"year", []string{"2-digit", "numeric"}, func(o *dateOptions) *string { return &o.year }},
	{"month", []string{"2-digit", "numeric", "narrow", "short", "long"}, func(o *dateOptions) *string { return &o.month }},
	{"day", []string{"2-digit", "numeric"}, func(o *dateOptions) *string { return &o.day }},
	{"dayPeriod", []string{"narrow", "short", "long"}, func(o *dateOptions) *string { return &o.dayPeriod }},
	{"hour", []string{"2-digit", "numeric"}, func(o *dateOptions) *string { return &o.hour }},
	{"minute", []string{"2-digit", "numeric"}, func(o *dateOptions) *string { return &o.minute }},
	{"second", []string{"2-digit", "numeric"}, func(o *dateOptions) *string { return &o.second }},
	{"fractionalSecondDigits", nil, nil},
	{"timeZoneName", []string{"short", "long", "shortOffset", "longOffset", "shortGeneric", "longGeneric"}, func(o *dateOptions) *string { return &o.timeZoneName }},
}

// dateFormatFor reads a DateTimeFormat's options in ECMA-402's order and returns the
// (cached) formatter. required and defaults are ToDateTimeOptions' ("any"/"date"/"time",
// "date"/"time"/"all").
func (e *env) dateFormatFor(locales, options goja.Value, required, defaults string) *dateFormat {
	requested := e.canonicalizeLocaleList(locales)
	o := e.coerceOptions(options)
	opt := dateOptions{required: required, default_: defaults}
	e.readDateLocaleOptions(o, &opt)
	opt.timeZone = e.timeZoneOption(o)
	explicit := e.readDateComponents(o, &opt)
	e.stringOption(o, "formatMatcher", dateService, []string{"basic", "best fit"}, "best fit")
	opt.dateStyle = e.stringOption(o, "dateStyle", dateService, []string{"full", "long", "medium", "short"}, "")
	opt.timeStyle = e.stringOption(o, "timeStyle", dateService, []string{"full", "long", "medium", "short"}, "")
	if opt.dateStyle != "" || opt.timeStyle != "" {
		e.checkDateStyles(&opt, explicit)
	} else {
		opt.addDefaultComponents()
	}
	if opt.timeZone == "" {
		opt.timeZone = e.defaultZone().id
	}
	return e.cachedDateFormat(requested, opt)
}

const dateService = "Intl.DateTimeFormat"

// readDateLocaleOptions reads localeMatcher, calendar, numberingSystem, hour12 and hourCycle.
func (e *env) readDateLocaleOptions(o *goja.Object, opt *dateOptions) {
	e.localeMatcher(o, dateService)
	opt.calendar = e.stringOption(o, "calendar", dateService, nil, "")
	if opt.calendar != "" && !isWellFormedType(opt.calendar) {
		e.throwRange("Invalid calendar : %s", clip(opt.calendar))
	}
	opt.nu = e.stringOption(o, "numberingSystem", dateService, nil, "")
	if opt.nu != "" && !isWellFormedType(opt.nu) {
		e.throwRange("Invalid numberingSystem : %s", clip(opt.nu))
	}
	opt.calendar, opt.nu = asciiLower(opt.calendar), asciiLower(opt.nu)
	opt.hour12 = boolOption(o, "hour12")
	opt.hourCycle = e.stringOption(o, "hourCycle", dateService, []string{"h11", "h12", "h23", "h24"}, "")
	if opt.hour12 != 0 {
		opt.hourCycle = ""
	}
}

// timeZoneOption is the canonical id of the timeZone option, "" when it is undefined.
func (e *env) timeZoneOption(o *goja.Object) string {
	tz := getValue(o, "timeZone")
	if goja.IsUndefined(tz) {
		return ""
	}
	name := e.toString(tz)
	z, ok := resolveZone(name)
	if !ok {
		e.throwRange("Invalid time zone specified: %s", clip(name))
	}
	return z.id
}

// readDateComponents reads the component options (dateComponents) and returns the name of
// the first one set, "" when none is.
func (e *env) readDateComponents(o *goja.Object, opt *dateOptions) (explicit string) {
	for _, c := range dateComponents {
		var v string
		if c.field == nil {
			n := e.numberOption(o, c.name, 1, 3, 0)
			opt.fractional = n
			if n != 0 {
				v = "x"
			}
		} else {
			v = e.stringOption(o, c.name, dateService, c.values, "")
			*c.field(opt) = v
		}
		if v != "" && explicit == "" {
			explicit = c.name
		}
	}
	return explicit
}

// checkDateStyles throws when dateStyle or timeStyle is set with an explicit component or
// without the style required.
func (e *env) checkDateStyles(opt *dateOptions, explicit string) {
	if explicit != "" {
		style := "dateStyle"
		if opt.dateStyle == "" {
			style = "timeStyle"
		}
		e.throwType("Can't set option %s when %s is used", explicit, style)
	}
	if opt.required == "date" && opt.dateStyle == "" {
		e.throwType("Invalid option : timeStyle")
	}
	if opt.required == "time" && opt.timeStyle == "" {
		e.throwType("Invalid option : dateStyle")
	}
}

// addDefaultComponents sets the default components when none of those required is set
// (ToDateTimeOptions).
func (opt *dateOptions) addDefaultComponents() {
	required, defaults := opt.required, opt.default_
	if (required == "date" || required == "any") && (opt.weekday != "" || opt.year != "" || opt.month != "" || opt.day != "") {
		return
	}
	if (required == "time" || required == "any") && (opt.dayPeriod != "" || opt.hour != "" || opt.minute != "" || opt.second != "" || opt.fractional != 0) {
		return
	}
	if defaults == "date" || defaults == "all" {
		opt.year, opt.month, opt.day = "numeric", "numeric", "numeric"
	}
	if defaults == "time" || defaults == "all" {
		opt.hour, opt.minute, opt.second = "numeric", "numeric", "numeric"
	}
}

// cachedDateFormat is the formatter of the requested locales and opt, from the cache (which
// holds at most maxCachedFormats) when there.
func (e *env) cachedDateFormat(requested []langTag, opt dateOptions) *dateFormat {
	var key strings.Builder
	key.WriteString(e.localesKey(requested))
	b, _ := json.Marshal([]any{opt.calendar, opt.nu, opt.hour12, opt.hourCycle, opt.timeZone, opt.weekday, opt.era, opt.year,
		opt.month, opt.day, opt.dayPeriod, opt.hour, opt.minute, opt.second, opt.fractional, opt.timeZoneName,
		opt.dateStyle, opt.timeStyle})
	key.Write(b)
	k := key.String()
	if f, ok := dateFormatCache.Load(k); ok {
		return f.(*dateFormat)
	}
	f := e.newDateFormat(requested, opt)
	if dateCacheSize.Load() < maxCachedFormats {
		if _, loaded := dateFormatCache.LoadOrStore(k, f); !loaded {
			dateCacheSize.Add(1)
		}
	}
	return f
}

// defaultZone is the runtime's default time zone (Options.TimeZone, else UTC).
func (e *env) defaultZone() *zone {
	if e.opts.TimeZone != "" {
		if z, ok := resolveZone(e.opts.TimeZone); ok {
			return z
		}
	}
	z, _ := resolveZone("UTC")
	return z
}

var hourCycleChar = map[string]byte{"h11": 'K', "h12": 'h', "h23": 'H', "h24": 'k'}

func hourCycleOf(c byte) string {
	switch c {
	case 'K':
		return "h11"
	case 'h':
		return "h12"
	case 'H':
		return "h23"
	case 'k':
		return "h24"
	}
	return ""
}

// regionOf is the region a locale's regional preferences come from: its own, or its
// language's likely one.
func regionOf(s *supplementalData, t langTag) string {
	if t.region != "" {
		return t.region
	}
	for _, k := range []string{t.lang + "-" + t.script, t.lang} {
		if likely, ok := s.LikelySubtags[k]; ok {
			parts := strings.Split(likely, "-")
			return parts[len(parts)-1]
		}
	}
	return "001"
}

func (e *env) newDateFormat(requested []langTag, opt dateOptions) *dateFormat {
	s := mustSupplemental()
	avail := generalAvailable(s)
	keys := []keySpec{
		{key: "ca", option: opt.calendar, hasOpt: opt.calendar != "",
			supports: func(_, v string) bool { return v == "gregory" },
			def:      func(string) string { return "gregory" }},
		{key: "hc", option: opt.hourCycle, hasOpt: opt.hourCycle != "",
			supports: func(_, v string) bool { _, ok := hourCycleChar[v]; return ok },
			def:      func(string) string { return "" }},
		numberingSystemKey(opt.nu, opt.nu != ""),
	}
	r := e.resolveLocale(requested, avail, keys)
	ld, err := loadLocale(r.data)
	if err != nil {
		panic(err)
	}
	f := &dateFormat{ld: ld, dataTag: r.data, calendar: "gregory", opt: opt}
	f.region = regionOf(s, r.tag)
	f.zone, _ = resolveZone(opt.timeZone)
	f.nu = r.values["nu"]
	nf := &numberFormat{ld: ld}
	nf.setSystem(f.nu)
	f.digits = nf.digits
	f.decimal = nf.sym["decimal"]
	// The hour cycle: the locale's preference (CLDR timeData), the -u-hc keyword, the
	// hourCycle option, or hour12 mapped as V8 11 maps it.
	prefChar := byte('h')
	if td, ok := s.HourCycles[f.region]; ok && td.Preferred != "" {
		prefChar = td.Preferred[0]
	} else if td, ok := s.HourCycles["001"]; ok && td.Preferred != "" {
		prefChar = td.Preferred[0]
	}
	hcDefault := hourCycleOf(prefChar)
	if v := r.values["hc"]; v != "" {
		hcDefault = v
	}
	hc := ""
	if v := r.values["hc"]; v != "" {
		hc = v
	}
	// hour12 picks h12 or h23 whatever the locale's default cycle, as V8 does since ECMA-402
	// took the hour cycle from hour12 alone (Node 22 and later).
	switch opt.hour12 {
	case 2:
		hc = "h12"
	case 1:
		hc = "h23"
	}
	genChar := hourCycleChar[hcDefault]
	f.gen = newGenerator(r.data, ld, genChar)
	// The resolved locale keeps -u-hc only when it is what the options chose.
	if opt.hour12 != 0 {
		r.tag.uKeys = removeKeyword(r.tag.uKeys, "hc")
	}
	f.locale = r.tag.String()

	greg := &ld.Gregorian
	if opt.dateStyle != "" || opt.timeStyle != "" {
		var date, tm string
		if opt.dateStyle != "" {
			date = greg.DateFormats[opt.dateStyle]
		}
		if opt.timeStyle != "" {
			tm = greg.TimeFormats[opt.timeStyle]
			if hc != "" && hourCycleOf(hourCharOf(tm)) != hc {
				tm = f.gen.bestPattern(withHourChar(tm, hourCycleChar[hc]))
			}
		}
		switch {
		case date != "" && tm != "":
			glue := greg.AtTime[opt.dateStyle]
			if glue == "" {
				glue = greg.DateTimeFormats[opt.dateStyle]
			}
			f.pattern = strings.NewReplacer("{1}", date, "{0}", tm).Replace(glue)
		case date != "":
			f.pattern = date
		default:
			f.pattern = tm
		}
	} else {
		f.skeleton = skeletonFor(opt, hc)
		f.pattern = f.gen.bestPattern(f.skeleton)
	}
	if hc != "" {
		f.pattern = replaceHourCycle(f.pattern, hourCycleChar[hc])
	}
	f.toks = parseDatePattern(f.pattern)
	for _, t := range f.toks {
		if hc := hourCycleOf(t.char); hc != "" {
			f.hourCycle = hc
		}
	}
	return f
}

func removeKeyword(ks []keyword, key string) []keyword {
	var out []keyword
	for _, k := range ks {
		if k.key != key {
			out = append(out, k)
		}
	}
	return out
}

func hourCharOf(pattern string) byte {
	for _, t := range parseDatePattern(pattern) {
		if hourCycleOf(t.char) != "" {
			return t.char
		}
	}
	return 0
}

// withHourChar turns a pattern into a skeleton with its hour letter replaced.
func withHourChar(pattern string, c byte) string {
	var b strings.Builder
	for _, t := range parseDatePattern(pattern) {
		if t.char == 0 || t.char == 'a' || t.char == 'b' || t.char == 'B' {
			continue
		}
		ch := t.char
		if hourCycleOf(ch) != "" {
			ch = c
		}
		b.WriteString(strings.Repeat(string(ch), t.count))
	}
	return b.String()
}

// skeletonFor is the skeleton V8 builds from the component options.
func skeletonFor(o dateOptions, hc string) string {
	var b strings.Builder
	w := func(s string) { b.WriteString(s) }
	switch o.weekday {
	case "narrow":
		w("EEEEE")
	case "short":
		w("EEE")
	case "long":
		w("EEEE")
	}
	switch o.era {
	case "narrow":
		w("GGGGG")
	case "short":
		w("GGG")
	case "long":
		w("GGGG")
	}
	switch o.year {
	case "2-digit":
		w("yy")
	case "numeric":
		w("y")
	}
	switch o.month {
	case "2-digit":
		w("MM")
	case "numeric":
		w("M")
	case "narrow":
		w("MMMMM")
	case "short":
		w("MMM")
	case "long":
		w("MMMM")
	}
	switch o.day {
	case "2-digit":
		w("dd")
	case "numeric":
		w("d")
	}
	switch o.dayPeriod {
	case "narrow":
		w("BBBBB")
	case "short":
		w("B")
	case "long":
		w("BBBB")
	}
	if o.hour != "" {
		c := "j"
		if hc != "" {
			c = string(hourCycleChar[hc])
		}
		if o.hour == "2-digit" {
			c += c
		}
		w(c)
	}
	switch o.minute {
	case "2-digit":
		w("mm")
	case "numeric":
		w("m")
	}
	switch o.second {
	case "2-digit":
		w("ss")
	case "numeric":
		w("s")
	}
	if o.fractional > 0 {
		w(strings.Repeat("S", o.fractional))
	}
	switch o.timeZoneName {
	case "short":
		w("z")
	case "long":
		w("zzzz")
	case "shortOffset":
		w("O")
	case "longOffset":
		w("OOOO")
	case "shortGeneric":
		w("v")
	case "longGeneric":
		w("vvvv")
	}
	return b.String()
}

// replaceHourCycle is V8's ReplaceHourCycleInPattern.
func replaceHourCycle(pattern string, c byte) string {
	var b strings.Builder
	replace := true
	var last byte
	for i := 0; i < len(pattern); i++ {
		ch := pattern[i]
		switch ch {
		case '\'':
			replace = !replace
			b.WriteByte(ch)
		case 'H', 'h', 'K', 'k':
			if replace && last == 'd' {
				b.WriteByte(' ')
			}
			if replace {
				b.WriteByte(c)
			} else {
				b.WriteByte(ch)
			}
		default:
			b.WriteByte(ch)
		}
		last = ch
	}
	return b.String()
}

// ---- formatting ----

const maxTimeValue = 8.64e15

// format formats the time value ms as format() and the Date toLocale* methods do: V8
// writes CLDR's narrow no-break space (before AM/PM) as a plain space there, for the text
// parsers written before CLDR 42 (formatToParts and formatRange keep it).
func (f *dateFormat) format(ms float64) string {
	return strings.ReplaceAll(joinParts(f.dateParts(ms)), "\u202f", " ")
}

// dateParts formats the time value ms.
func (f *dateFormat) dateParts(ms float64) []part {
	t := timeOf(ms, f.zone.loc)
	return f.partsOf(f.toks, t, ms)
}

func timeOf(ms float64, loc *time.Location) time.Time {
	return time.UnixMilli(int64(ms)).In(loc)
}

func (f *dateFormat) num(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return f.digits.local(s)
}

func (f *dateFormat) partsOf(toks []patternToken, t time.Time, ms float64) []part {
	var out []part
	add := func(typ, v string) {
		if typ == "literal" && len(out) > 0 && out[len(out)-1].typ == "literal" {
			out[len(out)-1].value += v
			return
		}
		out = append(out, part{typ, v})
	}
	greg := &f.ld.Gregorian
	year := t.Year()
	for _, tok := range toks {
		n := tok.count
		switch tok.char {
		case 0:
			add("literal", tok.literal)
		case 'G':
			era := "1"
			if year <= 0 {
				era = "0"
			}
			key := "eraAbbr"
			if n == 4 {
				key = "eraNames"
			} else if n == 5 {
				key = "eraNarrow"
			}
			add("era", greg.Eras[key][era])
		case 'y', 'Y', 'u':
			y := year
			if y <= 0 && tok.char == 'y' {
				y = 1 - y
			}
			if n == 2 {
				add("year", f.num(y%100, 2))
			} else {
				add("year", f.num(y, n))
			}
		case 'M', 'L':
			m := int(t.Month())
			switch {
			case n <= 2:
				add("month", f.num(m, n))
			default:
				ctx := "format"
				if tok.char == 'L' {
					ctx = "stand-alone"
				}
				add("month", textWidth(greg.Months, ctx, n, strconv.Itoa(m)))
			}
		case 'd':
			add("day", f.num(t.Day(), n))
		case 'E', 'c', 'e':
			key := [...]string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}[t.Weekday()]
			if (tok.char == 'c' || tok.char == 'e') && n <= 2 {
				add("weekday", f.num(int(t.Weekday())+1, n))
				break
			}
			ctx := "format"
			if tok.char == 'c' {
				ctx = "stand-alone"
			}
			if n < 3 {
				n = 3
			}
			add("weekday", textWidth(greg.Days, ctx, n, key))
		case 'a':
			p := "am"
			if t.Hour() >= 12 {
				p = "pm"
			}
			add("dayPeriod", textWidth(greg.DayPeriods, "format", n, p))
		case 'b', 'B':
			add("dayPeriod", f.flexibleDayPeriod(t, n))
		case 'h':
			add("hour", f.num(cmp.Or(t.Hour()%12, 12), n)) // 1-12
		case 'H':
			add("hour", f.num(t.Hour(), n))
		case 'K':
			add("hour", f.num(t.Hour()%12, n))
		case 'k':
			add("hour", f.num(cmp.Or(t.Hour(), 24), n)) // 1-24
		case 'm':
			add("minute", f.num(t.Minute(), n))
		case 's':
			add("second", f.num(t.Second(), n))
		case 'S':
			msec := int(math.Mod(ms, 1000))
			if msec < 0 {
				msec += 1000
			}
			digits := pad3(msec)
			for len(digits) < n {
				digits += "0"
			}
			add("fractionalSecond", f.digits.local(digits[:n]))
		case 'z', 'O', 'v', 'V', 'Z', 'X', 'x':
			c := tok.char
			if c != 'z' && c != 'v' {
				c = 'O'
			}
			add("timeZoneName", f.zoneName(c, n, t))
		case 'Q', 'q':
			add("quarter", f.num((int(t.Month())-1)/3+1, n))
		default:
			add("literal", strings.Repeat(string(tok.char), n))
		}
	}
	return out
}

func pad3(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 3 {
		s = "0" + s
	}
	return s
}

// textWidth picks a month, day or day-period name: 3 letters abbreviated, 4 wide, 5
// narrow, 6 short (falling back to abbreviated).
func textWidth(names map[string]map[string]map[string]string, ctx string, n int, key string) string {
	width := "abbreviated"
	switch n {
	case 4:
		width = "wide"
	case 5:
		width = "narrow"
	case 6:
		width = "short"
	}
	for _, c := range []string{ctx, "format", "stand-alone"} {
		if v := names[c][width][key]; v != "" {
			return v
		}
		if v := names[c]["abbreviated"][key]; v != "" && width == "short" {
			return v
		}
	}
	return key
}

// flexibleDayPeriod is the B (and b) field: CLDR's day period rules for the language.
func (f *dateFormat) flexibleDayPeriod(t time.Time, n int) string {
	s := mustSupplemental()
	lang := f.dataTag
	if i := strings.IndexByte(lang, '-'); i > 0 {
		lang = lang[:i]
	}
	rules := s.DayPeriods[lang]
	minutes := t.Hour()*60 + t.Minute()
	hhmm := func(v string) int {
		h, m, _ := strings.Cut(v, ":")
		a, _ := strconv.Atoi(h)
		b, _ := strconv.Atoi(m)
		return a*60 + b
	}
	greg := &f.ld.Gregorian
	if t.Minute() == 0 && t.Second() == 0 {
		for name, r := range rules {
			if r.At != "" && hhmm(r.At) == minutes && t.Second() == 0 {
				if v := textWidth(greg.DayPeriods, "format", n, name); v != name {
					return v
				}
			}
		}
	}
	for name, r := range rules {
		if r.From == "" {
			continue
		}
		from, before := hhmm(r.From), hhmm(r.Before)
		in := minutes >= from && minutes < before
		if from > before {
			in = minutes >= from || minutes < before
		}
		if in {
			return textWidth(greg.DayPeriods, "format", n, name)
		}
	}
	p := "am"
	if t.Hour() >= 12 {
		p = "pm"
	}
	return textWidth(greg.DayPeriods, "format", n, p)
}

// ---- JavaScript ----

// timeValue is ECMA-402's date argument handling: undefined → now; else ToNumber, which
// must be a valid time value.
func (e *env) timeValue(v goja.Value) float64 {
	if v == nil || goja.IsUndefined(v) {
		now := time.Now
		if e.opts.Now != nil {
			now = e.opts.Now
		}
		return float64(now().UnixMilli())
	}
	x := v.ToFloat()
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxTimeValue {
		e.throwRange("Invalid time value")
	}
	return math.Trunc(x)
}

func (e *env) installDateTimeFormat() {
	installFormat(e, formatService[*dateFormat, float64]{
		name: "DateTimeFormat",
		construct: func(locales, options goja.Value) *dateFormat {
			return e.dateFormatFor(locales, options, "any", "date")
		},
		value:  e.timeValue,
		format: (*dateFormat).format,
		parts:  (*dateFormat).dateParts,
		rangeParts: func(f *dateFormat, start, end goja.Value) []rangePart {
			if goja.IsUndefined(start) || goja.IsUndefined(end) {
				e.throwType("startDate or endDate is undefined")
			}
			return f.rangeParts(e.timeValue(start), e.timeValue(end))
		},
		resolvedOptions: e.dateResolvedOptions,
	})
}

func (e *env) dateResolvedOptions(f *dateFormat) *goja.Object {
	kv := []any{"locale", f.locale, "calendar", f.calendar, "numberingSystem", f.nu, "timeZone", f.zone.id}
	if f.hourCycle != "" {
		kv = append(kv, "hourCycle", f.hourCycle, "hour12", f.hourCycle == "h11" || f.hourCycle == "h12")
	}
	o := f.opt
	if o.dateStyle != "" || o.timeStyle != "" {
		if o.dateStyle != "" {
			kv = append(kv, "dateStyle", o.dateStyle)
		}
		if o.timeStyle != "" {
			kv = append(kv, "timeStyle", o.timeStyle)
		}
		return e.object(kv...)
	}
	// The components as the pattern has them (V8 reads them back from the pattern).
	comp := map[string]string{}
	for _, t := range f.toks {
		n := t.count
		switch t.char {
		case 'E', 'c', 'e':
			comp["weekday"] = pick(n, map[int]string{4: "long", 5: "narrow"}, "short")
		case 'G':
			comp["era"] = pick(n, map[int]string{4: "long", 5: "narrow"}, "short")
		case 'y':
			comp["year"] = pick(n, map[int]string{2: "2-digit"}, "numeric")
		case 'M', 'L':
			comp["month"] = pick(n, map[int]string{1: "numeric", 2: "2-digit", 3: "short", 4: "long", 5: "narrow"}, "numeric")
		case 'd':
			comp["day"] = pick(n, map[int]string{2: "2-digit"}, "numeric")
		case 'B', 'b':
			comp["dayPeriod"] = pick(n, map[int]string{4: "long", 5: "narrow"}, "short")
		case 'h', 'H', 'k', 'K':
			comp["hour"] = pick(n, map[int]string{2: "2-digit"}, "numeric")
		case 'm':
			comp["minute"] = pick(n, map[int]string{2: "2-digit"}, "numeric")
		case 's':
			comp["second"] = pick(n, map[int]string{2: "2-digit"}, "numeric")
		case 'S':
			comp["fractionalSecondDigits"] = strconv.Itoa(n)
		case 'z':
			comp["timeZoneName"] = pick(n, map[int]string{4: "long"}, "short")
		case 'O':
			comp["timeZoneName"] = pick(n, map[int]string{4: "longOffset"}, "shortOffset")
		case 'v':
			comp["timeZoneName"] = pick(n, map[int]string{4: "longGeneric"}, "shortGeneric")
		}
	}
	for _, c := range dateComponents {
		if v, ok := comp[c.name]; ok {
			if c.name == "fractionalSecondDigits" {
				n, _ := strconv.Atoi(v)
				kv = append(kv, c.name, n)
			} else {
				kv = append(kv, c.name, v)
			}
		}
	}
	return e.object(kv...)
}

func pick(n int, m map[int]string, def string) string {
	if v, ok := m[n]; ok {
		return v
	}
	return def
}
