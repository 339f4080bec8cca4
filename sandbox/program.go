package sandbox

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
)

// Lang is the language a program is written in.
type Lang int

const (
	// JavaScript source is handed to goja as is (ES2022 as goja supports it: no async
	// generators, no for-await).
	JavaScript Lang = iota
	// TypeScript source has its types stripped in-process by esbuild, which also lowers the
	// syntax goja lacks (async generators, for-await, using declarations).
	TypeScript
)

// String names the language ("javascript" or "typescript").
func (l Lang) String() string {
	switch l {
	case JavaScript:
		return "javascript"
	case TypeScript:
		return "typescript"
	default:
		return fmt.Sprintf("Lang(%d)", int(l))
	}
}

const (
	// MaxSourceBytes is the largest program source Compile accepts.
	MaxSourceBytes = 1 << 20
	// MaxNesting is the deepest bracket nesting ((, [, {, ${) Compile accepts. goja's parser
	// and compiler recurse per level (super-linearly in time, and past ~10^5 levels into a
	// fatal Go stack overflow), so deep nesting is refused before either sees it.
	MaxNesting = 1000
	// MaxBrackets is the most opening brackets ((, [, {) a program may contain, counted as
	// bytes wherever they appear. It backs MaxNesting up with a count no tokenizer trick can
	// hide: this many brackets cannot nest deep enough to overflow the Go stack, whatever the
	// scanner believes.
	MaxBrackets = 50000

	// programName is the file name goja gives the program in stack traces; a TypeScript
	// program's frames map back to tsName through esbuild's source map.
	programName = "program.js"
	tsName      = "program.ts"
	// sourceMapURL names the in-memory source map of a TypeScript program. goja's parser
	// follows a program's last-line sourceMappingURL comment and would read a file path from
	// disk: JavaScript is parsed with source maps disabled, and TypeScript with a loader that
	// answers this one URL from memory and nothing else.
	sourceMapURL = "codemode:program.map"
	// wrapPrefix and wrapSuffix make the source the body of an async function, so top-level
	// await and return work. The prefix ends in a newline so user line N is line N+1.
	wrapPrefix = "(async function () {\n"
	wrapSuffix = "\n})"
)

// userPosition maps a line and column of the wrapped program, as goja reports them
// (source-mapped for TypeScript), to the user's own source.
func userPosition(line, col int) (int, int) {
	return line - strings.Count(wrapPrefix, "\n"), col
}

// Program is a compiled run_code program, immutable and safe to run in many runtimes at once.
type Program struct {
	lang   Lang
	prg    *goja.Program
	size   int      // bytes of user source, for the cache's budget
	guards guardSet // the built-ins the program's runtime guards
}

// Lang reports the language the program was compiled from.
func (p *Program) Lang() Lang { return p.lang }

// goja-compatible syntax for esbuild's output: everything goja parses is ES2022, minus
// the features listed as unsupported, which esbuild lowers.
var esbuildSupported = map[string]bool{
	"async-generator":      false,
	"for-await":            false,
	"using":                false,
	"regexp-match-indices": false,
}

// Compile prepares source, the body of an async function, for [Run]. TypeScript types are
// stripped; nothing is bundled or imported. Results are cached by language and source, so
// compiling the same program again is cheap. Every error is a *Failure of kind "syntax" whose
// message carries the line and column in the caller's source.
func Compile(source string, lang Lang) (*Program, error) {
	if lang != JavaScript && lang != TypeScript {
		return nil, &Failure{Kind: KindSyntax, Message: fmt.Sprintf("unknown language %v", lang)}
	}
	if len(source) > MaxSourceBytes {
		return nil, &Failure{Kind: KindSyntax, Message: fmt.Sprintf("program is %d bytes; the limit is %d", len(source), MaxSourceBytes)}
	}
	key := cacheKey(source, lang)
	if p := programs.get(key); p != nil {
		return p, nil
	}
	p, err := compile(source, lang)
	if err != nil {
		return nil, err
	}
	programs.put(key, p)
	return p, nil
}

func cacheKey(source string, lang Lang) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte{byte(lang)})
	h.Write([]byte(source))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func compile(source string, lang Lang) (p *Program, err error) {
	if !utf8.ValidString(source) {
		return nil, &Failure{Kind: KindSyntax, Message: "program is not valid UTF-8"}
	}
	if f := checkNesting(source); f != nil {
		return nil, f
	}
	userLines := strings.Count(source, "\n") + 1
	wrapped := wrapPrefix + source + wrapSuffix
	sourceMaps := parser.WithDisableSourceMaps
	if lang == TypeScript {
		res := api.Transform(wrapped, api.TransformOptions{
			Loader:     api.LoaderTS,
			Target:     api.ES2022,
			Supported:  esbuildSupported,
			Sourcefile: tsName,
			Sourcemap:  api.SourceMapExternal,
			LogLevel:   api.LogLevelSilent,
			Charset:    api.CharsetUTF8,
		})
		if len(res.Errors) > 0 {
			m := res.Errors[0]
			line, col := 0, 0
			if m.Location != nil {
				line, col = m.Location.Line, m.Location.Column+1
			}
			return nil, syntaxFailure(m.Text, line, col, userLines)
		}
		wrapped = string(res.Code) + "\n//# sourceMappingURL=" + sourceMapURL
		sourceMap := res.Map
		sourceMaps = parser.WithSourceMapLoader(func(url string) ([]byte, error) {
			if url != sourceMapURL {
				return nil, errors.New("source maps are not loaded")
			}
			return sourceMap, nil
		})
		// A failure below is an incompatibility between esbuild's output and goja; its
		// position is in esbuild's output, so it is reported without one.
		userLines = -1
	}
	// goja's compiler panics on internal errors it does not expect; a program must never
	// crash the process, so anything left over becomes a syntax failure.
	defer func() {
		if x := recover(); x != nil {
			p, err = nil, &Failure{Kind: KindSyntax, Message: fmt.Sprintf("internal compiler error: %v", x)}
		}
	}()
	ast, perr := parser.ParseFile(nil, programName, wrapped, 0, sourceMaps)
	if perr != nil {
		var list parser.ErrorList
		if errors.As(perr, &list) && len(list) > 0 {
			e := list[0]
			return nil, syntaxFailure(e.Message, e.Position.Line, e.Position.Column, userLines)
		}
		return nil, &Failure{Kind: KindSyntax, Message: perr.Error()}
	}
	prg, cerr := goja.CompileAST(ast, false)
	if cerr != nil {
		var se *goja.CompilerSyntaxError
		if errors.As(cerr, &se) && se.File != nil {
			pos := se.File.Position(se.Offset)
			return nil, syntaxFailure(se.Message, pos.Line, pos.Column, userLines)
		}
		return nil, &Failure{Kind: KindSyntax, Message: cerr.Error()}
	}
	return &Program{lang: lang, prg: prg, size: len(source), guards: guardsFor(wrapped)}, nil
}

// syntaxFailure reports msg at a position of the wrapped source, translated to the user's
// source. userLines < 0 means positions cannot be translated.
func syntaxFailure(msg string, line, col, userLines int) *Failure {
	msg = strings.TrimSpace(msg)
	switch {
	case line <= 0 || userLines < 0:
		return &Failure{Kind: KindSyntax, Message: msg}
	case line-1 < 1:
		return &Failure{Kind: KindSyntax, Message: msg + " (at line 1)"}
	case line-1 > userLines:
		return &Failure{Kind: KindSyntax, Message: msg + " (at end of program)"}
	default:
		return &Failure{Kind: KindSyntax, Message: fmt.Sprintf("%s (at line %d:%d)", msg, line-1, col)}
	}
}

// checkNesting scans source as JavaScript/TypeScript tokens closely enough to track bracket
// nesting: it skips comments, string literals and (by the usual previous-token rule) regular
// expression literals, and follows template literals through their ${…} holes. The scanner is
// a guard, not a parser: MaxBrackets bounds what any mis-scan could hide.
func checkNesting(src string) *Failure {
	if n := strings.Count(src, "(") + strings.Count(src, "[") + strings.Count(src, "{"); n > MaxBrackets {
		return &Failure{Kind: KindSyntax, Message: fmt.Sprintf("program has %d opening brackets; the limit is %d", n, MaxBrackets)}
	}
	var stack []byte // open brackets; '$' marks a template hole, '`' a template body
	prev := byte(0)  // last significant code byte, for the regex-or-division decision
	line := 1
	i := 0
	tooDeep := func() *Failure {
		return &Failure{Kind: KindSyntax, Message: fmt.Sprintf("brackets nest deeper than %d levels (at line %d)", MaxNesting, line)}
	}
	open := func(c byte) *Failure {
		stack = append(stack, c)
		if len(stack) > MaxNesting {
			return tooDeep()
		}
		return nil
	}
	inTemplate := func() bool { return len(stack) > 0 && stack[len(stack)-1] == '`' }
	for i < len(src) {
		c := src[i]
		if inTemplate() {
			switch {
			case c == '\\':
				i += 2
				continue
			case c == '`':
				stack = stack[:len(stack)-1]
				prev = '`'
			case c == '$' && i+1 < len(src) && src[i+1] == '{':
				if f := open('$'); f != nil {
					return f
				}
				i++
				prev = '{'
			case c == '\n':
				line++
			}
			i++
			continue
		}
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil // unterminated comment: the parser reports it
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
			continue
		case c == '\'' || c == '"':
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i++
			prev = c
			continue
		case c == '/' && regexAllowedAfter(prev):
			i++
			inClass := false
			for i < len(src) && src[i] != '\n' {
				ch := src[i]
				if ch == '\\' {
					i += 2
					continue
				}
				if ch == '[' {
					inClass = true
				} else if ch == ']' {
					inClass = false
				} else if ch == '/' && !inClass {
					break
				}
				i++
			}
			i++
			prev = 'a' // a regex literal ends an expression, like an identifier
			continue
		case c == '`':
			if f := open('`'); f != nil {
				return f
			}
		case c == '(' || c == '[' || c == '{':
			if f := open(c); f != nil {
				return f
			}
		case c == ')' || c == ']' || c == '}':
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if c == '}' && top == '$' {
					prev = '`'
					i++
					continue // back inside the template body, which is still on the stack
				}
			}
		}
		prev = c
		i++
	}
	return nil
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
