package intl

import (
	"slices"
	"sort"
	"strings"
)

// maxTagLength bounds one language tag; longer input is rejected as invalid rather than
// parsed (BCP 47 sets no limit, but no real tag comes near it).
const maxTagLength = 255

// langTag is a parsed Unicode BCP 47 locale identifier (UTS 35), in canonical case.
type langTag struct {
	lang, script, region string
	variants             []string
	uAttrs               []string
	uKeys                []keyword // sorted by key after canonicalize
	others               []string  // other extensions, each "s-sub-sub", sorted after canonicalize
	private              string    // "x-..." or ""
}

type keyword struct{ key, value string } // value "" stands for "true"

func isAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return len(s) > 0
}

func isDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < '0' || c > '9' {
			return false
		}
	}
	return len(s) > 0
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return len(s) > 0
}

func isLangSubtag(s string) bool {
	return isAlpha(s) && (len(s) >= 2 && len(s) <= 3 || len(s) >= 5 && len(s) <= 8)
}
func isScriptSubtag(s string) bool { return len(s) == 4 && isAlpha(s) }
func isRegionSubtag(s string) bool {
	return len(s) == 2 && isAlpha(s) || len(s) == 3 && isDigit(s)
}
func isVariantSubtag(s string) bool {
	return isAlnum(s) && (len(s) >= 5 && len(s) <= 8 || len(s) == 4 && s[0] >= '0' && s[0] <= '9')
}

// parseTag parses a Unicode locale identifier as ECMA-402's IsStructurallyValidLanguageTag
// accepts it. ok is false for anything else; t then holds what was read before the fault.
func parseTag(s string) (t langTag, ok bool) {
	if len(s) == 0 || len(s) > maxTagLength || !isTagText(s) {
		return t, false
	}
	p := &subtags{parts: strings.Split(asciiLower(s), "-")}
	if !p.languageID(&t) {
		return t, false
	}
	seen := map[byte]bool{}
	for p.i < len(p.parts) {
		if !p.extension(&t, seen) {
			return t, false
		}
	}
	if t.script != "" {
		t.script = strings.ToUpper(t.script[:1]) + t.script[1:]
	}
	t.region = strings.ToUpper(t.region)
	return t, true
}

// isTagText reports whether s is made of ASCII letters, digits and hyphens only.
func isTagText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// subtags walks the lower-cased subtags of a tag being parsed.
type subtags struct {
	parts []string
	i     int // the next one
}

// next takes the next subtag when it is one that is reports.
func (p *subtags) next(is func(string) bool) (string, bool) {
	if p.i < len(p.parts) && is(p.parts[p.i]) {
		p.i++
		return p.parts[p.i-1], true
	}
	return "", false
}

// run takes the subtags from here on that is reports, and returns them.
func (p *subtags) run(is func(string) bool) []string {
	start := p.i
	for p.i < len(p.parts) && is(p.parts[p.i]) {
		p.i++
	}
	return p.parts[start:p.i]
}

// isKeyValue reports whether s is a u or t extension's value subtag (or a u attribute).
func isKeyValue(s string) bool { return len(s) >= 3 && len(s) <= 8 && isAlnum(s) }

// languageID reads language, script, region and variants (unicode_language_id); a repeated
// variant is invalid.
func (p *subtags) languageID(t *langTag) bool {
	var ok bool
	if t.lang, ok = p.next(isLangSubtag); !ok {
		return false
	}
	t.script, _ = p.next(isScriptSubtag)
	t.region, _ = p.next(isRegionSubtag)
	for v, ok := p.next(isVariantSubtag); ok; v, ok = p.next(isVariantSubtag) {
		if slices.Contains(t.variants, v) {
			return false
		}
		t.variants = append(t.variants, v)
	}
	return true
}

// extension reads one extension, or the private use part that ends the tag. A singleton may
// not repeat (seen) and must be followed by at least one subtag.
func (p *subtags) extension(t *langTag, seen map[byte]bool) bool {
	single := p.parts[p.i]
	if len(single) != 1 {
		return false
	}
	if single == "x" {
		return p.privateUse(t)
	}
	if seen[single[0]] {
		return false
	}
	seen[single[0]] = true
	p.i++
	start := p.i
	switch single {
	case "u":
		p.unicodeExtension(t)
	case "t":
		if !p.transformedExtension() {
			return false
		}
		t.others = append(t.others, "t-"+strings.Join(p.parts[start:p.i], "-"))
	default:
		if !isAlnum(single) {
			return false
		}
		rest := p.run(func(s string) bool { return len(s) >= 2 && len(s) <= 8 && isAlnum(s) })
		t.others = append(t.others, single+"-"+strings.Join(rest, "-"))
	}
	return p.i != start
}

// privateUse reads "x-" and the subtags after it, which end the tag.
func (p *subtags) privateUse(t *langTag) bool {
	rest := p.parts[p.i+1:]
	if len(rest) == 0 {
		return false
	}
	for _, r := range rest {
		if !isAlnum(r) || len(r) > 8 {
			return false
		}
	}
	t.private = "x-" + strings.Join(rest, "-")
	p.i = len(p.parts)
	return true
}

// unicodeExtension reads the attributes and keywords after "u-"; of a repeated key the first
// stands.
func (p *subtags) unicodeExtension(t *langTag) {
	t.uAttrs = append(t.uAttrs, p.run(isKeyValue)...)
	isKey := func(s string) bool { return len(s) == 2 && isAlnum(s) && s[1] >= 'a' && s[1] <= 'z' }
	for key, ok := p.next(isKey); ok; key, ok = p.next(isKey) {
		value := strings.Join(p.run(isKeyValue), "-")
		if !slices.ContainsFunc(t.uKeys, func(o keyword) bool { return o.key == key }) {
			t.uKeys = append(t.uKeys, keyword{key: key, value: value})
		}
	}
}

// transformedExtension reads what follows "t-": an optional language and fields, each with
// at least one value.
func (p *subtags) transformedExtension() bool {
	if _, ok := p.next(isLangSubtag); ok {
		p.next(isScriptSubtag)
		p.next(isRegionSubtag)
		p.run(isVariantSubtag)
	}
	isField := func(s string) bool { return len(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= '0' && s[1] <= '9' }
	for _, ok := p.next(isField); ok; _, ok = p.next(isField) {
		if len(p.run(isKeyValue)) == 0 {
			return false
		}
	}
	return true
}

// canonicalize applies the CLDR aliases and puts subtags in canonical order (ECMA-402
// CanonicalizeUnicodeLocaleId).
func (t *langTag) canonicalize(s *supplementalData) {
	// Language aliases, the longest match first: lang-variant, then lang.
	for i, v := range t.variants {
		if rep, ok := s.LanguageAlias[t.lang+"-"+v]; ok {
			t.variants = append(append([]string{}, t.variants[:i]...), t.variants[i+1:]...)
			t.applyLanguage(rep, true)
			break
		}
	}
	if rep, ok := s.LanguageAlias[t.lang]; ok {
		t.applyLanguage(rep, false)
	}
	if t.script != "" {
		if rep, ok := s.ScriptAlias[t.script]; ok {
			t.script = rep
		}
	}
	if t.region != "" {
		if rep, ok := s.TerritoryAlias[t.region]; ok {
			regions := strings.Fields(rep)
			choice := regions[0]
			if len(regions) > 1 {
				if likely, ok := s.LikelySubtags[t.lang]; ok {
					parts := strings.Split(likely, "-")
					want := parts[len(parts)-1]
					for _, r := range regions {
						if r == want {
							choice = r
						}
					}
				}
			}
			t.region = choice
		}
	}
	for i, v := range t.variants {
		if v == "posix" {
			t.variants = append(append([]string{}, t.variants[:i]...), t.variants[i+1:]...)
			t.setKeyword("va", "posix")
			break
		}
	}
	for i, v := range t.variants {
		if rep, ok := s.VariantAlias[v]; ok {
			t.variants[i] = rep
		}
	}
	sort.Strings(t.variants)
	sort.Strings(t.uAttrs)
	for i := range t.uKeys {
		k := &t.uKeys[i]
		if k.value == "true" {
			k.value = ""
		}
		if alias, ok := keywordAliases[k.key+"-"+k.value]; ok {
			k.value = alias
		}
	}
	sort.SliceStable(t.uKeys, func(i, j int) bool { return t.uKeys[i].key < t.uKeys[j].key })
	sort.Strings(t.others)
}

// keywordAliases are the deprecated Unicode extension values ECMA-402 canonicalizes.
var keywordAliases = map[string]string{
	"ca-ethiopic-amete-alem": "ethioaa",
	"ca-islamicc":            "islamic-civil",
	"ks-primary":             "level1",
	"ks-tertiary":            "level3",
	"ms-imperial":            "uksystem",
	"co-dictionary":          "dict",
	"co-phonebook":           "phonebk",
	"co-traditional":         "trad",
	"co-gb2312han":           "gb2312",
	"kb-yes":                 "",
	"kc-yes":                 "",
	"kh-yes":                 "",
	"kk-yes":                 "",
	"kn-yes":                 "",
	"ka-yes":                 "",
}

func (t *langTag) applyLanguage(rep string, force bool) {
	parts := strings.Split(rep, "-")
	t.lang = parts[0]
	for _, p := range parts[1:] {
		switch {
		case len(p) == 4 && (t.script == "" || force):
			t.script = p
		case (len(p) == 2 || len(p) == 3 && isDigit(p)) && (t.region == "" || force):
			t.region = p
		}
	}
}

func (t *langTag) setKeyword(key, value string) {
	for i := range t.uKeys {
		if t.uKeys[i].key == key {
			t.uKeys[i].value = value
			return
		}
	}
	t.uKeys = append(t.uKeys, keyword{key, value})
}

func (t langTag) keyword(key string) (string, bool) {
	for _, k := range t.uKeys {
		if k.key == key {
			return k.value, true
		}
	}
	return "", false
}

// baseName is the tag without extensions: language, script, region, variants.
func (t langTag) baseName() string {
	var b strings.Builder
	b.WriteString(t.lang)
	if t.script != "" {
		b.WriteByte('-')
		b.WriteString(t.script)
	}
	if t.region != "" {
		b.WriteByte('-')
		b.WriteString(t.region)
	}
	for _, v := range t.variants {
		b.WriteByte('-')
		b.WriteString(v)
	}
	return b.String()
}

func (t langTag) String() string {
	var b strings.Builder
	b.WriteString(t.baseName())
	exts := append([]string{}, t.others...)
	if len(t.uAttrs) > 0 || len(t.uKeys) > 0 {
		u := []string{"u"}
		u = append(u, t.uAttrs...)
		for _, k := range t.uKeys {
			u = append(u, k.key)
			if k.value != "" {
				u = append(u, k.value)
			}
		}
		exts = append(exts, strings.Join(u, "-"))
	}
	sort.Strings(exts)
	for _, e := range exts {
		b.WriteByte('-')
		b.WriteString(e)
	}
	if t.private != "" {
		b.WriteByte('-')
		b.WriteString(t.private)
	}
	return b.String()
}

// canonicalTag parses and canonicalizes one tag; ok is false when it is not well-formed.
func canonicalTag(s string, supp *supplementalData) (langTag, bool) {
	t, ok := parseTag(s)
	if !ok {
		return t, false
	}
	t.canonicalize(supp)
	return t, true
}

// availability answers which locales a service has data for.
type availability func(base string) bool

// dataLocale maps an available locale (without extensions) to the locale whose data file
// serves it: itself, the parent of a default-content locale (de-DE → de), or the form with
// its likely script (zh-TW → zh-Hant-TW).
func dataLocale(s *supplementalData, base string) string {
	for t := base; t != ""; {
		if containsSorted(s.Locales, t) {
			return t
		}
		if alt := withLikelyScript(s, t); alt != "" && s.available[alt] {
			t = alt
			continue
		}
		i := strings.LastIndexByte(t, '-')
		if i < 0 {
			break
		}
		if i >= 2 && t[i-2] == '-' {
			i -= 2
		}
		t = t[:i]
	}
	return "und"
}

// withLikelyScript returns lang-Script-REGION for lang-REGION when the script is implied
// (zh-TW → zh-Hant-TW), or "".
func withLikelyScript(s *supplementalData, base string) string {
	parts := strings.Split(base, "-")
	if len(parts) < 2 || len(parts[1]) == 4 {
		return ""
	}
	likely, ok := s.LikelySubtags[parts[0]+"-"+parts[1]]
	if !ok {
		return ""
	}
	lp := strings.Split(likely, "-")
	if len(lp) < 2 || len(lp[1]) != 4 {
		return ""
	}
	// Keep the default script implied: zh-CN is zh-Hans-CN, whose data is zh (default content).
	if def, ok := s.LikelySubtags[parts[0]]; ok && strings.Split(def, "-")[1] == lp[1] {
		return ""
	}
	return strings.Join(append([]string{parts[0], lp[1]}, parts[1:]...), "-")
}

func containsSorted(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}

// generalAvailable reports whether CLDR has data for base.
func generalAvailable(s *supplementalData) availability {
	return func(base string) bool {
		if s.available[base] {
			return true
		}
		if alt := withLikelyScript(s, base); alt != "" && s.available[alt] {
			return true
		}
		return false
	}
}

// bestAvailable is ECMA-402 BestAvailableLocale: base, then base with subtags removed from
// the end, until one is available.
func bestAvailable(avail availability, base string) string {
	for candidate := base; ; {
		if avail(candidate) {
			return candidate
		}
		i := strings.LastIndexByte(candidate, '-')
		if i < 0 {
			return ""
		}
		if i >= 2 && candidate[i-2] == '-' {
			i -= 2
		}
		candidate = candidate[:i]
	}
}
