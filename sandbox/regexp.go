package sandbox

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// RegexpMatchTimeout bounds one regular-expression match in a program. goja runs patterns that
// Go's linear-time regexp cannot express (backreferences, lookaround) on regexp2, a
// backtracking engine whose matches ignore Runtime.Interrupt, so a catastrophic pattern would
// otherwise hold the VM goroutine for minutes past the run's timeout. goja answers a match
// that times out as "no match"; the sandbox does not let that wrong answer through: a program
// whose one match runs this long fails with kind "limit" (see installRegexpTimeout).
//
// regexp2 reads the timeout from a process-wide default when a pattern is compiled; this
// package sets it once at init and never changes it.
const RegexpMatchTimeout = time.Second

func init() {
	regexp2.DefaultMatchTimeout = RegexpMatchTimeout
}

// installRegexpTimeout wraps RegExp.prototype.exec and test, through which every match of the
// program passes (replacing exec moves goja's string methods to the generic algorithm, which
// calls exec for each match), and fails the run when one of them runs for RegexpMatchTimeout:
// regexp2 gave up on it and goja would answer "no match".
func installRegexpTimeout(h platformHost) error {
	rt := h.runtime()
	proto := rt.Get("RegExp").ToObject(rt).Get("prototype").ToObject(rt)
	for _, name := range []string{"exec", "test"} {
		orig, ok := goja.AssertFunction(proto.Get(name))
		if !ok {
			return fmt.Errorf("RegExp.prototype.%s is not a function", name)
		}
		length := 1
		err := defineMethod(h, proto, name, length, func(call goja.FunctionCall) goja.Value {
			start := time.Now()
			v, err := orig(call.This, call.Arguments...)
			if time.Since(start) >= RegexpMatchTimeout {
				src := ""
				if o, ok := call.This.(*goja.Object); ok {
					src = o.String()
				}
				msg := fmt.Sprintf("the regular expression %s ran longer than its %v match limit (catastrophic backtracking?): "+
					"its answer would be wrong, so the run stops; simplify the pattern (no nested quantifiers such as (a+)+) or match smaller input",
					truncateUTF8(src, 200), RegexpMatchTimeout)
				h.fail(&Failure{Kind: KindLimit, Message: msg})
				panic(rt.NewTypeError(msg))
			}
			must(err)
			if m, ok := v.(*goja.Object); ok && name == "exec" {
				matchKeyOrder(m)
			}
			return v
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// matchKeyOrder gives a match array V8's key order, index, input, groups (goja's is input,
// index, groups), as Object.keys and the console show it.
func matchKeyOrder(m *goja.Object) {
	input, groups := m.Get("input"), m.Get("groups")
	if input == nil || groups == nil {
		return
	}
	must(m.Delete("input"))
	must(m.Delete("groups"))
	must(m.Set("input", input))
	must(m.Set("groups", groups))
}

// Regular-expression syntax goja gets wrong or lacks: Unicode property escapes (\p{…} and
// \P{…}, which goja reads as the letters "p{…}"), the v flag (unicodeSets: nested classes,
// -- and && set operations) and the d flag (hasIndices). esbuild turns literals that use them
// into `new RegExp(…)` calls; the program's RegExp is a wrapper (prelude/regexp.js) that hands
// such patterns to translateRegexp and gives the resulting objects the source, flags and
// match indices the standard asks for.

// regexpTranslation is how a pattern is compiled by goja.
type regexpTranslation struct {
	pattern, flags string
}

// translateRegexp rewrites pattern and flags into ones goja compiles with the same meaning:
// property escapes become explicit classes, v becomes u with its classes computed, d is
// dropped (the wrapper adds indices). ok is false when nothing needs translating.
func translateRegexp(pattern, flags string) (regexpTranslation, bool, error) {
	unicodeSets := strings.Contains(flags, "v")
	unicodeMode := unicodeSets || strings.Contains(flags, "u")
	needs := strings.ContainsAny(flags, "dv") || unicodeMode && (strings.Contains(pattern, `\p{`) || strings.Contains(pattern, `\P{`))
	if !needs {
		return regexpTranslation{}, false, nil
	}
	if unicodeSets && strings.Contains(flags, "u") {
		return regexpTranslation{}, false, fmt.Errorf("Invalid flags supplied to RegExp constructor '%s'", flags)
	}
	var f strings.Builder
	for _, c := range flags {
		switch c {
		case 'd':
		case 'v':
			f.WriteRune('u')
		default:
			f.WriteRune(c)
		}
	}
	if !unicodeMode {
		return regexpTranslation{pattern: pattern, flags: f.String()}, true, nil
	}
	p := &classParser{src: []rune(pattern), sets: unicodeSets}
	out, err := p.translate()
	if err != nil {
		return regexpTranslation{}, false, fmt.Errorf("Invalid regular expression: /%s/%s: %v", pattern, flags, err)
	}
	return regexpTranslation{pattern: out, flags: f.String()}, true, nil
}

// runeSet is a sorted list of disjoint inclusive ranges.
type runeSet [][2]rune

func (s runeSet) normalize() runeSet {
	sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
	var out runeSet
	for _, r := range s {
		if n := len(out); n > 0 && r[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

func (s runeSet) complement() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s.normalize() {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, [2]rune{next, unicode.MaxRune})
	}
	return out
}

func (s runeSet) intersect(t runeSet) runeSet {
	a, b := s.normalize(), t.normalize()
	var out runeSet
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo, hi := max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
		if lo <= hi {
			out = append(out, [2]rune{lo, hi})
		}
		if a[i][1] < b[j][1] {
			i++
		} else {
			j++
		}
	}
	return out
}

func (s runeSet) subtract(t runeSet) runeSet { return s.intersect(t.complement()) }

func tableSet(t *unicode.RangeTable) runeSet {
	var s runeSet
	for _, r := range t.R16 {
		s = s.appendStrided(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	for _, r := range t.R32 {
		s = s.appendStrided(rune(r.Lo), rune(r.Hi), rune(r.Stride))
	}
	return s.normalize()
}

// appendStrided appends the runes lo, lo+stride, ... up to hi: one range when stride is 1.
func (s runeSet) appendStrided(lo, hi, stride rune) runeSet {
	if stride == 1 {
		return append(s, [2]rune{lo, hi})
	}
	for r := lo; r <= hi; r += stride {
		s = append(s, [2]rune{r, r})
	}
	return s
}

var generalCategories = map[string]string{
	"Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll", "Titlecase_Letter": "Lt",
	"Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn",
	"Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd", "digit": "Nd",
	"Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc",
	"Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
	"Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
	"Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl",
	"Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs",
	"Private_Use": "Co", "Unassigned": "Cn",
}

var scriptAliases = map[string]string{
	"Arab": "Arabic", "Armn": "Armenian", "Beng": "Bengali", "Cyrl": "Cyrillic", "Deva": "Devanagari", "Ethi": "Ethiopic",
	"Geor": "Georgian", "Grek": "Greek", "Gujr": "Gujarati", "Guru": "Gurmukhi", "Hang": "Hangul", "Hani": "Han",
	"Hebr": "Hebrew", "Hira": "Hiragana", "Kana": "Katakana", "Khmr": "Khmer", "Knda": "Kannada", "Laoo": "Lao",
	"Latn": "Latin", "Mlym": "Malayalam", "Mong": "Mongolian", "Mymr": "Myanmar", "Orya": "Oriya", "Sinh": "Sinhala",
	"Taml": "Tamil", "Telu": "Telugu", "Thaa": "Thaana", "Thai": "Thai", "Tibt": "Tibetan", "Zyyy": "Common",
	"Zinh": "Inherited", "Qaai": "Inherited", "Zzzz": "Unknown",
}

// propertySet resolves the body of \p{…}.
func propertySet(name string) (runeSet, error) {
	key, value, hasValue := strings.Cut(name, "=")
	if hasValue {
		switch key {
		case "General_Category", "gc":
			return categorySet(value)
		case "Script", "sc", "Script_Extensions", "scx":
			if alias, ok := scriptAliases[value]; ok {
				value = alias
			}
			if t, ok := unicode.Scripts[value]; ok {
				return tableSet(t), nil
			}
			return nil, fmt.Errorf("invalid property name")
		}
		return nil, fmt.Errorf("invalid property name")
	}
	if s, err := categorySet(name); err == nil {
		return s, nil
	}
	if r, ok := emojiProperties[name]; ok {
		var s runeSet
		for i := 0; i+1 < len(r); i += 2 {
			s = append(s, [2]rune{r[i], r[i+1]})
		}
		return s, nil
	}
	cat := func(names ...string) runeSet {
		var s runeSet
		for _, n := range names {
			s = append(s, tableSet(unicode.Categories[n])...)
		}
		return s
	}
	prop := func(names ...string) runeSet {
		var s runeSet
		for _, n := range names {
			s = append(s, tableSet(unicode.Properties[n])...)
		}
		return s
	}
	switch name {
	case "Any":
		return runeSet{{0, unicode.MaxRune}}, nil
	case "ASCII":
		return runeSet{{0, 0x7F}}, nil
	case "Assigned":
		s, _ := categorySet("Cn")
		return s.complement(), nil
	case "Alphabetic", "Alpha":
		return append(cat("L", "Nl"), prop("Other_Alphabetic")...).normalize(), nil
	case "Lowercase", "Lower":
		return append(cat("Ll"), prop("Other_Lowercase")...).normalize(), nil
	case "Uppercase", "Upper":
		return append(cat("Lu"), prop("Other_Uppercase")...).normalize(), nil
	case "White_Space", "space":
		return prop("White_Space"), nil
	case "ID_Start", "IDS":
		return append(cat("L", "Nl"), prop("Other_ID_Start")...).normalize().subtract(append(prop("Pattern_Syntax"), prop("Pattern_White_Space")...)), nil
	case "ID_Continue", "IDC":
		return append(cat("L", "Nl", "Mn", "Mc", "Nd", "Pc"), prop("Other_ID_Start", "Other_ID_Continue")...).normalize().subtract(append(prop("Pattern_Syntax"), prop("Pattern_White_Space")...)), nil
	case "Math":
		return append(cat("Sm"), prop("Other_Math")...).normalize(), nil
	}
	for long, short := range map[string]string{"AHex": "ASCII_Hex_Digit", "Hex": "Hex_Digit", "Dia": "Diacritic", "Ext": "Extender",
		"Ideo": "Ideographic", "QMark": "Quotation_Mark", "Term": "Terminal_Punctuation", "UIdeo": "Unified_Ideograph",
		"VS": "Variation_Selector", "RI": "Regional_Indicator", "Join_C": "Join_Control", "NChar": "Noncharacter_Code_Point",
		"Pat_WS": "Pattern_White_Space", "Pat_Syn": "Pattern_Syntax", "SD": "Soft_Dotted", "STerm": "Sentence_Terminal",
		"Dep": "Deprecated", "Radical": "Radical", "Bidi_C": "Bidi_Control"} {
		if name == long {
			name = short
		}
	}
	if t, ok := unicode.Properties[name]; ok {
		return tableSet(t), nil
	}
	switch name {
	case "RGI_Emoji", "Basic_Emoji", "Emoji_Keycap_Sequence", "RGI_Emoji_Flag_Sequence", "RGI_Emoji_Modifier_Sequence",
		"RGI_Emoji_Tag_Sequence", "RGI_Emoji_ZWJ_Sequence":
		return nil, fmt.Errorf("\\p{%s} is a property of strings, which is not supported here; use \\p{Extended_Pictographic} or \\p{Emoji_Presentation} (with \\u200d and \\ufe0f for sequences)", name)
	}
	return nil, fmt.Errorf("invalid property name")
}

func categorySet(name string) (runeSet, error) {
	if long, ok := generalCategories[name]; ok {
		name = long
	}
	switch name {
	case "LC":
		return append(append(tableSet(unicode.Lu), tableSet(unicode.Ll)...), tableSet(unicode.Lt)...).normalize(), nil
	case "Cn", "C":
		var assigned runeSet
		for n, t := range unicode.Categories {
			if len(n) == 1 {
				assigned = append(assigned, tableSet(t)...)
			}
		}
		cn := assigned.normalize().complement()
		if name == "Cn" {
			return cn, nil
		}
		return append(cn, tableSet(unicode.C)...).normalize(), nil
	}
	if t, ok := unicode.Categories[name]; ok {
		return tableSet(t), nil
	}
	return nil, fmt.Errorf("invalid property name")
}

// classParser rewrites a u- or v-mode pattern: property escapes and (in v mode) every
// character class become explicit ranges.
type classParser struct {
	src  []rune
	i    int
	sets bool // v mode
	out  strings.Builder
}

func (p *classParser) translate() (string, error) {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.src) && (p.src[p.i+1] == 'p' || p.src[p.i+1] == 'P'):
			s, err := p.property()
			if err != nil {
				return "", err
			}
			p.out.WriteString(classText(s, false))
		case c == '\\' && p.i+1 < len(p.src):
			p.out.WriteRune(c)
			p.out.WriteRune(p.src[p.i+1])
			p.i += 2
		case c == '[':
			if !p.sets && !p.classHasProperty() {
				p.copyClass()
				continue
			}
			s, negate, err := p.class()
			if err != nil {
				return "", err
			}
			p.out.WriteString(classText(s, negate))
		default:
			p.out.WriteRune(c)
			p.i++
		}
	}
	return p.out.String(), nil
}

// classHasProperty reports whether the class starting at p.i contains \p or \P.
func (p *classParser) classHasProperty() bool {
	for j := p.i + 1; j < len(p.src); j++ {
		switch p.src[j] {
		case '\\':
			if j+1 < len(p.src) && (p.src[j+1] == 'p' || p.src[j+1] == 'P') {
				return true
			}
			j++
		case ']':
			return false
		}
	}
	return false
}

// copyClass copies a u-mode class as it is.
func (p *classParser) copyClass() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		p.out.WriteRune(c)
		p.i++
		if c == '\\' && p.i < len(p.src) {
			p.out.WriteRune(p.src[p.i])
			p.i++
			continue
		}
		if c == ']' {
			return
		}
	}
}

// property reads \p{…} or \P{…} at p.i.
func (p *classParser) property() (runeSet, error) {
	negate := p.src[p.i+1] == 'P'
	p.i += 2
	if p.i >= len(p.src) || p.src[p.i] != '{' {
		return nil, fmt.Errorf("invalid property name")
	}
	end := slices.Index(p.src[p.i:], '}')
	if end < 0 {
		return nil, fmt.Errorf("invalid property name")
	}
	name := string(p.src[p.i+1 : p.i+end])
	p.i += end + 1
	s, err := propertySet(name)
	if err != nil {
		return nil, err
	}
	if negate {
		return s.complement(), nil
	}
	return s, nil
}

// class reads a class from its '[' up to and including its ']'; negate reports a '^'
// after the '['.
func (p *classParser) class() (set runeSet, negate bool, err error) {
	p.i++
	negate = p.i < len(p.src) && p.src[p.i] == '^'
	if negate {
		p.i++
	}
	set, err = p.classBody()
	return set, negate, err
}

// classBody reads a class body after '[' (and '^'), up to and including its ']'.
func (p *classParser) classBody() (runeSet, error) {
	var set runeSet
	op := byte(0) // '-' for --, '&' for &&, once an operator appeared
	var acc runeSet
	first := true
	for {
		if p.i >= len(p.src) {
			return nil, fmt.Errorf("unterminated character class")
		}
		if p.src[p.i] == ']' {
			p.i++
			break
		}
		if p.sets && p.i+1 < len(p.src) && (p.src[p.i] == '-' && p.src[p.i+1] == '-' || p.src[p.i] == '&' && p.src[p.i+1] == '&') {
			if first {
				acc = set
				first = false
			} else {
				acc = apply(acc, op, set)
			}
			op = byte(p.src[p.i])
			p.i += 2
			set = nil
			continue
		}
		item, single, lo, err := p.classAtom()
		if err != nil {
			return nil, err
		}
		if single && p.i+1 < len(p.src) && p.src[p.i] == '-' && p.src[p.i+1] != ']' && !(p.sets && p.src[p.i+1] == '-') {
			p.i++
			_, single2, hi, err := p.classAtom()
			if err != nil {
				return nil, err
			}
			if !single2 || hi < lo {
				return nil, fmt.Errorf("range out of order in character class")
			}
			set = append(set, [2]rune{lo, hi})
			continue
		}
		set = append(set, item...)
	}
	if !first {
		return apply(acc, op, set), nil
	}
	return set.normalize(), nil
}

func apply(a runeSet, op byte, b runeSet) runeSet {
	if op == '-' {
		return a.normalize().subtract(b)
	}
	return a.normalize().intersect(b)
}

var (
	digitSet = runeSet{{'0', '9'}}
	wordSet  = runeSet{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	spaceSet = runeSet{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029},
		{0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}}
)

// classAtom reads one class atom: a character (single, with its code point), an escape
// standing for a set, or (v mode) a nested class.
func (p *classParser) classAtom() (runeSet, bool, rune, error) {
	c := p.src[p.i]
	if c == '[' && p.sets {
		s, negate, err := p.class()
		if err != nil {
			return nil, false, 0, err
		}
		if negate {
			s = s.complement()
		}
		return s, false, 0, nil
	}
	if c != '\\' {
		p.i++
		return runeSet{{c, c}}, true, c, nil
	}
	if p.i+1 >= len(p.src) {
		return nil, false, 0, fmt.Errorf("\\ at end of pattern")
	}
	e := p.src[p.i+1]
	switch e {
	case 'p', 'P':
		s, err := p.property()
		return s, false, 0, err
	case 'd', 'D', 'w', 'W', 's', 'S':
		p.i += 2
		s := map[rune]runeSet{'d': digitSet, 'w': wordSet, 's': spaceSet}[unicode.ToLower(e)]
		if unicode.IsUpper(e) {
			s = s.complement()
		}
		return s, false, 0, nil
	case 'q':
		if p.sets {
			return nil, false, 0, fmt.Errorf("\\q{…} string literals in classes are not supported here; use an alternation (?:abc|[xyz])")
		}
	}
	p.i += 2
	var r rune
	switch e {
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	case 'v':
		r = '\v'
	case 'f':
		r = '\f'
	case 'b':
		r = '\b'
	case '0':
		r = 0
	case 'c':
		if p.i < len(p.src) {
			r = p.src[p.i] % 32
			p.i++
		}
	case 'x':
		r = p.hex(2)
	case 'u':
		if p.i < len(p.src) && p.src[p.i] == '{' {
			end := slices.Index(p.src[p.i:], '}')
			if end < 0 {
				return nil, false, 0, fmt.Errorf("invalid Unicode escape")
			}
			v, err := strconv.ParseUint(string(p.src[p.i+1:p.i+end]), 16, 32)
			if err != nil || v > unicode.MaxRune {
				return nil, false, 0, fmt.Errorf("invalid Unicode escape")
			}
			r = rune(v)
			p.i += end + 1
		} else {
			r = p.hex(4)
			if utf16.IsSurrogate(r) && r < 0xDC00 && p.i+5 < len(p.src) && p.src[p.i] == '\\' && p.src[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				if lo := p.hex(4); lo >= 0xDC00 && lo < 0xE000 {
					r = utf16.DecodeRune(r, lo)
				} else {
					p.i = save
				}
			}
		}
	default:
		r = e
	}
	return runeSet{{r, r}}, true, r, nil
}

func (p *classParser) hex(n int) rune {
	if p.i+n > len(p.src) {
		return 0
	}
	v, err := strconv.ParseUint(string(p.src[p.i:p.i+n]), 16, 32)
	if err != nil {
		return 0
	}
	p.i += n
	return rune(v)
}

// classText renders a set as a u-mode class. Surrogate code points are left out: they cannot
// be matched in u mode anyway, and Go's engine does not accept them.
func classText(s runeSet, negate bool) string {
	s = s.normalize().subtract(runeSet{{0xD800, 0xDFFF}})
	var b strings.Builder
	b.WriteByte('[')
	if negate {
		b.WriteByte('^')
	}
	if len(s) == 0 && !negate {
		return "[^\\u{0}-\\u{10FFFF}]"
	}
	for _, r := range s {
		fmt.Fprintf(&b, "\\u{%X}", r[0])
		if r[1] > r[0] {
			fmt.Fprintf(&b, "-\\u{%X}", r[1])
		}
	}
	b.WriteByte(']')
	return b.String()
}

// installRegexp replaces the global RegExp with the wrapper of prelude/regexp.js.
func installRegexp(h platformHost) error {
	rt := h.runtime()
	natives := nativesObject(h, map[string]func(goja.FunctionCall) goja.Value{
		"translate": func(call goja.FunctionCall) goja.Value {
			t, ok, err := translateRegexp(call.Argument(0).String(), call.Argument(1).String())
			if err != nil {
				panic(newSyntaxError(rt, err.Error()))
			}
			if !ok {
				return goja.Null()
			}
			return rt.NewArray(t.pattern, t.flags)
		},
		"indices": func(call goja.FunctionCall) goja.Value { return matchIndices(rt, call) },
		"syntaxMessage": func(call goja.FunctionCall) goja.Value {
			return rt.ToValue(regexpSyntaxMessage(call.Argument(0).String(), call.Argument(1).String(), call.Argument(2).String()))
		},
	})
	return tryJS(h, func() { h.prelude("regexp.js", natives) })
}

func newSyntaxError(rt *goja.Runtime, msg string) *goja.Object {
	e, err := rt.New(rt.Get("SyntaxError"), rt.ToValue(msg))
	must(err)
	return e
}

// matchIndices(pattern, flags, input, index) computes the d flag's indices: for the match of
// the translated pattern at index in input, [start, end] (UTF-16 offsets) per group, or
// undefined for a group that did not participate, and the group names.
func matchIndices(rt *goja.Runtime, call goja.FunctionCall) goja.Value {
	pattern, flags := call.Argument(0).String(), call.Argument(1).String()
	input := call.Argument(2).String()
	at := int(call.Argument(3).ToInteger())
	opts := regexp2.ECMAScript
	unicodeMode := strings.Contains(flags, "u")
	for _, c := range flags {
		switch c {
		case 'i':
			opts |= regexp2.IgnoreCase
		case 'm':
			opts |= regexp2.Multiline
		case 's':
			opts |= regexp2.Singleline
		case 'u':
			opts |= regexp2.Unicode
		}
	}
	re, err := regexp2.Compile(pattern, opts)
	if err != nil {
		return goja.Null()
	}
	// The input as regexp2 sees it: code points in u mode, UTF-16 code units otherwise, with
	// the UTF-16 offset of each.
	units := utf16.Encode([]rune(input))
	var runes []rune
	var offsets []int
	if unicodeMode {
		for i := 0; i < len(units); {
			offsets = append(offsets, i)
			if utf16.IsSurrogate(rune(units[i])) && i+1 < len(units) {
				if c := utf16.DecodeRune(rune(units[i]), rune(units[i+1])); c != unicode.ReplacementChar {
					runes = append(runes, c)
					i += 2
					continue
				}
			}
			runes = append(runes, rune(units[i]))
			i++
		}
	} else {
		for i, u := range units {
			runes = append(runes, rune(u))
			offsets = append(offsets, i)
		}
	}
	offsets = append(offsets, len(units))
	start := sort.SearchInts(offsets, at)
	m, err := re.FindRunesMatchStartingAt(runes, start)
	if err != nil || m == nil {
		return goja.Null()
	}
	groups := m.Groups()
	pairs := make([]any, len(groups))
	names := make([]any, len(groups))
	for i, g := range groups {
		names[i] = g.Name
		if len(g.Captures) == 0 {
			pairs[i] = goja.Undefined()
			continue
		}
		pairs[i] = rt.NewArray(offsets[g.RuneIndex], offsets[g.RuneIndex+g.RuneLength])
	}
	return rt.NewArray(rt.NewArray(pairs...), rt.NewArray(names...))
}

// regexpDetails map the Go regexp parsers' complaints (regexp/syntax's, which goja's re2 and
// regexp2 paths quote) to V8's.
var regexpDetails = []struct{ goText, v8 string }{
	{"invalid nested repetition operator", "Nothing to repeat"},
	{"missing argument to repetition operator", "Nothing to repeat"},
	{"invalid repeat count", "numbers out of order in {} quantifier"},
	{"invalid character class range", "Range out of order in character class"},
	{"trailing backslash", "\\ at end of pattern"},
	{"invalid capture group name", "Invalid capture group name"},
	{"invalid named capture", "Invalid capture group name"},
	{"duplicate capture group name", "Duplicate capture group name"},
	{"reference to undefined group name", "Invalid named capture referenced"},
	{"missing closing )", "Unterminated group"},
	{"unexpected )", "Unmatched ')'"},
	{"missing closing ]", "Unterminated character class"},
	{"invalid escape sequence", "Invalid escape"},
	{"invalid character class", "Invalid character class"},
	{"invalid or unsupported Perl syntax", "Invalid group"},
}

// regexpSyntaxMessage words a RegExp construction's SyntaxError as V8 does:
// "Invalid regular expression: /<source>/<flags>: <what>". goja says only "Unterminated
// group", or quotes a Go parser ("Invalid regular expression (re2): a** (error parsing regexp:
// invalid nested repetition operator: `**`)"). Bad flags keep their message, V8's already.
func regexpSyntaxMessage(source, flags, msg string) string {
	const prefix = "Invalid regular expression: /"
	if strings.HasPrefix(msg, "Invalid flags") {
		return msg
	}
	if strings.HasPrefix(msg, prefix) {
		// The sandbox's own translation: capitalize the detail, as V8 does.
		if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
			return msg[:i+2] + strings.ToUpper(msg[i+2:i+3]) + msg[i+3:]
		}
		return msg
	}
	detail := msg
	if _, goText, found := strings.Cut(msg, "(error parsing regexp: "); found {
		detail = strings.TrimRight(goText, ")")
		for _, d := range regexpDetails {
			if strings.HasPrefix(goText, d.goText) {
				detail = d.v8
				break
			}
		}
	}
	return prefix + source + "/" + flags + ": " + detail
}
