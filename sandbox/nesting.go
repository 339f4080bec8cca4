package sandbox

import (
	"fmt"
	"strings"
)

// checkNesting scans source as JavaScript/TypeScript tokens closely enough to track bracket
// nesting: it skips comments, string literals and (by the usual previous-token rule) regular
// expression literals, and follows template literals through their ${…} holes. The scanner is
// a guard, not a parser: MaxBrackets bounds what any mis-scan could hide.
func checkNesting(src string) *Failure {
	if n := strings.Count(src, "(") + strings.Count(src, "[") + strings.Count(src, "{"); n > MaxBrackets {
		return &Failure{Kind: KindSyntax, Message: fmt.Sprintf("program has %d opening brackets; the limit is %d", n, MaxBrackets)}
	}
	s := nestingScanner{src: src, line: 1}
	for s.i < len(src) {
		var f *Failure
		if s.inTemplate() {
			f = s.templateByte()
		} else {
			f = s.codeByte()
		}
		if f != nil {
			return f
		}
	}
	return nil
}

// nestingScanner is checkNesting's state.
type nestingScanner struct {
	src   string
	i     int
	line  int
	stack []byte // open brackets; '$' marks a template hole, '`' a template body
	prev  byte   // last significant code byte, for the regex-or-division decision
}

func (s *nestingScanner) inTemplate() bool { return len(s.stack) > 0 && s.stack[len(s.stack)-1] == '`' }

// open pushes an opening bracket, failing past MaxNesting.
func (s *nestingScanner) open(c byte) *Failure {
	s.stack = append(s.stack, c)
	if len(s.stack) > MaxNesting {
		return &Failure{Kind: KindSyntax, Message: fmt.Sprintf("brackets nest deeper than %d levels (at line %d)", MaxNesting, s.line)}
	}
	return nil
}

// templateByte consumes one unit of a template literal's body: an escape, its end, a ${ hole
// or a character.
func (s *nestingScanner) templateByte() *Failure {
	src, c := s.src, s.src[s.i]
	switch {
	case c == '\\':
		s.i += 2
		return nil
	case c == '`':
		s.stack = s.stack[:len(s.stack)-1]
		s.prev = '`'
	case c == '$' && s.i+1 < len(src) && src[s.i+1] == '{':
		if f := s.open('$'); f != nil {
			return f
		}
		s.i++
		s.prev = '{'
	case c == '\n':
		s.line++
	}
	s.i++
	return nil
}

// codeByte consumes one token's worth of code: white space, a comment, a string, a regular
// expression, or a single byte (brackets tracked).
func (s *nestingScanner) codeByte() *Failure {
	src, c := s.src, s.src[s.i]
	switch {
	case c == '\n':
		s.line++
		s.i++
		return nil
	case c == ' ' || c == '\t' || c == '\r':
		s.i++
		return nil
	case c == '/' && s.i+1 < len(src) && src[s.i+1] == '/':
		for s.i < len(src) && src[s.i] != '\n' {
			s.i++
		}
		return nil
	case c == '/' && s.i+1 < len(src) && src[s.i+1] == '*':
		end := strings.Index(src[s.i+2:], "*/")
		if end < 0 {
			s.i = len(src) // unterminated comment: the parser reports it
			return nil
		}
		s.line += strings.Count(src[s.i:s.i+2+end], "\n")
		s.i += end + 4
		return nil
	case c == '\'' || c == '"':
		s.skipString(c)
		return nil
	case c == '/' && regexAllowedAfter(s.prev):
		s.skipRegex()
		return nil
	case c == '`':
		if f := s.open('`'); f != nil {
			return f
		}
	case c == '(' || c == '[' || c == '{':
		if f := s.open(c); f != nil {
			return f
		}
	case c == ')' || c == ']' || c == '}':
		if len(s.stack) > 0 {
			top := s.stack[len(s.stack)-1]
			s.stack = s.stack[:len(s.stack)-1]
			if c == '}' && top == '$' {
				s.prev = '`'
				s.i++
				return nil // back inside the template body, which is still on the stack
			}
		}
	}
	s.prev = c
	s.i++
	return nil
}

// skipString skips a quoted string literal (to its quote or the end of its line).
func (s *nestingScanner) skipString(quote byte) {
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

// skipRegex skips a regular expression literal, its character classes included.
func (s *nestingScanner) skipRegex() {
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
