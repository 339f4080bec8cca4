package intl

import (
	"sort"
	"strings"
	"sync"
)

// This file is a Go rendering of what ICU's DateTimePatternGenerator does with CLDR's
// availableFormats, which is how V8 turns DateTimeFormat's component options into a
// pattern: a skeleton is matched against the locale's skeletons by a field distance, the
// match's field widths are adjusted to the request, and date and time halves are matched
// apart and joined with the locale's date-time glue when no single skeleton covers both.

// Pattern fields, in ICU's UDateTimePatternField order.
const (
	fEra = iota
	fYear
	fQuarter
	fMonth
	fWeekOfYear
	fWeekOfMonth
	fWeekday
	fDayOfYear
	fDayOfWeekInMonth
	fDay
	fDayPeriod
	fHour
	fMinute
	fSecond
	fFractional
	fZone
	fieldCount
)

const dateMask = 1<<fDayPeriod - 1

const (
	dtNarrow  = -0x101
	dtShorter = -0x102
	dtShort   = -0x103
	dtLong    = -0x104
	dtNumeric = 0x100
	dtDelta   = 0x10
)

type dtType struct {
	char   byte
	field  int
	typ    int
	minLen int
	maxLen int
}

// dtTypes is ICU's dtTypes table (the letters ECMA-402 patterns use).
var dtTypes = []dtType{
	{'G', fEra, dtShort, 1, 3}, {'G', fEra, dtLong, 4, 4}, {'G', fEra, dtNarrow, 5, 5},
	{'y', fYear, dtNumeric, 1, 20}, {'Y', fYear, dtNumeric + dtDelta, 1, 20},
	{'u', fYear, dtNumeric + 2*dtDelta, 1, 20}, {'r', fYear, dtNumeric + 3*dtDelta, 1, 20},
	{'U', fYear, dtShort, 1, 3}, {'U', fYear, dtLong, 4, 4}, {'U', fYear, dtNarrow, 5, 5},
	{'Q', fQuarter, dtNumeric, 1, 2}, {'Q', fQuarter, dtShort, 3, 3}, {'Q', fQuarter, dtLong, 4, 4}, {'Q', fQuarter, dtNarrow, 5, 5},
	{'q', fQuarter, dtNumeric + dtDelta, 1, 2}, {'q', fQuarter, dtShort - dtDelta, 3, 3}, {'q', fQuarter, dtLong - dtDelta, 4, 4}, {'q', fQuarter, dtNarrow - dtDelta, 5, 5},
	{'M', fMonth, dtNumeric, 1, 2}, {'M', fMonth, dtShort, 3, 3}, {'M', fMonth, dtLong, 4, 4}, {'M', fMonth, dtNarrow, 5, 5},
	{'L', fMonth, dtNumeric + dtDelta, 1, 2}, {'L', fMonth, dtShort - dtDelta, 3, 3}, {'L', fMonth, dtLong - dtDelta, 4, 4}, {'L', fMonth, dtNarrow - dtDelta, 5, 5},
	{'l', fMonth, dtNumeric + dtDelta, 1, 1},
	{'w', fWeekOfYear, dtNumeric, 1, 2}, {'W', fWeekOfMonth, dtNumeric, 1, 1},
	{'E', fWeekday, dtShort, 1, 3}, {'E', fWeekday, dtLong, 4, 4}, {'E', fWeekday, dtNarrow, 5, 5}, {'E', fWeekday, dtShorter, 6, 6},
	{'c', fWeekday, dtNumeric + 2*dtDelta, 1, 2}, {'c', fWeekday, dtShort - 2*dtDelta, 3, 3}, {'c', fWeekday, dtLong - 2*dtDelta, 4, 4}, {'c', fWeekday, dtNarrow - 2*dtDelta, 5, 5}, {'c', fWeekday, dtShorter - 2*dtDelta, 6, 6},
	{'e', fWeekday, dtNumeric + dtDelta, 1, 2}, {'e', fWeekday, dtShort - dtDelta, 3, 3}, {'e', fWeekday, dtLong - dtDelta, 4, 4}, {'e', fWeekday, dtNarrow - dtDelta, 5, 5}, {'e', fWeekday, dtShorter - dtDelta, 6, 6},
	{'d', fDay, dtNumeric, 1, 2}, {'g', fDay, dtNumeric + dtDelta, 1, 20},
	{'D', fDayOfYear, dtNumeric, 1, 3}, {'F', fDayOfWeekInMonth, dtNumeric, 1, 1},
	{'a', fDayPeriod, dtShort, 1, 3}, {'a', fDayPeriod, dtLong, 4, 4}, {'a', fDayPeriod, dtNarrow, 5, 5},
	{'b', fDayPeriod, dtShort - dtDelta, 1, 3}, {'b', fDayPeriod, dtLong - dtDelta, 4, 4}, {'b', fDayPeriod, dtNarrow - dtDelta, 5, 5},
	{'B', fDayPeriod, dtShort - 3*dtDelta, 1, 3}, {'B', fDayPeriod, dtLong - 3*dtDelta, 4, 4}, {'B', fDayPeriod, dtNarrow - 3*dtDelta, 5, 5},
	{'H', fHour, dtNumeric + 10*dtDelta, 1, 2}, {'k', fHour, dtNumeric + 11*dtDelta, 1, 2},
	{'h', fHour, dtNumeric, 1, 2}, {'K', fHour, dtNumeric + dtDelta, 1, 2},
	{'m', fMinute, dtNumeric, 1, 2}, {'s', fSecond, dtNumeric, 1, 2}, {'A', fSecond, dtNumeric + dtDelta, 1, 1000},
	{'S', fFractional, dtNumeric, 1, 1000},
	{'v', fZone, dtShort - 2*dtDelta, 1, 1}, {'v', fZone, dtLong - 2*dtDelta, 4, 4},
	{'z', fZone, dtShort, 1, 3}, {'z', fZone, dtLong, 4, 4},
	{'Z', fZone, dtNarrow - dtDelta, 1, 3}, {'Z', fZone, dtLong - dtDelta, 4, 4}, {'Z', fZone, dtShort - dtDelta, 5, 5},
	{'O', fZone, dtShort - dtDelta, 1, 1}, {'O', fZone, dtLong - dtDelta, 4, 4},
	{'V', fZone, dtShort - dtDelta, 1, 1}, {'V', fZone, dtLong - dtDelta, 2, 2}, {'V', fZone, dtLong - 1 - dtDelta, 3, 3}, {'V', fZone, dtLong - 2 - dtDelta, 4, 4},
	{'X', fZone, dtNarrow - dtDelta, 1, 1}, {'X', fZone, dtShort - dtDelta, 2, 2}, {'X', fZone, dtLong - dtDelta, 4, 4},
	{'x', fZone, dtNarrow - dtDelta, 1, 1}, {'x', fZone, dtShort - dtDelta, 2, 2}, {'x', fZone, dtLong - dtDelta, 4, 4},
}

// lookupType is ICU's getCanonicalIndex: the row for a letter repeated n times.
func lookupType(c byte, n int) *dtType {
	var best *dtType
	for i := range dtTypes {
		r := &dtTypes[i]
		if r.char != c {
			continue
		}
		best = r
		if r.minLen <= n && (n <= r.maxLen || r.maxLen == 0) {
			return r
		}
		if n < r.minLen {
			return r
		}
	}
	return best
}

// skeleton is ICU's PtnSkeleton: per field, the letter, its count and its type value.
type skeleton struct {
	char  [fieldCount]byte
	count [fieldCount]int
	typ   [fieldCount]int
}

func (s *skeleton) mask() int {
	m := 0
	for i := 0; i < fieldCount; i++ {
		if s.char[i] != 0 {
			m |= 1 << i
		}
	}
	return m
}

func (s *skeleton) String() string {
	var b strings.Builder
	for i := 0; i < fieldCount; i++ {
		for j := 0; j < s.count[i]; j++ {
			b.WriteByte(s.char[i])
		}
	}
	return b.String()
}

// patternToken is a field (letter repeated count times) or literal text.
type patternToken struct {
	char    byte
	count   int
	literal string
}

// fieldType is the dtTypes row of a field token; nil for a literal or a letter with none.
func (t patternToken) fieldType() *dtType {
	if t.char == 0 {
		return nil
	}
	return lookupType(t.char, t.count)
}

// parseDatePattern splits a CLDR date pattern into fields and literals (quotes removed).
func parseDatePattern(p string) []patternToken {
	var toks []patternToken
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, patternToken{literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			j := i + 1
			for j < len(p) {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(p[j])
				j++
			}
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			flush()
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			toks = append(toks, patternToken{char: c, count: j - i})
			i = j
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return toks
}

func formatPattern(toks []patternToken) string {
	var b strings.Builder
	for _, t := range toks {
		if t.char != 0 {
			for j := 0; j < t.count; j++ {
				b.WriteByte(t.char)
			}
			continue
		}
		if needsQuote(t.literal) {
			b.WriteByte('\'')
			b.WriteString(strings.ReplaceAll(t.literal, "'", "''"))
			b.WriteByte('\'')
		} else {
			b.WriteString(t.literal)
		}
	}
	return b.String()
}

func needsQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '\'' {
			return true
		}
	}
	return false
}

// skeletonOf builds the skeleton of a skeleton string or of a pattern's fields, with ICU's
// day-period rule: a 12-hour field implies "a"; a 24-hour field drops any day period.
func skeletonOf(toks []patternToken) skeleton {
	var s skeleton
	for _, t := range toks {
		r := t.fieldType()
		if r == nil || s.char[r.field] != 0 {
			continue
		}
		s.char[r.field] = t.char
		s.count[r.field] = t.count
		typ := r.typ
		if typ > 0 {
			typ += t.count
		}
		s.typ[r.field] = typ
	}
	if h := s.char[fHour]; h != 0 {
		if h == 'h' || h == 'K' {
			if s.char[fDayPeriod] == 0 {
				s.char[fDayPeriod], s.count[fDayPeriod], s.typ[fDayPeriod] = 'a', 1, dtShort
			}
		} else if s.char[fDayPeriod] != 0 {
			s.char[fDayPeriod], s.count[fDayPeriod], s.typ[fDayPeriod] = 0, 0, 0
		}
	}
	return s
}

// distance is ICU's DateTimeMatcher::getDistance: how far trial is from the request,
// counting only the request's fields in include.
func (req *skeleton) distance(trial *skeleton, include int) (dist, missing int) {
	const extraField, missingField = 0x10000, 0x1000
	for i := 0; i < fieldCount; i++ {
		my := 0
		if include&(1<<i) != 0 {
			my = req.typ[i]
		}
		other := trial.typ[i]
		if my == other {
			continue
		}
		switch {
		case my == 0:
			dist += extraField
		case other == 0:
			dist += missingField
			missing |= 1 << i
		default:
			d := my - other
			if d < 0 {
				d = -d
			}
			dist += d
		}
	}
	return dist, missing
}

// dtpgEntry is one pattern of the generator with the skeleton it is found by.
type dtpgEntry struct {
	skel      skeleton
	pattern   string
	specified bool // the skeleton is an availableFormats key (not derived from the pattern)
}

// generator is a locale's pattern generator data.
type generator struct {
	entries     []dtpgEntry
	hourChar    byte // the locale's preferred hour letter (h, H, K, k)
	appendItems map[string]string
	fieldNames  map[int]string
	decimal     string
	dateTime    map[string]string // glue by style, from dateTimeFormats-atTime
}

var generatorCache sync.Map // data locale + "/" + hour char → *generator

var appendItemKeys = map[int]string{
	fEra: "Era", fYear: "Year", fQuarter: "Quarter", fMonth: "Month", fWeekOfYear: "Week", fWeekday: "Day-Of-Week",
	fDay: "Day", fHour: "Hour", fMinute: "Minute", fSecond: "Second", fZone: "Timezone",
}

func newGenerator(dataLocale string, ld *localeData, hourChar byte) *generator {
	key := dataLocale + "/" + string(hourChar)
	if g, ok := generatorCache.Load(key); ok {
		return g.(*generator)
	}
	g := &generator{hourChar: hourChar, appendItems: ld.Gregorian.AppendItems, dateTime: map[string]string{}}
	byKey := map[string]int{}
	add := func(pattern string, skel *string, override bool) {
		var s skeleton
		if skel != nil {
			s = skeletonOf(parseDatePattern(*skel))
		} else {
			s = skeletonOf(parseDatePattern(pattern))
		}
		k := s.String()
		if i, ok := byKey[k]; ok {
			if override {
				g.entries[i] = dtpgEntry{skel: s, pattern: pattern, specified: skel != nil}
			}
			return
		}
		byKey[k] = len(g.entries)
		g.entries = append(g.entries, dtpgEntry{skel: s, pattern: pattern, specified: skel != nil})
	}
	for _, c := range "GyQMwWEDFdaHmsSv" {
		add(string(c), nil, false)
	}
	greg := &ld.Gregorian
	for _, style := range []string{"full", "long", "medium", "short"} {
		if p := greg.DateFormats[style]; p != "" {
			add(p, nil, false)
		}
		if p := greg.TimeFormats[style]; p != "" {
			add(p, nil, false)
		}
	}
	keys := make([]string, 0, len(greg.AvailableFormats))
	for k := range greg.AvailableFormats {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		k := k
		add(greg.AvailableFormats[k], &k, true)
	}
	for style, glue := range greg.DateTimeFormats {
		g.dateTime[style] = glue
	}
	for style, glue := range greg.AtTime {
		g.dateTime[style] = glue
	}
	g.fieldNames = map[int]string{}
	for field, name := range map[int]string{fEra: "era", fYear: "year", fQuarter: "quarter", fMonth: "month",
		fWeekOfYear: "week", fWeekday: "weekday", fDay: "day", fDayPeriod: "dayperiod", fHour: "hour",
		fMinute: "minute", fSecond: "second", fZone: "zone"} {
		if fd, ok := ld.Fields[name]; ok && fd.Name != "" {
			g.fieldNames[field] = fd.Name
		}
	}
	if sys := ld.Numbers.Systems[ld.Numbers.NU]; sys != nil {
		g.decimal = sys.Symbols["decimal"]
	}
	if g.decimal == "" {
		g.decimal = "."
	}
	v, _ := generatorCache.LoadOrStore(key, g)
	return v.(*generator)
}

// bestRaw is ICU's getBestRaw.
func (g *generator) bestRaw(req *skeleton, include int) (*dtpgEntry, int, int) {
	bestDist, bestMissing := int(^uint(0)>>1), -1
	var best *dtpgEntry
	for i := range g.entries {
		e := &g.entries[i]
		d, missing := req.distance(&e.skel, include)
		if d < bestDist || d == bestDist && bestMissing < missing {
			bestDist, bestMissing, best = d, missing, e
			if d == 0 {
				break
			}
		}
	}
	return best, bestDist, bestMissing
}

// bestPattern is ICU's getBestPattern with UDATPG_MATCH_HOUR_FIELD_LENGTH, as V8 calls it.
func (g *generator) bestPattern(skel string) string {
	req := skeletonOf(parseDatePattern(g.mapHour(skel)))
	e, dist, missing := g.bestRaw(&req, -1)
	if e != nil && missing == 0 && dist < 0x10000 {
		return g.adjust(e.pattern, e, &req, false)
	}
	needed := req.mask()
	date := g.bestAppending(&req, needed&dateMask)
	tm := g.bestAppending(&req, needed&^dateMask)
	if date == "" {
		return tm
	}
	if tm == "" {
		return date
	}
	return strings.NewReplacer("{1}", date, "{0}", tm).Replace(g.dateTimeGlue(&req))
}

// dateTimeGlue is the pattern that joins a date ({1}) and a time ({0}) for req: the locale's
// dateTimeFormat of the style its month's width calls for.
func (g *generator) dateTimeGlue(req *skeleton) string {
	style := "short"
	switch req.count[fMonth] {
	case 4:
		style = "long"
		if req.char[fWeekday] != 0 {
			style = "full"
		}
	case 3:
		style = "medium"
	}
	if glue := g.dateTime[style]; glue != "" {
		return glue
	}
	return "{1} {0}"
}

// mapHour replaces the skeleton's j by the locale's hour letter (ICU's
// mapSkeletonMetacharacters).
func (g *generator) mapHour(skel string) string {
	n := strings.Count(skel, "j")
	if n == 0 {
		return skel
	}
	hour := strings.Repeat(string(g.hourChar), 1+(n-1)&1)
	if g.hourChar == 'h' || g.hourChar == 'K' {
		hour = "a" + hour
	}
	return strings.ReplaceAll(skel, "j", "") + hour
}

// bestAppending is ICU's getBestAppending: a pattern for the fields in mask, with the
// fields no pattern has added by the locale's appendItems.
func (g *generator) bestAppending(req *skeleton, mask int) string {
	if mask == 0 {
		return ""
	}
	e, _, missing := g.bestRaw(req, mask)
	result := g.adjust(e.pattern, e, req, false)
	last := 0
	for missing != 0 {
		if last == missing {
			break
		}
		const secFrac = 1<<fSecond | 1<<fFractional
		if missing&secFrac == 1<<fFractional && mask&secFrac == secFrac {
			result = g.adjust(result, e, req, true)
			missing &^= 1 << fFractional
			continue
		}
		start := missing
		var e2 *dtpgEntry
		e2, _, missing = g.bestRaw(req, missing)
		temp := g.adjust(e2.pattern, e2, req, false)
		found := start &^ missing
		top := 0
		for i := fieldCount - 1; i >= 0; i-- {
			if found&(1<<i) != 0 {
				top = i
				break
			}
		}
		format := g.appendItems[appendItemKeys[top]]
		if format == "" {
			format = "{0} \u251c{2}: {1}\u2524"
		}
		name := g.fieldNames[top]
		if name == "" {
			name = "F" + itoa(top)
		}
		result = strings.NewReplacer("{0}", result, "{1}", temp, "{2}", quoteLiteral(name)).Replace(format)
		last = missing
	}
	return result
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// adjust is ICU's adjustFieldTypes: the found pattern's fields take the request's widths.
func (g *generator) adjust(pattern string, e *dtpgEntry, req *skeleton, fixFractional bool) string {
	toks := parseDatePattern(pattern)
	for i, t := range toks {
		r := t.fieldType()
		if r == nil {
			continue
		}
		field := r.field
		if fixFractional && field == fSecond {
			frac := patternToken{char: 'S', count: req.count[fFractional]}
			rest := append([]patternToken{{literal: g.decimal}, frac}, toks[i+1:]...)
			toks = append(toks[:i+1], rest...)
			return formatPattern(toks)
		}
		if req.char[field] == 0 {
			continue
		}
		reqChar, reqLen := req.char[field], req.count[field]
		if reqChar == 'E' && reqLen < 3 {
			reqLen = 3
		}
		adjLen := reqLen
		switch {
		case field == fMinute || field == fSecond:
			adjLen = t.count
		case e != nil && e.specified && reqChar != 'c' && reqChar != 'e':
			skelLen := e.skel.count[field]
			patNumeric := r.typ > 0
			skelNumeric := e.skel.typ[field] > 0
			if skelLen == reqLen || patNumeric != skelNumeric {
				adjLen = t.count
			}
		}
		c := reqChar
		if field == fHour || field == fMonth || field == fWeekday || field == fYear && reqChar != 'Y' {
			c = t.char
		}
		if c == 'E' && adjLen < 3 {
			c = 'e'
		}
		if field == fHour && g.hourChar != 0 {
			switch {
			case reqChar == g.hourChar:
				c = g.hourChar
			case reqChar == 'h' && g.hourChar == 'K':
				c = 'K'
			case reqChar == 'H' && g.hourChar == 'k':
				c = 'k'
			case reqChar == 'k' && g.hourChar == 'H':
				c = 'H'
			case reqChar == 'K' && g.hourChar == 'h':
				c = 'h'
			}
		}
		toks[i] = patternToken{char: c, count: adjLen}
	}
	return formatPattern(toks)
}
