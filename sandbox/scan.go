package sandbox

import "strings"

// The one JavaScript/TypeScript scanner of the package. It reads source
// closely enough to know what is code: it skips comments, string literals
// and (by the usual previous-token rule) regular-expression literals, and
// follows template literals through their ${…} holes, reporting words,
// regular expressions and brackets to its hooks. It is a scanner, not a
// parser: it finds what the guards (checkNesting) and the program shaping
// (shape.go, namespace.go) need in the programs models write, and the
// parser judges the rest.

// token is a word of code (an identifier or keyword).
type token struct {
	start, end int
	depth      int  // bracket nesting ((, [, {) at the word
	prev       byte // the last significant code byte before the word (0 at the start)
	newline    bool // a line break separates the word from prev
}

// scanHooks are what scanCode reports; each is optional.
type scanHooks struct {
	word  func(t token)        // an identifier-like word
	regex func(start, end int) // a regular-expression literal's extent
	close func(at, depth int)  // a closing bracket at offset at, with the depth after it
	// open is called for every opening bracket, template body and ${ hole,
	// with the number now open (holes and bodies included) and the line;
	// false stops the scan.
	open func(open, line int) bool
}

// scanWords calls fn for every identifier-like word of src outside comments, strings, template
// text and regular-expression literals.
func scanWords(src string, fn func(t token)) { scanCode(src, scanHooks{word: fn}) }

// scanCode scans src, calling h's hooks as it goes.
func scanCode(src string, h scanHooks) {
	s := scanner{src: src, h: h, line: 1}
	for s.i < len(src) {
		var ok bool
		if s.inTemplate() {
			ok = s.templateByte()
		} else {
			ok = s.codeByte()
		}
		if !ok {
			return
		}
	}
}

// scanner is scanCode's state.
type scanner struct {
	src     string
	h       scanHooks
	i       int
	line    int
	stack   []byte // '$' marks a template hole, '`' a template body, else a bracket
	depth   int    // brackets open, holes and bodies not counted
	prev    byte   // last significant code byte, for the regex-or-division decision
	newline bool   // a line break since prev
}

func (s *scanner) inTemplate() bool { return len(s.stack) > 0 && s.stack[len(s.stack)-1] == '`' }

// push opens c; false when the open hook stops the scan.
func (s *scanner) push(c byte) bool {
	s.stack = append(s.stack, c)
	return s.h.open == nil || s.h.open(len(s.stack), s.line)
}

// templateByte consumes one unit of a template literal's body: an escape,
// its end, a ${ hole or a character.
func (s *scanner) templateByte() bool {
	src, c := s.src, s.src[s.i]
	switch {
	case c == '\\':
		if s.i+1 < len(src) && src[s.i+1] == '\n' {
			s.line++
		}
		s.i += 2
		return true
	case c == '`':
		s.stack = s.stack[:len(s.stack)-1]
		s.prev = '`'
	case c == '$' && s.i+1 < len(src) && src[s.i+1] == '{':
		if !s.push('$') {
			return false
		}
		s.i++
		s.prev = '{'
	case c == '\n':
		s.line++
	}
	s.i++
	return true
}

// codeByte consumes one token's worth of code: white space, a comment, a
// string, a regular expression, a word, or a single byte (brackets
// tracked).
func (s *scanner) codeByte() bool {
	src, c := s.src, s.src[s.i]
	switch {
	case c == '\n':
		s.line++
		s.newline = true
		s.i++
		return true
	case c == ' ' || c == '\t' || c == '\r':
		s.i++
		return true
	case c == '/' && s.i+1 < len(src) && src[s.i+1] == '/':
		for s.i < len(src) && src[s.i] != '\n' {
			s.i++
		}
		return true
	case c == '/' && s.i+1 < len(src) && src[s.i+1] == '*':
		end := strings.Index(src[s.i+2:], "*/")
		if end < 0 {
			return false // unterminated: the parser reports it
		}
		if n := strings.Count(src[s.i:s.i+2+end], "\n"); n > 0 {
			s.line += n
			s.newline = true
		}
		s.i += end + 4
		return true
	}
	nl := s.newline
	s.newline = false
	switch {
	case c == '\'' || c == '"':
		s.skipString(c)
		return true
	case c == '/' && regexAllowedAfter(s.prev):
		start := s.i
		s.skipRegex()
		if s.h.regex != nil && s.i <= len(src) {
			s.h.regex(start, s.i)
		}
		return true
	case isWordByte(c):
		start := s.i
		for s.i < len(src) && isWordByte(src[s.i]) {
			s.i++
		}
		if s.h.word != nil {
			s.h.word(token{start: start, end: s.i, depth: s.depth, prev: s.prev, newline: nl})
		}
		s.prev = 'a'
		return true
	case c == '`':
		if !s.push('`') {
			return false
		}
	case c == '(' || c == '[' || c == '{':
		s.depth++
		if !s.push(c) {
			return false
		}
	case c == ')' || c == ']' || c == '}':
		if len(s.stack) > 0 {
			top := s.stack[len(s.stack)-1]
			s.stack = s.stack[:len(s.stack)-1]
			if c == '}' && top == '$' {
				s.prev = '`'
				s.i++
				return true // back inside the template body, still on the stack
			}
			s.depth--
			if s.h.close != nil {
				s.h.close(s.i, s.depth)
			}
		}
	}
	s.prev = c
	s.i++
	return true
}

// skipString skips a quoted string literal (to its quote or the end of its line).
func (s *scanner) skipString(quote byte) {
	src := s.src
	s.i++
	for s.i < len(src) && src[s.i] != quote && src[s.i] != '\n' {
		if src[s.i] == '\\' {
			s.i++
		}
		s.i++
	}
	s.i++
	s.prev = quote
}

// skipRegex skips a regular expression literal, its character classes and
// flags included.
func (s *scanner) skipRegex() {
	src := s.src
	s.i++
	inClass := false
	for s.i < len(src) && src[s.i] != '\n' {
		ch := src[s.i]
		if ch == '\\' {
			s.i += 2
			continue
		}
		if ch == '[' {
			inClass = true
		} else if ch == ']' {
			inClass = false
		} else if ch == '/' && !inClass {
			break
		}
		s.i++
	}
	s.i++
	for s.i < len(src) && isWordByte(src[s.i]) {
		s.i++ // flags
	}
	s.prev = 'a' // a regex literal ends an expression, like an identifier
}

// regexAllowedAfter reports whether a '/' after the significant byte prev starts a regular
// expression rather than a division: after an operand (identifier, number, closing bracket,
// string or template end) it divides.
func regexAllowedAfter(prev byte) bool {
	switch {
	case prev == 0:
		return true
	case prev == ')' || prev == ']' || prev == '}' || prev == '\'' || prev == '"' || prev == '`':
		return false
	case prev == '_' || prev == '$' || prev >= 0x80:
		return false
	case prev >= '0' && prev <= '9', prev >= 'a' && prev <= 'z', prev >= 'A' && prev <= 'Z':
		return false
	}
	return true
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
