package intl

import (
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// numberOptions are a NumberFormat's resolved options (ECMA-402 InitializeNumberFormat).
type numberOptions struct {
	locale           string
	dataLocale       string
	nu               string
	style            string
	currency         string
	currencyDisplay  string
	currencySign     string
	unit             string
	unitDisplay      string
	minInt           int
	minFD, maxFD     int
	minSD, maxSD     int
	roundingType     string // fractionDigits, significantDigits, morePrecision, lessPrecision
	roundingPriority string
	roundingIncr     int
	roundingMode     string
	trailingZero     string
	notation         string
	compactDisplay   string
	useGrouping      string // "always", "auto", "min2", "false"
	signDisplay      string
}

// numberFormat is a resolved, immutable NumberFormat, shared by every runtime.
type numberFormat struct {
	opt     numberOptions
	ld      *localeData
	sys     *numberSystemData // patterns
	sym     map[string]string // symbols
	digits  digitSet          // the numbering system's digits; nil for latn
	plural  *pluralRules
	minGrp  int // the locale's minimum grouping digits
	pattern *numberPattern
	decimal *numberPattern
}

type part struct{ typ, value string }

func (p part) text() string { return p.value }

var (
	numberFormatCache sync.Map // option key → *numberFormat
	numberCacheSize   atomic.Int64
)

// maxCachedFormats bounds each formatter cache; past it formatters are built per use.
const maxCachedFormats = 4096

var sanctionedUnits = map[string]bool{}

func init() {
	for _, u := range strings.Fields(`acre bit byte celsius centimeter day degree fahrenheit fluid-ounce foot gallon
		gigabit gigabyte gram hectare hour inch kilobit kilobyte kilogram kilometer liter megabit megabyte meter
		microsecond mile mile-scandinavian milliliter millimeter millisecond minute month nanosecond ounce percent
		petabyte pound second stone terabit terabyte week yard year`) {
		sanctionedUnits[u] = true
	}
}

func isWellFormedUnit(u string) bool {
	if sanctionedUnits[u] {
		return true
	}
	num, den, ok := strings.Cut(u, "-per-")
	return ok && sanctionedUnits[num] && sanctionedUnits[den]
}

func isWellFormedCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		ch := c[i] | 0x20
		if ch < 'a' || ch > 'z' {
			return false
		}
	}
	return true
}

// numberFormatFor reads the options of a NumberFormat in the order ECMA-402 reads them and
// returns the (cached) formatter.
func (e *env) numberFormatFor(locales, options goja.Value, service string, styleDefault string) *numberFormat {
	requested := e.canonicalizeLocaleList(locales)
	o := e.coerceOptions(options)
	var key strings.Builder
	key.WriteString(e.localesKey(requested))
	opt := numberOptions{}
	e.localeMatcher(o, service)
	nu := e.stringOption(o, "numberingSystem", service, nil, "")
	if nu != "" && !isWellFormedType(nu) {
		e.throwRange("Invalid numberingSystem : %s", clip(nu))
	}
	nu = asciiLower(nu)
	opt.style = e.stringOption(o, "style", service, []string{"decimal", "percent", "currency", "unit"}, styleDefault)
	cur := e.stringOption(o, "currency", service, nil, "")
	if cur != "" || !goja.IsUndefined(getValue(o, "currency")) {
		if !isWellFormedCurrency(cur) {
			e.throwRange("Invalid currency code : %s", clip(cur))
		}
	}
	opt.currencyDisplay = e.stringOption(o, "currencyDisplay", service, []string{"code", "symbol", "narrowSymbol", "name"}, "symbol")
	opt.currencySign = e.stringOption(o, "currencySign", service, []string{"standard", "accounting"}, "standard")
	unit := e.stringOption(o, "unit", service, nil, "")
	if !goja.IsUndefined(getValue(o, "unit")) || unit != "" {
		if !isWellFormedUnit(unit) {
			e.throwRange("Invalid unit argument for Intl.NumberFormat() '%s'", clip(unit))
		}
	}
	opt.unitDisplay = e.stringOption(o, "unitDisplay", service, []string{"short", "narrow", "long"}, "short")
	if opt.style == "currency" {
		if cur == "" {
			e.throwType("Currency code is required with currency style.")
		}
		opt.currency = strings.ToUpper(cur)
	}
	if opt.style == "unit" {
		if unit == "" {
			e.throwType("Unit is required with unit style.")
		}
		opt.unit = unit
	}
	mnfdDefault, mxfdDefault := 0, 3
	switch opt.style {
	case "currency":
		d := currencyDigits(opt.currency)
		mnfdDefault, mxfdDefault = d, d
	case "percent":
		mxfdDefault = 0
	}
	opt.notation = e.stringOption(o, "notation", service, []string{"standard", "scientific", "engineering", "compact"}, "standard")
	e.digitOptions(o, &opt, mnfdDefault, mxfdDefault)
	opt.compactDisplay = e.stringOption(o, "compactDisplay", service, []string{"short", "long"}, "short")
	defGrouping := "auto"
	if opt.notation == "compact" {
		defGrouping = "min2"
	}
	opt.useGrouping = e.groupingOption(o, service, defGrouping)
	opt.signDisplay = e.stringOption(o, "signDisplay", service, []string{"auto", "never", "always", "exceptZero", "negative"}, "auto")

	key.WriteString(nu)
	key.WriteByte('|')
	key.WriteString(optionKey(opt))
	k := key.String()
	if f, ok := numberFormatCache.Load(k); ok {
		return f.(*numberFormat)
	}
	f := newNumberFormat(e, requested, nu, opt)
	if numberCacheSize.Load() < maxCachedFormats {
		if _, loaded := numberFormatCache.LoadOrStore(k, f); !loaded {
			numberCacheSize.Add(1)
		}
	}
	return f
}

func optionKey(o numberOptions) string {
	return strings.Join([]string{o.style, o.currency, o.currencyDisplay, o.currencySign, o.unit, o.unitDisplay,
		strconv.Itoa(o.minInt), strconv.Itoa(o.minFD), strconv.Itoa(o.maxFD), strconv.Itoa(o.minSD), strconv.Itoa(o.maxSD),
		o.roundingType, o.roundingPriority, strconv.Itoa(o.roundingIncr), o.roundingMode, o.trailingZero, o.notation,
		o.compactDisplay, o.useGrouping, o.signDisplay}, "|")
}

// groupingOption is GetBooleanOrStringNumberFormatOption for useGrouping, as V8 11 reads it.
func (e *env) groupingOption(o *goja.Object, service, fallback string) string {
	v := getValue(o, "useGrouping")
	if goja.IsUndefined(v) {
		return fallback
	}
	if b, ok := v.Export().(bool); ok && b {
		return "always"
	}
	if !v.ToBoolean() {
		return "false"
	}
	s := e.toString(v)
	switch s {
	case "true", "false":
		return fallback
	case "min2", "auto", "always":
		return s
	}
	e.throwRange("Value %s out of range for %s options property useGrouping", clip(s), service)
	return ""
}

var roundingIncrements = map[int]bool{1: true, 2: true, 5: true, 10: true, 20: true, 25: true, 50: true, 100: true,
	200: true, 250: true, 500: true, 1000: true, 2000: true, 2500: true, 5000: true}

// digitOptions is ECMA-402 SetNumberFormatDigitOptions (ES2023).
func (e *env) digitOptions(o *goja.Object, opt *numberOptions, mnfdDefault, mxfdDefault int) {
	opt.minInt = e.numberOption(o, "minimumIntegerDigits", 1, 21, 1)
	mnfd := getValue(o, "minimumFractionDigits")
	mxfd := getValue(o, "maximumFractionDigits")
	mnsd := getValue(o, "minimumSignificantDigits")
	mxsd := getValue(o, "maximumSignificantDigits")
	opt.roundingIncr = e.numberOption(o, "roundingIncrement", 1, 5000, 1)
	if !roundingIncrements[opt.roundingIncr] {
		e.throwRange("roundingIncrement value is out of range.")
	}
	opt.roundingMode = e.stringOption(o, "roundingMode", "Intl.NumberFormat", []string{"ceil", "floor", "expand", "trunc", "halfCeil", "halfFloor", "halfExpand", "halfTrunc", "halfEven"}, "halfExpand")
	priority := e.stringOption(o, "roundingPriority", "Intl.NumberFormat", []string{"auto", "morePrecision", "lessPrecision"}, "auto")
	opt.trailingZero = e.stringOption(o, "trailingZeroDisplay", "Intl.NumberFormat", []string{"auto", "stripIfInteger"}, "auto")
	if opt.roundingIncr != 1 {
		mxfdDefault = mnfdDefault
	}
	hasSd := !goja.IsUndefined(mnsd) || !goja.IsUndefined(mxsd)
	hasFd := !goja.IsUndefined(mnfd) || !goja.IsUndefined(mxfd)
	needSd, needFd := true, true
	if priority == "auto" {
		needSd = hasSd
		if needSd || !hasFd && opt.notation == "compact" {
			needFd = false
		}
	}
	if needSd {
		if hasSd {
			opt.minSD = e.defaultNumber(mnsd, "minimumSignificantDigits", 1, 21, 1)
			opt.maxSD = e.defaultNumber(mxsd, "maximumSignificantDigits", opt.minSD, 21, 21)
		} else {
			opt.minSD, opt.maxSD = 1, 21
		}
	}
	if needFd {
		if hasFd {
			const unset = -1
			lo := e.defaultNumber(mnfd, "minimumFractionDigits", 0, 100, unset)
			hi := e.defaultNumber(mxfd, "maximumFractionDigits", 0, 100, unset)
			switch {
			case lo == unset:
				lo = min(mnfdDefault, hi)
			case hi == unset:
				hi = max(mxfdDefault, lo)
			case lo > hi:
				e.throwRange("maximumFractionDigits value is out of range.")
			}
			opt.minFD, opt.maxFD = lo, hi
		} else {
			opt.minFD, opt.maxFD = mnfdDefault, mxfdDefault
		}
	}
	switch {
	case !needSd && !needFd:
		opt.minFD, opt.maxFD, opt.minSD, opt.maxSD = 0, 0, 1, 2
		opt.roundingType, opt.roundingPriority = "morePrecision", "morePrecision"
	case priority == "auto":
		opt.roundingPriority = "auto"
		if needSd {
			opt.roundingType = "significantDigits"
		} else {
			opt.roundingType = "fractionDigits"
		}
	default:
		opt.roundingType, opt.roundingPriority = priority, priority
	}
	if opt.roundingIncr != 1 {
		if opt.roundingType != "fractionDigits" {
			e.throwType("RoundingType is not fractionDigits")
		}
		if opt.maxFD != opt.minFD {
			e.throwRange("maximumFractionDigits not equal to minimumFractionDigits")
		}
	}
}

func currencyDigits(code string) int {
	if d, ok := mustSupplemental().CurrencyDigits[code]; ok {
		return d
	}
	return 2
}

// numberingSystems answers the "nu" key: every numeric system CLDR defines.
func numberingSystemKey(nu string, hasOpt bool) keySpec {
	return keySpec{
		key: "nu", option: nu, hasOpt: hasOpt,
		supports: func(_ string, v string) bool {
			_, ok := mustSupplemental().NumberingSystems[v]
			return ok
		},
		def: func(data string) string {
			ld, err := loadLocale(data)
			if err != nil || ld.Numbers.NU == "" {
				return "latn"
			}
			return ld.Numbers.NU
		},
	}
}

func newNumberFormat(e *env, requested []langTag, nu string, opt numberOptions) *numberFormat {
	s := mustSupplemental()
	r := e.resolveLocale(requested, generalAvailable(s), []keySpec{numberingSystemKey(nu, nu != "")})
	ld, err := loadLocale(r.data)
	if err != nil {
		panic(err)
	}
	opt.locale = r.tag.String()
	opt.dataLocale = r.data
	opt.nu = r.values["nu"]
	f := &numberFormat{opt: opt, ld: ld}
	f.setSystem(opt.nu)
	f.plural = pluralRulesFor(pluralLang(r.data), false)
	f.minGrp = ld.Numbers.MinimumGroupingDigits
	if f.minGrp < 1 {
		f.minGrp = 1
	}
	f.decimal = parseNumberPattern(f.sys.Decimal)
	switch opt.style {
	case "percent":
		f.pattern = parseNumberPattern(f.sys.Percent)
	case "currency":
		if opt.currencyDisplay == "name" {
			f.pattern = f.decimal
			break
		}
		pat, alpha, noSym := f.sys.Currency, f.sys.CurrencyAlpha, f.sys.CurrencyNoSymbol
		_ = noSym
		if opt.currencySign == "accounting" {
			pat, alpha = f.sys.Accounting, f.sys.AccountingAlpha
		}
		if alpha != "" && alpha != pat && f.alphaNextToNumber(pat) {
			pat = alpha
		}
		f.pattern = parseNumberPattern(pat)
	default:
		f.pattern = f.decimal
	}
	if opt.notation == "scientific" || opt.notation == "engineering" {
		sci := parseNumberPattern(f.sys.Scientific)
		base := *f.pattern
		base.scientific = true
		base.primary, base.secondary = 0, 0
		_ = sci
		f.pattern = &base
	}
	return f
}

// setSystem picks the patterns and symbols of numbering system nu: the locale's own, or
// its default system's patterns with root's symbols for nu (as ICU falls back).
func (f *numberFormat) setSystem(nu string) {
	ld := f.ld
	def := ld.Numbers.Systems[ld.Numbers.NU]
	if def == nil {
		def = ld.Numbers.Systems["latn"]
	}
	f.sys = def
	f.sym = def.Symbols
	if own := ld.Numbers.Systems[nu]; own != nil {
		f.sys = own
		f.sym = own.Symbols
	} else if rs := mustSupplemental().RootSymbols[nu]; rs != nil {
		f.sym = rs
	}
	if nu != "latn" {
		if d := mustSupplemental().NumberingSystems[nu]; d != "" {
			f.digits = make([]string, 0, 10)
			for _, r := range d {
				f.digits = append(f.digits, string(r))
			}
			if len(f.digits) != 10 {
				f.digits = nil
			}
		}
	}
}

// currencyText is what stands for the currency in symbol, narrowSymbol and code display.
func (f *numberFormat) currencyText() string {
	code := f.opt.currency
	c := f.ld.Numbers.Currencies[code]
	switch f.opt.currencyDisplay {
	case "code":
		return code
	case "narrowSymbol":
		if c.Narrow != "" {
			return c.Narrow
		}
		fallthrough
	default:
		if c.Symbol != "" {
			return c.Symbol
		}
		return code
	}
}

// currencyName is the plural-dependent long name of the currency.
func (f *numberFormat) currencyName(category string) string {
	c := f.ld.Numbers.Currencies[f.opt.currency]
	if n := c.Plural[category]; n != "" {
		return n
	}
	if n := c.Plural["other"]; n != "" {
		return n
	}
	if c.Name != "" {
		return c.Name
	}
	return f.opt.currency
}

// alphaNextToNumber reports whether the currency text touches the number with a letter,
// which selects CLDR's alphaNextToNumber pattern.
func (f *numberFormat) alphaNextToNumber(pattern string) bool {
	text := f.currencyText()
	if text == "" {
		return false
	}
	p := parseNumberPattern(pattern)
	if len(p.posPrefix) > 0 && p.posPrefix[len(p.posPrefix)-1].kind == affixCurrency {
		r, _ := utf8.DecodeLastRuneInString(text)
		return unicode.IsLetter(r)
	}
	if len(p.posSuffix) > 0 && p.posSuffix[0].kind == affixCurrency {
		r, _ := utf8.DecodeRuneInString(text)
		return unicode.IsLetter(r)
	}
	return false
}

// ---- formatting ----

// toIntlMathematicalValue is ECMA-402 ToIntlMathematicalValue.
func (e *env) toIntlMathematicalValue(v goja.Value) decimal {
	if v == nil {
		return decimal{nan: true}
	}
	if goja.IsBigInt(v) {
		if b, ok := v.Export().(*big.Int); ok {
			return decimalFromBigInt(b)
		}
	}
	if goja.IsString(v) {
		d, ok := decimalFromString(v.String())
		if !ok {
			e.throwRange("Numeric string is too long to format (more than %d characters)", maxNumericString)
		}
		return d
	}
	if _, ok := v.(*goja.Symbol); ok {
		e.throwType("Cannot convert a Symbol value to a number")
	}
	if o, ok := v.(*goja.Object); ok {
		// ToPrimitive with hint number: a BigInt or String wrapper keeps its exact value.
		prim := o.ToNumber()
		return decimalFromFloat(prim.ToFloat())
	}
	return decimalFromFloat(v.ToFloat())
}

// round applies the digit options (ECMA-402 FormatNumericToString) to |x|.
func (f *numberFormat) round(x decimal) (r decimal, intPart, fracPart string) {
	mode := unsignedRounding(f.opt.roundingMode, x.neg)
	o := f.opt
	switch o.roundingType {
	case "significantDigits":
		r, intPart, fracPart = x.rawPrecision(o.minSD, o.maxSD, mode)
	case "fractionDigits":
		r, intPart, fracPart = x.rawFixed(o.minFD, o.maxFD, o.roundingIncr, mode)
	default:
		sr, si, sf := x.rawPrecision(o.minSD, o.maxSD, mode)
		fr, fi, ff := x.rawFixed(o.minFD, o.maxFD, o.roundingIncr, mode)
		sMag := precisionMagnitude(x, sr, o.maxSD)
		fMag := -o.maxFD
		useS := sMag <= fMag
		if o.roundingType == "lessPrecision" {
			useS = !useS
		}
		if useS {
			r, intPart, fracPart = sr, si, sf
		} else {
			r, intPart, fracPart = fr, fi, ff
		}
	}
	if o.trailingZero == "stripIfInteger" && strings.Trim(fracPart, "0") == "" {
		fracPart = ""
	}
	if len(intPart) < o.minInt {
		intPart = strings.Repeat("0", o.minInt-len(intPart)) + intPart
	}
	return r, intPart, fracPart
}

// precisionMagnitude is the [[RoundingMagnitude]] of ToRawPrecision: e - p + 1.
func precisionMagnitude(x, rounded decimal, p int) int {
	if len(rounded.digits) == 0 {
		if len(x.digits) == 0 {
			return 1 - p
		}
		return x.magnitude() - p + 1
	}
	return rounded.magnitude() - p + 1
}

// compactPatterns returns the locale's compact patterns for the style.
func (f *numberFormat) compactPatterns() map[string]string {
	if f.opt.style == "currency" && f.opt.currencyDisplay != "name" {
		return f.sys.CurrencyShort
	}
	if f.opt.compactDisplay == "long" && len(f.sys.DecimalLong) > 0 {
		return f.sys.DecimalLong
	}
	return f.sys.DecimalShort
}

// compactExponent is ECMA-402 ComputeExponentForMagnitude for compact notation: the power
// of ten the number is divided by, and the pattern's type (e.g. "1000") or "".
func (f *numberFormat) compactExponent(mag int) (int, string) {
	pats := f.compactPatterns()
	if mag < 3 || len(pats) == 0 {
		return 0, ""
	}
	m := mag
	if m > 14 {
		m = 14
	}
	for ; m >= 3; m-- {
		typ := "1" + strings.Repeat("0", m)
		p, ok := pats[typ+"-count-other"]
		if !ok {
			continue
		}
		np := parseNumberPattern(p)
		if np.zeros == 0 || strings.Trim(p, "0") == "" {
			return 0, ""
		}
		return m - (np.zeros - 1), typ
	}
	return 0, ""
}

// exponentFor is ECMA-402 ComputeExponent.
func (f *numberFormat) exponentFor(x decimal) (int, string) {
	if x.isZero() {
		return 0, ""
	}
	mag := x.magnitude()
	exp, typ := f.magnitudeExponent(mag)
	r, _, _ := f.round(x.shift(-exp))
	if r.isZero() || r.magnitude() == mag-exp {
		return exp, typ
	}
	return f.magnitudeExponent(mag + 1)
}

func (f *numberFormat) magnitudeExponent(mag int) (int, string) {
	switch f.opt.notation {
	case "scientific":
		return mag, ""
	case "engineering":
		return floorDiv(mag, 3) * 3, ""
	case "compact":
		return f.compactExponent(mag)
	}
	return 0, ""
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// format formats x.
func (f *numberFormat) format(x decimal) string {
	return joinParts(f.parts(x))
}

// parts is ECMA-402 PartitionNumberPattern.
func (f *numberFormat) parts(x decimal) []part { return f.pieces(x).all() }

// numberPieces is a formatted number in the layers ICU's range formatting tells apart:
// the number, the pattern's affixes (sign, currency symbol, percent, compact) and the outer
// unit or currency name.
type numberPieces struct {
	outerPre, pre, num, suf, outerSuf []part
}

func (p numberPieces) all() []part {
	out := make([]part, 0, len(p.outerPre)+len(p.pre)+len(p.num)+len(p.suf)+len(p.outerSuf))
	out = append(out, p.outerPre...)
	out = append(out, p.pre...)
	out = append(out, p.num...)
	out = append(out, p.suf...)
	return append(out, p.outerSuf...)
}

func (f *numberFormat) pieces(x decimal) numberPieces {
	var num []part
	var category string
	isZero := false
	var compactType string
	switch {
	case x.nan:
		num = []part{{"nan", f.sym["nan"]}}
		category = "other"
	case x.inf:
		num = []part{{"infinity", f.sym["infinity"]}}
		category = "other"
	default:
		v := x
		if f.opt.style == "percent" {
			v = v.shift(2)
		}
		exp := 0
		if f.opt.notation != "standard" {
			exp, compactType = f.exponentFor(v)
			v = v.shift(-exp)
		}
		r, intPart, fracPart := f.round(v)
		isZero = r.isZero()
		num = f.numberParts(intPart, fracPart)
		if f.opt.notation == "scientific" || f.opt.notation == "engineering" {
			num = append(num, part{"exponentSeparator", f.sym["exponential"]})
			if exp < 0 {
				num = append(num, part{"exponentMinusSign", f.sym["minusSign"]})
				exp = -exp
			}
			num = append(num, part{"exponentInteger", f.digits.local(strconv.Itoa(exp))})
		}
		category = f.plural.category(operands(intPart, fracPart))
	}
	// The sign (ECMA-402 GetNumberFormatPattern).
	neg := x.neg && !x.nan
	sign := 0 // -1 minus, 0 none, 1 plus
	switch f.opt.signDisplay {
	case "auto":
		if neg {
			sign = -1
		}
	case "always":
		if neg {
			sign = -1
		} else {
			sign = 1
		}
	case "exceptZero":
		if !x.nan && !isZero {
			if neg {
				sign = -1
			} else {
				sign = 1
			}
		}
	case "negative":
		if neg && !isZero {
			sign = -1
		}
	}
	pat := f.pattern
	var cpre, csuf []part
	if compactType != "" {
		pats := f.compactPatterns()
		text, ok := pats[compactType+"-count-"+category]
		if !ok {
			text = pats[compactType+"-count-other"]
		}
		cp := parseNumberPattern(text)
		if f.opt.style == "currency" && f.opt.currencyDisplay != "name" {
			pat = cp // the compact currency pattern has the currency in it
		} else {
			cpre, csuf = f.affixParts(cp.posPrefix, true), f.affixParts(cp.posSuffix, true)
		}
	}
	var p numberPieces
	p.pre, p.suf = f.patternAffixes(pat, sign, compactType != "" && pat != f.pattern)
	p.pre = append(p.pre, cpre...)
	p.suf = append(csuf, p.suf...)
	p.num = num
	f.currencySpacing(&p)
	switch f.opt.style {
	case "currency":
		if f.opt.currencyDisplay == "name" {
			pattern := f.sys.UnitPattern[category]
			if pattern == "" {
				pattern = f.sys.UnitPattern["other"]
			}
			if pattern == "" {
				pattern = "{0} {1}"
			}
			pattern = strings.Replace(pattern, "{1}", quoteBraces(f.currencyName(category)), 1)
			p.outerPre, p.outerSuf = aroundNumber(pattern, "currency")
		}
	case "unit":
		p.outerPre, p.outerSuf = aroundNumber(f.unitPattern(category), "unit")
	}
	return p
}

// quoteBraces keeps a name from being read as a placeholder.
func quoteBraces(s string) string { return strings.ReplaceAll(s, "{", "\x00") }

// aroundNumber splits a "{0} unit" pattern into the parts before and after the number:
// white space next to the number is literal, the rest is one part of type typ.
func aroundNumber(pattern, typ string) (pre, suf []part) {
	before, after, ok := strings.Cut(pattern, "{0}")
	if !ok {
		before, after = "", " "+pattern
	}
	before = strings.ReplaceAll(before, "\x00", "{")
	after = strings.ReplaceAll(after, "\x00", "{")
	if t := strings.TrimRightFunc(before, isSpaceOrMark); t != "" {
		pre = append(pre, part{typ, t})
		before = before[len(t):]
	}
	if before != "" {
		pre = append(pre, part{"literal", before})
	}
	if t := strings.TrimLeftFunc(after, isSpaceOrMark); len(t) < len(after) {
		suf = append(suf, part{"literal", after[:len(after)-len(t)]})
		after = t
	}
	if after != "" {
		suf = append(suf, part{typ, after})
	}
	return pre, suf
}

func isSpaceOrMark(r rune) bool {
	return unicode.IsSpace(r) || unicode.In(r, unicode.Z) || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// unitPattern is the unit's "{0} km"-style pattern for the plural category, composing
// X-per-Y units as ICU does: the unit's own pattern, or X inside Y's per-unit pattern, or
// CLDR's compound "per" pattern.
func (f *numberFormat) unitPattern(category string) string {
	width := f.opt.unitDisplay
	units := f.ld.Units[width]
	if p := unitPatternFor(units, f.opt.unit, category); p != "" {
		return p
	}
	numUnit, denUnit, _ := strings.Cut(f.opt.unit, "-per-")
	inner := unitPatternFor(units, numUnit, category)
	if den, ok := units[denUnit]; ok && den.Per != "" {
		return strings.Replace(den.Per, "{0}", inner, 1)
	}
	compound := f.ld.UnitPer[width]
	if compound == "" {
		compound = "{0}/{1}"
	}
	denName := strings.TrimSpace(strings.Replace(unitPatternFor(units, denUnit, "one"), "{0}", "", 1))
	compound = strings.Replace(compound, "{1}", denName, 1)
	return strings.Replace(compound, "{0}", inner, 1)
}

func unitPatternFor(units map[string]unitData, u, category string) string {
	d, ok := units[u]
	if !ok {
		return ""
	}
	if p := d.Pattern[category]; p != "" {
		return p
	}
	return d.Pattern["other"]
}

// numberParts renders the integer and fraction digits with grouping and the numbering
// system's digits.
func (f *numberFormat) numberParts(intPart, fracPart string) []part {
	var out []part
	primary, secondary := f.decimal.primary, f.decimal.secondary
	if f.opt.notation == "scientific" || f.opt.notation == "engineering" {
		primary = 0
	}
	minGrp := 0
	switch f.opt.useGrouping {
	case "always":
		minGrp = 1
	case "auto":
		minGrp = f.minGrp
	case "min2":
		minGrp = max(2, f.minGrp)
	}
	if minGrp > 0 && primary > 0 && len(intPart) >= primary+minGrp {
		var groups []string
		rest := intPart
		groups = append(groups, rest[len(rest)-primary:])
		rest = rest[:len(rest)-primary]
		if secondary <= 0 {
			secondary = primary
		}
		for len(rest) > secondary {
			groups = append(groups, rest[len(rest)-secondary:])
			rest = rest[:len(rest)-secondary]
		}
		if rest != "" {
			groups = append(groups, rest)
		}
		for i := len(groups) - 1; i >= 0; i-- {
			out = append(out, part{"integer", f.digits.local(groups[i])})
			if i > 0 {
				out = append(out, part{"group", f.symbol("group")})
			}
		}
	} else {
		out = append(out, part{"integer", f.digits.local(intPart)})
	}
	if fracPart != "" {
		out = append(out, part{"decimal", f.symbol("decimal")}, part{"fraction", f.digits.local(fracPart)})
	}
	return out
}

// symbol is the decimal or group symbol; currency formatting has its own where the locale
// says so (de-AT groups money with ".", other numbers with a space).
func (f *numberFormat) symbol(name string) string {
	if f.opt.style == "currency" {
		key := "currencyDecimal"
		if name == "group" {
			key = "currencyGroup"
		}
		if v := f.sym[key]; v != "" {
			return v
		}
	}
	return f.sym[name]
}

// digitSet is a numbering system's ten digits; nil for latn.
type digitSet []string

// local writes s's ASCII digits in d.
func (d digitSet) local(s string) string {
	if d == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= '0' && c <= '9' {
			b.WriteString(d[c-'0'])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// patternAffixes are the pattern's prefix and suffix for the sign.
func (f *numberFormat) patternAffixes(p *numberPattern, sign int, compact bool) (pre, suf []part) {
	prefix, suffix := p.posPrefix, p.posSuffix
	switch sign {
	case -1:
		if p.hasNeg {
			prefix, suffix = p.negPrefix, p.negSuffix
		} else {
			prefix = append([]affixToken{{kind: affixMinus}}, prefix...)
		}
	case 1:
		if p.hasNeg && hasMinus(p.negPrefix, p.negSuffix) {
			prefix, suffix = swapSign(p.negPrefix), swapSign(p.negSuffix)
		} else {
			prefix = append([]affixToken{{kind: affixPlus}}, prefix...)
		}
	}
	return f.affixParts(prefix, compact), f.affixParts(suffix, compact)
}

// currencySpacing inserts CLDR's currencySpacing text between a currency symbol that
// does not end in a symbol or space and the digits next to it.
func (f *numberFormat) currencySpacing(p *numberPieces) {
	if f.opt.style != "currency" || f.opt.currencyDisplay == "name" || len(p.num) == 0 {
		return
	}
	sp := f.sys.CurrencySpacing
	if n := len(p.pre); n > 0 && p.pre[n-1].typ == "currency" && sp.Before.InsertBetween != "" {
		r, _ := utf8.DecodeLastRuneInString(p.pre[n-1].value)
		if notSymbolOrSpace(r) && startsWithDigit(p.num) {
			p.pre = append(p.pre, part{"literal", sp.Before.InsertBetween})
		}
	}
	if len(p.suf) > 0 && p.suf[0].typ == "currency" && sp.After.InsertBetween != "" {
		r, _ := utf8.DecodeRuneInString(p.suf[0].value)
		if notSymbolOrSpace(r) && endsWithDigit(p.num) {
			p.suf = append([]part{{"literal", sp.After.InsertBetween}}, p.suf...)
		}
	}
}

func startsWithDigit(num []part) bool {
	return num[0].typ == "integer" || num[0].typ == "nan" || num[0].typ == "infinity"
}

func endsWithDigit(num []part) bool {
	t := num[len(num)-1].typ
	return t == "integer" || t == "fraction" || t == "exponentInteger" || t == "nan" || t == "infinity"
}

func notSymbolOrSpace(r rune) bool {
	return !unicode.IsSymbol(r) && !unicode.IsSpace(r) && !unicode.In(r, unicode.Z)
}

func hasMinus(a, b []affixToken) bool {
	for _, t := range append(append([]affixToken{}, a...), b...) {
		if t.kind == affixMinus {
			return true
		}
	}
	return false
}

func swapSign(toks []affixToken) []affixToken {
	out := make([]affixToken, len(toks))
	for i, t := range toks {
		if t.kind == affixMinus {
			t.kind = affixPlus
		}
		out[i] = t
	}
	return out
}

func (f *numberFormat) affixParts(toks []affixToken, compact bool) []part {
	var out []part
	for _, t := range toks {
		switch t.kind {
		case affixPercent:
			out = append(out, symbolParts("percentSign", f.sym["percentSign"])...)
		case affixPermille:
			out = append(out, symbolParts("permille", f.sym["perMille"])...)
		case affixMinus:
			out = append(out, symbolParts("minusSign", f.sym["minusSign"])...)
		case affixPlus:
			out = append(out, symbolParts("plusSign", f.sym["plusSign"])...)
		case affixCurrency:
			if f.opt.style != "currency" {
				continue
			}
			text := f.currencyText()
			switch t.n {
			case 2:
				text = f.opt.currency
			case 3:
				text = f.currencyName("other")
			case 5:
				if c := f.ld.Numbers.Currencies[f.opt.currency]; c.Narrow != "" {
					text = c.Narrow
				}
			}
			out = append(out, part{"currency", text})
		default:
			if compact {
				out = append(out, compactParts(t.text)...)
			} else {
				out = append(out, part{"literal", t.text})
			}
		}
	}
	return out
}

// symbolParts splits the bidi marks CLDR puts around some symbols ("؜-") off as literals,
// as ICU reports them.
func symbolParts(typ, sym string) []part {
	core := strings.TrimFunc(sym, isBidiMark)
	if core == sym || core == "" {
		return []part{{typ, sym}}
	}
	var out []part
	i := strings.Index(sym, core)
	if i > 0 {
		out = append(out, part{"literal", sym[:i]})
	}
	out = append(out, part{typ, core})
	if rest := sym[i+len(core):]; rest != "" {
		out = append(out, part{"literal", rest})
	}
	return out
}

func isBidiMark(r rune) bool { return r == '\u200e' || r == '\u200f' || r == '\u061c' }

// compactParts splits a compact affix into white space (literal) and the rest (compact).
func compactParts(text string) []part {
	var out []part
	if t := strings.TrimLeftFunc(text, isSpaceOrMark); len(t) < len(text) {
		out = append(out, part{"literal", text[:len(text)-len(t)]})
		text = t
	}
	t := strings.TrimRightFunc(text, isSpaceOrMark)
	if t != "" {
		out = append(out, part{"compact", t})
	}
	if rest := text[len(t):]; rest != "" {
		out = append(out, part{"literal", rest})
	}
	return out
}

// ---- JavaScript ----

func (e *env) installNumberFormat() {
	installFormat(e, formatService[*numberFormat, decimal]{
		name: "NumberFormat",
		construct: func(locales, options goja.Value) *numberFormat {
			return e.numberFormatFor(locales, options, "Intl.NumberFormat", "decimal")
		},
		value:           e.toIntlMathematicalValue,
		format:          (*numberFormat).format,
		parts:           (*numberFormat).parts,
		rangeParts:      e.numberRange,
		resolvedOptions: e.numberResolvedOptions,
	})
}

func arg(args []goja.Value, i int) goja.Value {
	if i < len(args) {
		return args[i]
	}
	return goja.Undefined()
}

func (e *env) numberResolvedOptions(f *numberFormat) *goja.Object {
	o := f.opt
	kv := []any{"locale", o.locale, "numberingSystem", o.nu, "style", o.style}
	if o.style == "currency" {
		kv = append(kv, "currency", o.currency, "currencyDisplay", o.currencyDisplay, "currencySign", o.currencySign)
	}
	if o.style == "unit" {
		kv = append(kv, "unit", o.unit, "unitDisplay", o.unitDisplay)
	}
	// In V8's order: fraction digits before significant digits, then the rounding options.
	kv = append(kv, "minimumIntegerDigits", o.minInt)
	if o.roundingType != "significantDigits" {
		kv = append(kv, "minimumFractionDigits", o.minFD, "maximumFractionDigits", o.maxFD)
	}
	if o.roundingType != "fractionDigits" {
		kv = append(kv, "minimumSignificantDigits", o.minSD, "maximumSignificantDigits", o.maxSD)
	}
	var grouping any = o.useGrouping
	if o.useGrouping == "false" {
		grouping = false
	}
	kv = append(kv, "useGrouping", grouping, "notation", o.notation)
	if o.notation == "compact" {
		kv = append(kv, "compactDisplay", o.compactDisplay)
	}
	kv = append(kv, "signDisplay", o.signDisplay, "roundingIncrement", o.roundingIncr, "roundingMode", o.roundingMode,
		"roundingPriority", o.roundingPriority, "trailingZeroDisplay", o.trailingZero)
	return e.object(kv...)
}

// partsArray makes [{type, value}, ...]; source, when not "", is added to each part.
func (e *env) partsArray(ps []part, source string) *goja.Object {
	vals := make([]any, len(ps))
	for i, p := range ps {
		if source != "" {
			vals[i] = e.object("type", p.typ, "value", p.value, "source", source)
		} else {
			vals[i] = e.object("type", p.typ, "value", p.value)
		}
	}
	return e.rt.NewArray(vals...)
}

type rangePart struct {
	part
	source string
}

func (e *env) rangePartsArray(ps []rangePart) *goja.Object {
	vals := make([]any, len(ps))
	for i, p := range ps {
		vals[i] = e.object("type", p.typ, "value", p.value, "source", p.source)
	}
	return e.rt.NewArray(vals...)
}

// numberRange is ECMA-402 PartitionNumberRangePattern, laid out as ICU does: an
// approximately sign when both ends format alike; otherwise the unit or currency name
// shared when both ends have the same, the pattern affixes shared when they are the same
// and longer than one character, and spaces around the range sign when anything repeats.
func (e *env) numberRange(f *numberFormat, a, b goja.Value) []rangePart {
	if goja.IsUndefined(a) || goja.IsUndefined(b) {
		e.throwType("start or end is undefined")
	}
	x := e.toIntlMathematicalValue(a)
	y := e.toIntlMathematicalValue(b)
	if x.nan || y.nan {
		e.throwRange("Invalid number range: NaN")
	}
	px, py := f.pieces(x), f.pieces(y)
	var out []rangePart
	add := func(ps []part, source string) {
		for _, p := range ps {
			out = append(out, rangePart{p, source})
		}
	}
	if joinParts(px.all()) == joinParts(py.all()) {
		approx := f.sys.Approximately
		if approx == "" {
			approx = "~{0}"
		}
		before, after, _ := strings.Cut(approx, "{0}")
		add(px.outerPre, "shared")
		if before != "" {
			add(symbolParts("approximatelySign", before), "shared")
		}
		add(px.pre, "shared")
		add(px.num, "shared")
		add(px.suf, "shared")
		if after != "" {
			add([]part{{"literal", after}}, "shared")
		}
		add(px.outerSuf, "shared")
		return out
	}
	collapseOuter := samePartList(px.outerPre, py.outerPre) && samePartList(px.outerSuf, py.outerSuf)
	collapseMiddle := collapseOuter && samePartList(px.pre, py.pre) && samePartList(px.suf, py.suf) &&
		utf8.RuneCountInString(joinParts(px.pre)+joinParts(px.suf)) > 1
	pattern := f.sys.Range
	if pattern == "" {
		pattern = "{0}–{1}"
	}
	repeat := !collapseMiddle && len(px.pre)+len(px.suf) > 0 || !collapseOuter && len(px.outerPre)+len(px.outerSuf) > 0
	before, rest, _ := strings.Cut(pattern, "{0}")
	sep, after, _ := strings.Cut(rest, "{1}")
	if repeat {
		if r, _ := utf8.DecodeRuneInString(sep); !unicode.IsSpace(r) {
			sep = " " + sep
		}
		if r, _ := utf8.DecodeLastRuneInString(sep); !unicode.IsSpace(r) {
			sep += " "
		}
	}
	side := func(p numberPieces, source string) {
		if !collapseOuter {
			add(p.outerPre, source)
		}
		if !collapseMiddle {
			add(p.pre, source)
		}
		add(p.num, source)
		if !collapseMiddle {
			add(p.suf, source)
		}
		if !collapseOuter {
			add(p.outerSuf, source)
		}
	}
	if collapseOuter {
		add(px.outerPre, "shared")
	}
	if collapseMiddle {
		add(px.pre, "shared")
	}
	if before != "" {
		add([]part{{"literal", before}}, "shared")
	}
	side(px, "startRange")
	add([]part{{"literal", sep}}, "shared")
	side(py, "endRange")
	if after != "" {
		add([]part{{"literal", after}}, "shared")
	}
	if collapseMiddle {
		add(px.suf, "shared")
	}
	if collapseOuter {
		add(px.outerSuf, "shared")
	}
	return out
}

func samePartList(a, b []part) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func hasAffix(ps []part) bool {
	for _, p := range ps {
		switch p.typ {
		case "integer", "group", "decimal", "fraction", "minusSign", "plusSign":
		default:
			return true
		}
	}
	return false
}

// joinParts is the text of ps: of parts, or of parts with more (unitPart).
func joinParts[P interface{ text() string }](ps []P) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.text())
	}
	return b.String()
}
