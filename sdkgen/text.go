package sdkgen

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxDocRunes bounds a one-line JSDoc summary; longer text is cut at a word boundary.
const maxDocRunes = 160

// quoteJS returns s as a double-quoted JS/TS string literal. Line terminators (including U+2028
// and U+2029), control characters, quotes and backslashes are escaped; bytes that are not valid
// UTF-8 become \ufffd, which is also what a JS engine would see for them. Other Unicode is kept
// as is, for readability.
func quoteJS(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029':
			const hexDigits = "0123456789abcdef"
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// propertyKey renders name as a property name: bare when it is a plain ASCII identifier that is
// not a reserved word, quoted otherwise. `constructor` and `__proto__` are always quoted so that
// no reader (or tool) mistakes them for the special members they name elsewhere.
func propertyKey(name string) string {
	if isPlainIdentifier(name) {
		return name
	}
	return quoteJS(name)
}

// isPlainIdentifier reports whether name is [A-Za-z_$][A-Za-z0-9_$]* and not reserved.
func isPlainIdentifier(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return !reservedNames[name]
}

// reservedNames are the ECMAScript reserved words (including strict-mode and literal ones) plus
// the names with a special meaning as members.
var reservedNames = map[string]bool{
	"await": true, "break": true, "case": true, "catch": true, "class": true, "const": true,
	"continue": true, "debugger": true, "default": true, "delete": true, "do": true,
	"else": true, "enum": true, "export": true, "extends": true, "false": true,
	"finally": true, "for": true, "function": true, "if": true, "implements": true,
	"import": true, "in": true, "instanceof": true, "interface": true, "let": true,
	"new": true, "null": true, "package": true, "private": true, "protected": true,
	"public": true, "return": true, "static": true, "super": true, "switch": true,
	"this": true, "throw": true, "true": true, "try": true, "typeof": true, "var": true,
	"void": true, "while": true, "with": true, "yield": true,
	"constructor": true, "__proto__": true,
}

// docSummary turns free text into a one-line summary safe inside a /** ... */ comment: the
// first paragraph, whitespace and control characters collapsed to single spaces, cut after its
// first sentence, truncated to maxDocRunes at a word boundary, with every "*/" escaped as "*\/".
// It returns "" when nothing printable remains.
func docSummary(text string) string {
	s := collapseSpace(firstParagraph(text))
	s = firstSentence(s)
	s = truncateRunes(s, maxDocRunes)
	return escapeCommentEnd(s)
}

// docFragment is docSummary without the sentence cut, for short machine-made annotations.
func docFragment(text string, limit int) string {
	return escapeCommentEnd(truncateRunes(collapseSpace(text), limit))
}

// firstParagraph returns text up to its first blank line.
func firstParagraph(text string) string {
	seen := false
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			break
		}
		line := text[start : start+end]
		if strings.TrimSpace(line) == "" {
			if seen {
				return text[:start]
			}
		} else {
			seen = true
		}
		start += end + 1
	}
	return text
}

// collapseSpace replaces invalid UTF-8 by U+FFFD and every run of white space or control
// characters (line terminators included) by one space, and trims both ends.
func collapseSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// firstSentence cuts s after the first '.', '!' or '?' that is followed by a space.
func firstSentence(s string) string {
	for i := 0; i+1 < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
			if s[i+1] == ' ' {
				return s[:i+1]
			}
		}
	}
	return s
}

// truncateRunes shortens s to at most limit runes, preferring to cut at a space in the second
// half of the limit, and marks the cut with "…".
func truncateRunes(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == limit-1 {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	if sp := strings.LastIndexByte(head, ' '); sp > len(head)/2 {
		head = head[:sp]
	}
	return strings.TrimRight(head, " ") + "…"
}

// escapeCommentEnd makes s unable to close a block comment.
func escapeCommentEnd(s string) string {
	return strings.ReplaceAll(s, "*/", `*\/`)
}

// restatesName reports whether a description says nothing a name does not: "The key." for key,
// "The file path." for "path files_read", "The user IDs" for user_ids. Words are compared
// lower-cased, a plural "s" dropped, ignoring articles and a few other fillers.
func restatesName(description, name string) bool {
	nameWords := map[string]bool{}
	for _, w := range words(name) {
		nameWords[w] = true
	}
	saw := false
	for _, w := range words(description) {
		if fillerWords[w] {
			continue
		}
		if !nameWords[w] {
			return false
		}
		saw = true
	}
	return saw
}

var fillerWords = map[string]bool{"the": true, "a": true, "an": true, "its": true, "this": true, "of": true}

// words splits s into lower-case words at anything that is not a letter or digit and at
// lower-to-upper case changes (userId → user, id), dropping a plural "s" from words of more
// than three letters.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		w := strings.ToLower(string(cur))
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
		cur = cur[:0]
	}
	prevLower := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return out
}
