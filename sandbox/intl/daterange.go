package intl

import (
	"encoding/json"
	"strings"
	"time"
)

// This file is DateTimeFormat.prototype.formatRange, after ICU's DateIntervalFormat: the
// largest calendar field in which the two dates differ picks one of CLDR's
// intervalFormats for the closest skeleton; the part of that pattern before its first
// repeated field shows the start, the rest the end.

// calendarFields are the calendar fields ICU compares, largest first (era, year, month,
// day, day period, hour, minute, second, fraction), each as the pattern letters that show
// it; the first letter names the field.
var calendarFields = [...]string{"G", "yYu", "ML", "dEce", "abB", "hHkK", "m", "s", "S"}

// largestDifference names the largest calendar field in which a and b (of time values x
// and y) differ, or is 0 when none does.
func largestDifference(a, b time.Time, x, y float64) byte {
	differs := [len(calendarFields)]bool{
		(a.Year() <= 0) != (b.Year() <= 0),
		a.Year() != b.Year(),
		a.Month() != b.Month(),
		a.Day() != b.Day(),
		(a.Hour() < 12) != (b.Hour() < 12),
		a.Hour() != b.Hour(),
		a.Minute() != b.Minute(),
		a.Second() != b.Second(),
		x != y,
	}
	for i, d := range differs {
		if d {
			return calendarFields[i][0]
		}
	}
	return 0
}

// fieldLevel orders pattern letters by calendar field: the index in calendarFields, 0 for
// era … 8 for milliseconds, or -1 for a letter of none.
func fieldLevel(c byte) int {
	for i, letters := range calendarFields {
		if strings.IndexByte(letters, c) >= 0 {
			return i
		}
	}
	return -1
}

func (f *dateFormat) rangeParts(x, y float64) []rangePart {
	tx, ty := timeOf(x, f.zone.loc), timeOf(y, f.zone.loc)
	field := largestDifference(tx, ty, x, y)
	finest := -1
	for _, t := range f.toks {
		if l := fieldLevel(t.char); l > finest {
			finest = l
		}
	}
	if field == 0 || fieldLevel(field) > finest {
		return shared(f.partsOf(f.toks, tx, x))
	}
	skel := f.skeleton
	if skel == "" {
		skel = withHourChar(f.pattern, hourCharOf(f.pattern))
	}
	req := skeletonOf(parseDatePattern(f.gen.mapHour(skel)))
	hasDate, hasTime := req.mask()&dateMask != 0, req.mask()&^dateMask != 0
	dateField := fieldLevel(field) <= 3
	fallbackWith := func(skeleton string) []rangePart {
		toks := parseDatePattern(f.finishPattern(f.gen.bestPattern(skeleton)))
		return f.fallbackRange(toks, tx, ty, x, y)
	}
	switch {
	case hasDate && hasTime && dateField:
		return f.fallbackRange(f.toks, tx, ty, x, y)
	case hasDate && hasTime:
		// Same day: the date once, the time as an interval.
		var dateReq, timeReq skeleton
		for i := 0; i < fieldCount; i++ {
			target := &timeReq
			if i < fDayPeriod {
				target = &dateReq
			}
			target.char[i], target.count[i], target.typ[i] = req.char[i], req.count[i], req.typ[i]
		}
		datePattern := f.gen.bestPattern(dateReq.String())
		timeParts := f.intervalParts(&timeReq, field, tx, ty, x, y)
		if timeParts == nil {
			tp := parseDatePattern(f.finishPattern(f.gen.bestPattern(timeReq.String())))
			timeParts = f.fallbackRange(tp, tx, ty, x, y)
		}
		glue := f.gen.dateTimeGlue(&req)
		var out []rangePart
		for _, piece := range splitGlue(glue) {
			switch piece {
			case "{1}":
				out = append(out, shared(f.partsOf(parseDatePattern(datePattern), tx, x))...)
			case "{0}":
				out = append(out, timeParts...)
			default:
				out = append(out, shared(f.partsOf(parseDatePattern(piece), tx, x))...)
			}
		}
		return mergeShared(out)
	case hasTime && dateField:
		// ICU prefixes a time-only skeleton with the short date's.
		return fallbackWith("yMd" + skel)
	case hasDate && req.char[fDay] != 0:
		// A date skeleton with a day but without the field that differs gets it (and the
		// fields between): d → Md → yMd. Without a day, the skeleton's own pattern serves
		// both ends (January – February).
		extended := skel
		for _, c := range []byte{'d', 'M', 'y', 'G'} {
			if req.char[fieldOfLetter(c)] == 0 {
				extended = string(c) + extended
				if c == field {
					return fallbackWith(extended)
				}
			} else if c == field {
				break
			}
		}
	}
	if ps := f.intervalParts(&req, field, tx, ty, x, y); ps != nil {
		return ps
	}
	return f.fallbackRange(f.toks, tx, ty, x, y)
}

// fieldOf is the pattern field a token shows (weekday and day apart).
func fieldOf(t patternToken) int {
	if r := t.fieldType(); r != nil {
		return r.field
	}
	return 100 + int(t.char)
}

func fieldOfLetter(c byte) int {
	switch c {
	case 'd':
		return fDay
	case 'M':
		return fMonth
	case 'y':
		return fYear
	}
	return fEra
}

// finishPattern applies the hour cycle the options chose, as the main pattern has it.
func (f *dateFormat) finishPattern(p string) string {
	if hc := f.hourCycle; hc != "" && (f.opt.hour12 != 0 || f.opt.hourCycle != "") {
		return replaceHourCycle(p, hourCycleChar[hc])
	}
	return p
}

// intervalParts formats with the closest CLDR interval pattern, or returns nil.
func (f *dateFormat) intervalParts(req *skeleton, field byte, tx, ty time.Time, x, y float64) []rangePart {
	iv := f.ld.Gregorian.IntervalFormats
	var best string
	var bestSkel skeleton
	bestDist := int(^uint(0) >> 1)
	for key := range iv {
		if key == "intervalFormatFallback" {
			continue
		}
		s := skeletonOf(parseDatePattern(key))
		d, _ := req.distance(&s, -1)
		if d < bestDist || d == bestDist && key < best {
			best, bestSkel, bestDist = key, s, d
		}
	}
	if best == "" || bestDist >= 0x1000 {
		return nil
	}
	var pats map[string]string
	if err := json.Unmarshal(iv[best], &pats); err != nil {
		return nil
	}
	letter := string(field)
	if field == 'h' && bestSkel.char[fHour] != 0 {
		letter = string(bestSkel.char[fHour])
	}
	if field == 'a' && bestSkel.char[fDayPeriod] == 0 {
		letter = string(bestSkel.char[fHour]) // 24-hour: a different half of the day is a different hour
	}
	pat, ok := pats[letter]
	if !ok {
		// A larger field than the skeleton's interval patterns know (years for "MMMd"):
		// ICU falls back to the full pattern for both dates.
		return nil
	}
	entry := &dtpgEntry{skel: bestSkel, specified: true}
	pat = f.finishPattern(f.gen.adjust(pat, entry, req, false))
	toks := parseDatePattern(pat)
	first, second := splitInterval(toks)
	// Fields in both halves are the start's and the end's; the rest is shared.
	levels := func(ts []patternToken) map[int]bool {
		m := map[int]bool{}
		for _, t := range ts {
			if t.char != 0 {
				m[fieldOf(t)] = true
			}
		}
		return m
	}
	l1, l2 := levels(first), levels(second)
	var out []rangePart
	half := func(ts []patternToken, other map[int]bool, t time.Time, ms float64, source string) {
		lo, hi := -1, -1
		for i, tok := range ts {
			if tok.char != 0 && other[fieldOf(tok)] {
				if lo < 0 {
					lo = i
				}
				hi = i
			}
		}
		for i, tok := range ts {
			src := "shared"
			if lo >= 0 && i >= lo && i <= hi {
				src = source
			}
			for _, p := range f.partsOf([]patternToken{tok}, t, ms) {
				out = append(out, rangePart{p, src})
			}
		}
	}
	half(first, l2, tx, x, "startRange")
	half(second, l1, ty, y, "endRange")
	return mergeShared(out)
}

// splitInterval cuts an interval pattern before its first repeated field.
func splitInterval(toks []patternToken) (first, second []patternToken) {
	seen := map[int]bool{}
	for i, t := range toks {
		if t.char == 0 {
			continue
		}
		l := fieldOf(t)
		if seen[l] {
			// The literal between the halves (" – ") belongs to neither: attach it to the
			// end part, as ICU reports it shared.
			j := i
			if j > 0 && toks[j-1].char == 0 {
				j--
			}
			return toks[:j], toks[j:]
		}
		seen[l] = true
	}
	return toks, nil
}

func (f *dateFormat) fallbackRange(toks []patternToken, tx, ty time.Time, x, y float64) []rangePart {
	fallback := "{0} – {1}"
	if raw, ok := f.ld.Gregorian.IntervalFormats["intervalFormatFallback"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			fallback = s
		}
	}
	var out []rangePart
	for _, piece := range splitGlue(fallback) {
		switch piece {
		case "{0}":
			for _, p := range f.partsOf(toks, tx, x) {
				out = append(out, rangePart{p, "startRange"})
			}
		case "{1}":
			for _, p := range f.partsOf(toks, ty, y) {
				out = append(out, rangePart{p, "endRange"})
			}
		default:
			out = append(out, rangePart{part{"literal", piece}, "shared"})
		}
	}
	return out
}

// splitGlue splits a "{1}, {0}" pattern into its placeholders and the text between.
func splitGlue(p string) []string {
	var out []string
	for p != "" {
		i := strings.IndexByte(p, '{')
		if i < 0 || i+2 >= len(p) || p[i+2] != '}' {
			out = append(out, p)
			break
		}
		if i > 0 {
			out = append(out, p[:i])
		}
		out = append(out, p[i:i+3])
		p = p[i+3:]
	}
	return out
}

func shared(ps []part) []rangePart {
	out := make([]rangePart, len(ps))
	for i, p := range ps {
		out[i] = rangePart{p, "shared"}
	}
	return out
}

func mergeShared(ps []rangePart) []rangePart {
	var out []rangePart
	for _, p := range ps {
		if n := len(out); n > 0 && p.typ == "literal" && out[n-1].typ == "literal" && out[n-1].source == p.source {
			out[n-1].value += p.value
			continue
		}
		out = append(out, p)
	}
	return out
}
