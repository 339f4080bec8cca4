package intl

import (
	"strconv"
	"strings"
	"sync"
)

// pluralOperands are the CLDR plural operands of a formatted number (UTS 35, Plural
// Operand Meanings). Integers beyond 10^18 keep their last 18 digits plus 10^18, which is
// exact for every modulus CLDR rules use and never equal to the small values they compare
// with.
type pluralOperands struct {
	n    float64
	i    float64
	v, w int
	f, t float64
	e    int
}

func operands(intPart, fracPart string) pluralOperands {
	var o pluralOperands
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > 18 {
		tail, _ := strconv.ParseFloat(intPart[len(intPart)-18:], 64)
		o.i = 1e18 + tail
	} else if intPart != "" {
		o.i, _ = strconv.ParseFloat(intPart, 64)
	}
	o.v = len(fracPart)
	t := strings.TrimRight(fracPart, "0")
	o.w = len(t)
	if len(fracPart) > 18 {
		fracPart = fracPart[:18]
	}
	if len(t) > 18 {
		t = t[:18]
	}
	o.f, _ = strconv.ParseFloat("0"+fracPart, 64)
	o.t, _ = strconv.ParseFloat("0"+t, 64)
	o.n = o.i
	if o.w > 0 {
		fv, _ := strconv.ParseFloat("0."+t, 64)
		o.n += fv
	}
	return o
}

func (o pluralOperands) get(c byte) float64 {
	switch c {
	case 'n':
		return o.n
	case 'i':
		return o.i
	case 'v':
		return float64(o.v)
	case 'w':
		return float64(o.w)
	case 'f':
		return o.f
	case 't':
		return o.t
	case 'c', 'e':
		return float64(o.e)
	}
	return 0
}

// pluralRules are one language's rules of one type, compiled. Categories are tried in
// CLDR order; "other" matches when none does.
type pluralRules struct {
	order []string // categories in the order ECMA-402 lists them
	rules []pluralRule
}

type pluralRule struct {
	category string
	cond     [][]relation // or of ands
}

type relation struct {
	operand byte
	mod     float64
	negate  bool
	ranges  [][2]float64
}

var pluralCategoryOrder = []string{"zero", "one", "two", "few", "many", "other"}

var pluralCache sync.Map // "cardinal/lang" → *pluralRules

// pluralRulesFor returns the compiled rules of lang (falling back to root: only "other").
func pluralRulesFor(lang string, ordinal bool) *pluralRules {
	key := "c/" + lang
	if ordinal {
		key = "o/" + lang
	}
	if r, ok := pluralCache.Load(key); ok {
		return r.(*pluralRules)
	}
	s := mustSupplemental()
	pd, ok := s.Plurals[lang]
	if !ok {
		if i := strings.IndexByte(lang, '-'); i > 0 {
			pd = s.Plurals[lang[:i]]
		}
	}
	src := pd.Cardinal
	if ordinal {
		src = pd.Ordinal
	}
	pr := &pluralRules{}
	for _, cat := range pluralCategoryOrder {
		text, ok := src[cat]
		if !ok && cat != "other" {
			continue
		}
		pr.order = append(pr.order, cat)
		if cat == "other" {
			continue
		}
		pr.rules = append(pr.rules, pluralRule{category: cat, cond: parsePluralCondition(text)})
	}
	r, _ := pluralCache.LoadOrStore(key, pr)
	return r.(*pluralRules)
}

// parsePluralCondition parses the CLDR rule syntax (generated data, so it is trusted):
// relation ("and" relation)* ("or" ...)*, relation = operand ["%" n] ("="|"!=") ranges.
func parsePluralCondition(text string) [][]relation {
	var ors [][]relation
	for _, orPart := range strings.Split(text, " or ") {
		var ands []relation
		for _, andPart := range strings.Split(orPart, " and ") {
			andPart = strings.TrimSpace(andPart)
			if andPart == "" {
				continue
			}
			var rel relation
			op, rest := andPart, ""
			if i := strings.Index(andPart, "!="); i >= 0 {
				op, rest, rel.negate = andPart[:i], andPart[i+2:], true
			} else if i := strings.IndexByte(andPart, '='); i >= 0 {
				op, rest = andPart[:i], andPart[i+1:]
			}
			op = strings.TrimSpace(op)
			rel.operand = op[0]
			if i := strings.IndexByte(op, '%'); i >= 0 {
				rel.mod, _ = strconv.ParseFloat(strings.TrimSpace(op[i+1:]), 64)
			}
			for _, r := range strings.Split(strings.TrimSpace(rest), ",") {
				lo, hi, isRange := strings.Cut(strings.TrimSpace(r), "..")
				a, _ := strconv.ParseFloat(lo, 64)
				b := a
				if isRange {
					b, _ = strconv.ParseFloat(hi, 64)
				}
				rel.ranges = append(rel.ranges, [2]float64{a, b})
			}
			ands = append(ands, rel)
		}
		ors = append(ors, ands)
	}
	return ors
}

func (r relation) holds(o pluralOperands) bool {
	x := o.get(r.operand)
	if r.mod != 0 {
		x = modFloat(x, r.mod)
	}
	in := false
	isInt := x == float64(int64(x))
	for _, rg := range r.ranges {
		if rg[0] == rg[1] {
			if x == rg[0] {
				in = true
			}
		} else if isInt && x >= rg[0] && x <= rg[1] {
			in = true
		}
	}
	return in != r.negate
}

func modFloat(x, m float64) float64 {
	ip := float64(int64(x))
	frac := x - ip
	return float64(int64(ip)%int64(m)) + frac
}

// category returns the plural category of the operands.
func (p *pluralRules) category(o pluralOperands) string {
	for _, rule := range p.rules {
		for _, ands := range rule.cond {
			ok := true
			for _, rel := range ands {
				if !rel.holds(o) {
					ok = false
					break
				}
			}
			if ok {
				return rule.category
			}
		}
	}
	return "other"
}

// pluralLang is the language whose plural rules serve a data locale: pt-PT has its own,
// everything else uses its language's.
func pluralLang(dataLocale string) string {
	s := mustSupplemental()
	if _, ok := s.Plurals[dataLocale]; ok {
		return dataLocale
	}
	if i := strings.IndexByte(dataLocale, '-'); i > 0 {
		return dataLocale[:i]
	}
	return dataLocale
}
