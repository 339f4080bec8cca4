package intl

import (
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the time zone database is embedded: nothing depends on the host's
)

// zone is a resolved time zone: its canonical name (as ICU reports it) and its rules.
type zone struct {
	id     string
	loc    *time.Location
	offset bool // an offset zone ("+05:30"): it has no names, only its GMT offset
}

var (
	zoneCache   sync.Map // canonical id → *zone
	zoneAliases struct {
		once sync.Once
		m    map[string][]string // canonical id → every alias
	}
)

// resolveZone is ECMA-402 IsValidTimeZoneName and CanonicalizeTimeZoneName (case
// insensitive; Etc/UTC, Etc/GMT and GMT are UTC), and offset zones ("+05:30", "-08"). ok is
// false for names it does not know.
func resolveZone(name string) (*zone, bool) {
	if len(name) > 64 {
		return nil, false
	}
	if z, ok := offsetZone(name); ok {
		return z, true
	}
	s := mustSupplemental()
	canon, ok := s.zoneLookup[asciiLower(name)]
	if !ok {
		return nil, false
	}
	switch canon {
	case "Etc/UTC", "Etc/GMT":
		canon = "UTC"
	}
	if z, ok := zoneCache.Load(canon); ok {
		return z.(*zone), true
	}
	loc := loadLocation(canon)
	if loc == nil {
		return nil, false
	}
	z, _ := zoneCache.LoadOrStore(canon, &zone{id: canon, loc: loc})
	return z.(*zone), true
}

// offsetZone reads an offset time zone of ECMA-402 (2024): ±HH, ±HHMM or ±HH:MM, named as
// ±HH:MM ("-00:00" is "+00:00"), as V8 takes them.
func offsetZone(name string) (*zone, bool) {
	if len(name) != 3 && len(name) != 5 && len(name) != 6 || name[0] != '+' && name[0] != '-' {
		return nil, false
	}
	digits := name[1:]
	if len(name) == 6 {
		if name[3] != ':' {
			return nil, false
		}
		digits = name[1:3] + name[4:]
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	h := int(digits[0]-'0')*10 + int(digits[1]-'0')
	m := 0
	if len(digits) == 4 {
		m = int(digits[2]-'0')*10 + int(digits[3]-'0')
	}
	if h > 23 || m > 59 {
		return nil, false
	}
	offset := (h*60 + m) * 60
	sign := name[0]
	if offset == 0 {
		sign = '+'
	} else if sign == '-' {
		offset = -offset
	}
	id := string(sign) + pad2(h) + ":" + pad2(m)
	return &zone{id: id, loc: time.FixedZone(id, offset), offset: true}, true
}

// loadLocation loads a zone's rules from Go's database, under whichever of its CLDR aliases
// the database knows.
func loadLocation(canon string) *time.Location {
	if canon == "UTC" {
		return time.UTC
	}
	if loc, err := time.LoadLocation(canon); err == nil {
		return loc
	}
	zoneAliases.once.Do(func() {
		zoneAliases.m = map[string][]string{}
		for alias, c := range mustSupplemental().ZoneIDs {
			zoneAliases.m[c] = append(zoneAliases.m[c], alias)
		}
	})
	for _, alias := range zoneAliases.m[canon] {
		if loc, err := time.LoadLocation(alias); err == nil {
			return loc
		}
	}
	return nil
}

// metazoneAt is the CLDR metazone a zone belongs to at t, or "".
func metazoneAt(id string, t time.Time) string {
	s := mustSupplemental()
	uses := s.MetazoneOf[id]
	if id == "UTC" {
		return ""
	}
	stamp := t.UTC().Format("2006-01-02 15:04")
	for _, u := range uses {
		if (u[1] == "" || stamp >= u[1]) && (u[2] == "" || stamp < u[2]) {
			return u[0]
		}
	}
	return ""
}

// usesDST reports whether the zone observes daylight saving time within half a year of t,
// which decides between generic and standard names (as ICU decides it).
func usesDST(loc *time.Location, t time.Time) bool {
	for d := -184; d <= 184; d += 8 {
		if t.AddDate(0, 0, d).In(loc).IsDST() {
			return true
		}
	}
	return false
}

// zoneName formats a time zone for a pattern field: z (1-3 short specific, 4 long
// specific), O (1 short offset, 4 long offset), v (1 short generic, 4 long generic).
func (f *dateFormat) zoneName(letter byte, count int, t time.Time) string {
	_, offset := t.Zone()
	id := f.zone.id
	if id == "UTC" {
		id = "Etc/UTC" // the name CLDR's zone names use
	}
	zn := &f.ld.Zones
	switch letter {
	case 'O':
		return f.gmt(offset, count >= 4, true)
	case 'z':
		width := "short"
		if count >= 4 {
			width = "long"
		}
		kind := "standard"
		if t.IsDST() {
			kind = "daylight"
		}
		if n := zn.Zones[id].names(width)[kind]; n != "" {
			return n
		}
		if mz := metazoneAt(id, t); mz != "" {
			if n := zn.Metazones[mz].names(width)[kind]; n != "" {
				return n
			}
		}
		return f.gmt(offset, count >= 4, false)
	case 'v':
		width := "short"
		if count >= 4 {
			width = "long"
		}
		if n := f.genericName(width, t); n != "" {
			return n
		}
		return f.gmt(offset, count >= 4, true)
	}
	return f.gmt(offset, count >= 4, false)
}

func (z zoneEntry) names(width string) map[string]string {
	if width == "long" {
		return z.Long
	}
	return z.Short
}

// genericName is ICU's generic non-location name, falling back to the generic location
// format ("Germany Time", "Los Angeles Time"); "" for zones that have neither (UTC).
func (f *dateFormat) genericName(width string, t time.Time) string {
	id := f.zone.id
	zn := &f.ld.Zones
	if id == "UTC" || f.zone.offset {
		return ""
	}
	dst := usesDST(f.zone.loc, t)
	kind := "generic"
	if !dst {
		kind = "standard"
	}
	if n := zn.Zones[id].names(width)[kind]; n != "" {
		return n
	}
	if mz := metazoneAt(id, t); mz != "" {
		names := zn.Metazones[mz].names(width)
		n := names[kind]
		if n == "" && kind == "standard" {
			n = names["generic"]
		}
		if n != "" && !f.offsetDiffersFromGolden(mz, t) {
			return n
		}
	}
	return f.locationName(t)
}

// offsetDiffersFromGolden reports whether the zone's offset at t differs from that of the
// metazone's reference zone, in which case ICU names the place instead of the metazone.
func (f *dateFormat) offsetDiffersFromGolden(mz string, t time.Time) bool {
	s := mustSupplemental()
	region := f.region
	golden := s.Golden[mz][region]
	if golden == "" {
		golden = s.Golden[mz]["001"]
	}
	if golden == "" || golden == f.zone.id {
		return false
	}
	gz, ok := resolveZone(golden)
	if !ok {
		return false
	}
	_, a := t.In(f.zone.loc).Zone()
	_, b := t.In(gz.loc).Zone()
	return a != b
}

// locationName is the generic location format: the country for a zone that is its
// country's only or primary one, the exemplar city otherwise.
func (f *dateFormat) locationName(t time.Time) string {
	s := mustSupplemental()
	id := f.zone.id
	zn := &f.ld.Zones
	format := zn.RegionFormat
	if format == "" {
		format = "{0}"
	}
	region := s.ZoneRegion[id]
	if region != "" && (s.zoneCount[region] == 1 || s.PrimaryZones[region] == id) && f.ld.Names != nil {
		if name := f.ld.Names.Regions[region]; name != "" {
			return strings.Replace(format, "{0}", name, 1)
		}
	}
	city := zn.Zones[id].City
	if city == "" {
		city = id
		if i := strings.LastIndexByte(city, '/'); i >= 0 {
			city = city[i+1:]
		}
		city = strings.ReplaceAll(city, "_", " ")
	}
	if strings.HasPrefix(id, "Etc/") {
		return ""
	}
	return strings.Replace(format, "{0}", city, 1)
}

// gmt is the localized GMT format: "GMT-5", "GMT+5:30" short, "GMT-05:00" long.
// explicitZero writes a zero offset as "GMT+0" (the offset styles) rather than "GMT".
func (f *dateFormat) gmt(offset int, long, explicitZero bool) string {
	zn := &f.ld.Zones
	gmtFormat := zn.GMTFormat
	if gmtFormat == "" {
		gmtFormat = "GMT{0}"
	}
	if offset == 0 && !explicitZero {
		if zn.GMTZeroFormat != "" {
			return zn.GMTZeroFormat
		}
		return "GMT"
	}
	hourFormat := zn.HourFormat
	if hourFormat == "" {
		hourFormat = "+HH:mm;-HH:mm"
	}
	pos, neg, _ := strings.Cut(hourFormat, ";")
	pat := pos
	if offset < 0 {
		pat = neg
		offset = -offset
	}
	h, m := offset/3600, offset%3600/60
	var b strings.Builder
	for i := 0; i < len(pat); {
		c := pat[i]
		j := i
		for j < len(pat) && pat[j] == c {
			j++
		}
		n := j - i
		switch c {
		case 'H':
			if long || n == 1 {
				if long {
					b.WriteString(pad2(h))
				} else {
					b.WriteString(strconv.Itoa(h))
				}
			} else {
				b.WriteString(strconv.Itoa(h))
			}
		case 'm':
			if !long && m == 0 {
				// the short form drops ":00", and the separator before it
				s := b.String()
				b.Reset()
				b.WriteString(strings.TrimRight(s, ":."))
			} else {
				b.WriteString(pad2(m))
			}
		default:
			b.WriteString(pat[i:j])
		}
		i = j
	}
	return strings.Replace(gmtFormat, "{0}", f.digits.local(b.String()), 1)
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// ZoneLongName is how V8 names a time zone at the end of Date.prototype.toString: en-US's
// long specific name of the zone named zoneName at t ("Coordinated Universal Time",
// "Central European Summer Time"), else its long GMT offset ("GMT+05:45"); "" when zoneName
// is not a zone.
func ZoneLongName(zoneName string, t time.Time) string {
	z, ok := resolveZone(zoneName)
	if !ok {
		return ""
	}
	ld, err := loadLocale("en")
	if err != nil {
		return ""
	}
	f := &dateFormat{zone: z, ld: ld, region: "US"}
	return f.zoneName('z', 4, t.In(z.loc))
}
