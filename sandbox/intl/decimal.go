package intl

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// decimal is an exact decimal number: |value| = 0.d₁d₂… × 10^exp. It carries what
// ECMA-402 formats: the exact value of a double (its shortest round-trip digits, as ICU
// takes it), of a BigInt, or of a numeric string.
type decimal struct {
	neg    bool
	nan    bool
	inf    bool
	digits []byte // '0'…'9', no leading zeros; empty for zero
	exp    int
}

func (d decimal) isZero() bool { return !d.nan && !d.inf && len(d.digits) == 0 }

// magnitude is floor(log10(|d|)) for a nonzero finite d.
func (d decimal) magnitude() int { return d.exp - 1 }

func decimalFromFloat(f float64) decimal {
	var d decimal
	switch {
	case math.IsNaN(f):
		d.nan = true
		return d
	case math.IsInf(f, 0):
		d.inf = true
		d.neg = f < 0
		return d
	}
	d.neg = math.Signbit(f)
	if f == 0 {
		return d
	}
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // d.ddde±x
	mant, ex, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(ex)
	mant = strings.Replace(mant, ".", "", 1)
	d.digits = []byte(strings.TrimRight(mant, "0"))
	d.exp = e + 1
	return d
}

func decimalFromBigInt(b *big.Int) decimal {
	var d decimal
	d.neg = b.Sign() < 0
	if b.Sign() == 0 {
		return d
	}
	s := new(big.Int).Abs(b).String()
	d.exp = len(s)
	d.digits = []byte(strings.TrimRight(s, "0"))
	return d
}

// maxNumericString bounds a numeric string given to format; beyond it a RangeError.
const maxNumericString = 4096

// decimalFromString is ECMA-402 ToIntlMathematicalValue for a string: the exact value of a
// StringNumericLiteral, NaN when it is not one, ±Infinity beyond the range of doubles (as
// V8 does). ok is false when the string is too long to consider.
func decimalFromString(s string) (d decimal, ok bool) {
	if len(s) > maxNumericString {
		return d, false
	}
	s = strings.TrimFunc(s, isJSSpace)
	if s == "" {
		return d, true
	}
	switch s {
	case "Infinity", "+Infinity":
		d.inf = true
		return d, true
	case "-Infinity":
		d.inf, d.neg = true, true
		return d, true
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			b, ok := new(big.Int).SetString(s[2:], base)
			if !ok {
				d.nan = true
				return d, true
			}
			return decimalFromBigInt(b), true
		}
	}
	rest := s
	if rest[0] == '+' || rest[0] == '-' {
		d.neg = rest[0] == '-'
		rest = rest[1:]
	}
	mant, expPart := rest, ""
	if i := strings.IndexAny(rest, "eE"); i >= 0 {
		mant, expPart = rest[:i], rest[i+1:]
		if !isSignedDigits(expPart) {
			d.nan = true
			return d, true
		}
	}
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) || hasDot && intPart == "" && frac == "" {
		d.nan = true
		return d, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && math.IsInf(f, 0) {
		d.inf = true
		return d, true
	}
	e := 0
	if expPart != "" {
		e, err = strconv.Atoi(expPart)
		if err != nil || e > 100000 || e < -100000 {
			// Out of range for a double either way: ParseFloat said which.
			if f == 0 {
				d.digits = nil
				return d, true
			}
			d.inf = true
			return d, true
		}
	}
	all := strings.TrimLeft(intPart+frac, "0")
	lead := len(intPart+frac) - len(all)
	all = strings.TrimRight(all, "0")
	if all == "" {
		return d, true
	}
	d.digits = []byte(all)
	d.exp = len(intPart) - lead + e
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isSignedDigits(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return s != "" && allDigits(s)
}

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// shift multiplies d by 10^n.
func (d decimal) shift(n int) decimal {
	if len(d.digits) > 0 {
		d.exp += n
	}
	return d
}

// unsignedMode is ECMA-402's unsigned rounding mode.
type unsignedMode int

const (
	roundZero unsignedMode = iota
	roundInfinity
	roundHalfZero
	roundHalfInfinity
	roundHalfEven
)

// unsignedRounding is ECMA-402 GetUnsignedRoundingMode.
func unsignedRounding(mode string, negative bool) unsignedMode {
	switch mode {
	case "ceil":
		if negative {
			return roundZero
		}
		return roundInfinity
	case "floor":
		if negative {
			return roundInfinity
		}
		return roundZero
	case "expand":
		return roundInfinity
	case "trunc":
		return roundZero
	case "halfCeil":
		if negative {
			return roundHalfZero
		}
		return roundHalfInfinity
	case "halfFloor":
		if negative {
			return roundHalfInfinity
		}
		return roundHalfZero
	case "halfTrunc":
		return roundHalfZero
	case "halfEven":
		return roundHalfEven
	}
	return roundHalfInfinity
}

// roundAt rounds |d| to a multiple of inc × 10^pos.
func (d decimal) roundAt(pos int, inc int, mode unsignedMode) decimal {
	if len(d.digits) == 0 {
		return d
	}
	if inc != 1 {
		return d.roundIncrement(pos, inc, mode)
	}
	keep := d.exp - pos
	if keep >= len(d.digits) {
		return d
	}
	// cmp: how the dropped part compares with half a unit: -1, 0, 1.
	var cmp int
	var kept []byte
	if keep < 0 {
		cmp = -1
	} else {
		kept = d.digits[:keep]
		rest := d.digits[keep:]
		switch {
		case rest[0] > '5':
			cmp = 1
		case rest[0] < '5':
			cmp = -1
		case len(strings.TrimRight(string(rest[1:]), "0")) > 0:
			cmp = 1
		}
	}
	up := false
	switch mode {
	case roundInfinity:
		up = true // the dropped part is nonzero: keep < len(digits) and digits has no trailing zeros
	case roundHalfInfinity:
		up = cmp >= 0
	case roundHalfZero:
		up = cmp > 0
	case roundHalfEven:
		up = cmp > 0 || cmp == 0 && len(kept) > 0 && (kept[len(kept)-1]-'0')%2 == 1
	}
	r := decimal{neg: d.neg}
	if !up {
		r.digits = []byte(strings.TrimRight(string(kept), "0"))
		r.exp = d.exp
		if len(r.digits) == 0 {
			r.exp = 0
		}
		return r
	}
	if keep <= 0 {
		r.digits = []byte{'1'}
		r.exp = pos + 1
		return r
	}
	b := append([]byte{}, kept...)
	i := len(b) - 1
	for i >= 0 && b[i] == '9' {
		b[i] = '0'
		i--
	}
	r.exp = d.exp
	if i < 0 {
		b = append([]byte{'1'}, b...)
		r.exp++
	} else {
		b[i]++
	}
	r.digits = []byte(strings.TrimRight(string(b), "0"))
	return r
}

// roundIncrement rounds |d| to a multiple of inc × 10^pos with big integers.
func (d decimal) roundIncrement(pos, inc int, mode unsignedMode) decimal {
	D, _ := new(big.Int).SetString(string(d.digits), 10)
	// |d| = D × 10^(exp-len); unit = inc × 10^pos.
	shift := d.exp - len(d.digits) - pos
	unit := big.NewInt(int64(inc))
	X := D
	if shift >= 0 {
		X = new(big.Int).Mul(D, pow10(shift))
	} else {
		unit.Mul(unit, pow10(-shift))
	}
	q, r := new(big.Int).QuoRem(X, unit, new(big.Int))
	twice := new(big.Int).Lsh(r, 1)
	cmp := twice.Cmp(unit)
	up := false
	if r.Sign() != 0 {
		switch mode {
		case roundInfinity:
			up = true
		case roundHalfInfinity:
			up = cmp >= 0
		case roundHalfZero:
			up = cmp > 0
		case roundHalfEven:
			up = cmp > 0 || cmp == 0 && q.Bit(0) == 1
		}
	}
	if up {
		q.Add(q, big.NewInt(1))
	}
	q.Mul(q, big.NewInt(int64(inc)))
	res := decimalFromBigInt(q)
	res.neg = d.neg
	return res.shift(pos)
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// fixed renders |d| with exactly frac fraction digits (d must already be rounded to them):
// the integer digits ("0" at least) and the fraction digits.
func (d decimal) fixed(frac int) (intPart, fracPart string) {
	if len(d.digits) == 0 {
		return "0", strings.Repeat("0", frac)
	}
	digits := string(d.digits)
	if d.exp <= 0 {
		intPart = "0"
		f := strings.Repeat("0", -d.exp) + digits
		if len(f) < frac {
			f += strings.Repeat("0", frac-len(f))
		}
		return intPart, f[:frac]
	}
	if d.exp >= len(digits) {
		return digits + strings.Repeat("0", d.exp-len(digits)), strings.Repeat("0", frac)
	}
	intPart = digits[:d.exp]
	f := digits[d.exp:]
	if len(f) < frac {
		f += strings.Repeat("0", frac-len(f))
	}
	return intPart, f[:frac]
}

// rawFixed is ECMA-402 ToRawFixed: |d| rounded to maxFrac fraction digits (in steps of
// inc), shown with at least minFrac.
func (d decimal) rawFixed(minFrac, maxFrac, inc int, mode unsignedMode) (r decimal, intPart, fracPart string) {
	r = d.roundAt(-maxFrac, inc, mode)
	intPart, fracPart = r.fixed(maxFrac)
	fracPart = trimZeros(fracPart, minFrac)
	return r, intPart, fracPart
}

// rawPrecision is ECMA-402 ToRawPrecision: |d| rounded to maxP significant digits, shown
// with at least minP.
func (d decimal) rawPrecision(minP, maxP int, mode unsignedMode) (r decimal, intPart, fracPart string) {
	if len(d.digits) == 0 {
		return d, "0", strings.Repeat("0", minP-1)
	}
	e := d.magnitude()
	r = d.roundAt(e-maxP+1, 1, mode)
	if len(r.digits) > 0 {
		e = r.magnitude()
	}
	frac := maxP - 1 - e
	if frac < 0 {
		frac = 0
	}
	intPart, fracPart = r.fixed(frac)
	// Trailing zeros beyond minP significant digits go.
	if maxP > minP && frac > 0 {
		cut := maxP - minP
		n := len(fracPart)
		for cut > 0 && n > 0 && fracPart[n-1] == '0' {
			n--
			cut--
		}
		fracPart = fracPart[:n]
	}
	return r, intPart, fracPart
}

func trimZeros(frac string, min int) string {
	n := len(frac)
	for n > min && frac[n-1] == '0' {
		n--
	}
	return frac[:n]
}
