package intl

import (
	"strings"
	"sync"
)

// affix tokens of a CLDR number pattern.
type affixKind int

const (
	affixLiteral affixKind = iota
	affixPercent
	affixPermille
	affixCurrency // n = the number of ¤ signs
	affixMinus
	affixPlus
)

type affixToken struct {
	kind affixKind
	text string
	n    int
}

// numberPattern is a parsed CLDR number pattern (UTS 35, Number Patterns).
type numberPattern struct {
	posPrefix, posSuffix []affixToken
	negPrefix, negSuffix []affixToken
	hasNeg               bool
	minInt               int // '0's before the decimal point
	primary, secondary   int // grouping sizes; 0 for none
	minFrac, maxFrac     int
	scientific           bool
	minExp               int
	zeros                int // compact patterns: the number of '0's ("00K" → 2); 0 means "no compacting"
}

var patternCache sync.Map // pattern text → *numberPattern

func parseNumberPattern(text string) *numberPattern {
	if p, ok := patternCache.Load(text); ok {
		return p.(*numberPattern)
	}
	p := &numberPattern{}
	pos, neg, hasNeg := splitUnquoted(text, ';')
	prefix, body, suffix := splitPatternBody(pos)
	p.posPrefix = parseAffix(prefix)
	p.posSuffix = parseAffix(suffix)
	if hasNeg {
		np, _, ns := splitPatternBody(neg)
		p.negPrefix = parseAffix(np)
		p.negSuffix = parseAffix(ns)
		p.hasNeg = true
	}
	mant := body
	if i := strings.IndexByte(body, 'E'); i >= 0 {
		p.scientific = true
		mant = body[:i]
		p.minExp = strings.Count(body[i:], "0")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	p.minInt = strings.Count(intPart, "0")
	p.zeros = p.minInt
	p.minFrac = strings.Count(frac, "0")
	p.maxFrac = p.minFrac + strings.Count(frac, "#")
	if i := strings.LastIndexByte(intPart, ','); i >= 0 {
		p.primary = len(intPart) - i - 1
		if j := strings.LastIndexByte(intPart[:i], ','); j >= 0 {
			p.secondary = i - j - 1
		} else {
			p.secondary = p.primary
		}
	}
	v, _ := patternCache.LoadOrStore(text, p)
	return v.(*numberPattern)
}

// splitUnquoted splits s at the first unquoted sep.
func splitUnquoted(s string, sep byte) (string, string, bool) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\'':
			quoted = !quoted
		case s[i] == sep && !quoted:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// splitPatternBody separates the prefix, the number body (#0,.E) and the suffix.
func splitPatternBody(s string) (prefix, body, suffix string) {
	quoted := false
	start, end := -1, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			quoted = !quoted
			continue
		}
		if quoted {
			continue
		}
		if c == '#' || c == '0' || c == ',' || c == '.' || c == '@' || (c == 'E' && start >= 0) || (c == '+' && start >= 0 && i > 0 && s[i-1] == 'E') {
			if start < 0 {
				start = i
			}
			end = i + 1
		} else if start >= 0 && end == i {
			// the body has ended
			break
		}
	}
	if start < 0 {
		return s, "", ""
	}
	return s[:start], s[start:end], s[end:]
}

func parseAffix(s string) []affixToken {
	var toks []affixToken
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, affixToken{kind: affixLiteral, text: lit.String()})
			lit.Reset()
		}
	}
	quoted := false
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			quoted = !quoted
			i++
			continue
		}
		if quoted {
			lit.WriteByte(c)
			i++
			continue
		}
		switch {
		case c == '%':
			flush()
			toks = append(toks, affixToken{kind: affixPercent})
			i++
		case strings.HasPrefix(s[i:], "‰"):
			flush()
			toks = append(toks, affixToken{kind: affixPermille})
			i += len("‰")
		case strings.HasPrefix(s[i:], "¤"):
			flush()
			n := 0
			for strings.HasPrefix(s[i:], "¤") {
				n++
				i += len("¤")
			}
			toks = append(toks, affixToken{kind: affixCurrency, n: n})
		case c == '-':
			flush()
			toks = append(toks, affixToken{kind: affixMinus})
			i++
		case c == '+':
			flush()
			toks = append(toks, affixToken{kind: affixPlus})
			i++
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return toks
}
