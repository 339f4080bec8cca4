package sandbox

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/codemode/codemode/sandbox/intl"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"
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
	// helpersName names esbuild's output where no source map entry covers it: the helpers
	// esbuild adds for syntax it lowers.
	helpersName = "esbuild-helpers.js"
	// wrapPrefix and wrapSuffix make the source the body of an async function, so top-level
	// await and return work. The prefix shares the first line with the program, so line
	// numbers (in stack traces too) are the program's own.
	wrapPrefix = "(async function () {"
	wrapSuffix = "\n})"
)

// Program is a compiled run_code program, immutable and safe to run in many runtimes at once.
type Program struct {
	lang     Lang
	prg      *goja.Program
	size     int           // about the bytes the compiled program holds, for the cache's budget
	guards   guardSet      // the built-ins the program's runtime guards
	features featureSet    // the platform additions the program's runtime gets
	locale   intl.Builtins // the built-ins whose locale methods the program may call (see installIntl)
	pos      positions     // maps positions back to the model's source
	lowered  bool          // compiled through esbuild (positions come through its source map)
	tryCalls bool          // the wrapper takes the natives of trycall.go (see boundTryCalls)
	// text is what goja parsed, which its stack positions index, for calleeAt; empty for
	// lowered programs.
	text string
}

// Lang reports the language the program was compiled from.
func (p *Program) Lang() Lang { return p.lang }

// goja-compatible syntax for esbuild's output: everything goja parses is ES2022, minus
// the features listed as unsupported, which esbuild lowers.
var esbuildSupported = map[string]bool{
	"async-generator":                 false,
	"for-await":                       false,
	"using":                           false,
	"decorators":                      false,
	"regexp-match-indices":            false,
	"regexp-set-notation":             false,
	"regexp-unicode-property-escapes": false,
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
	src, f := stripModuleSyntax(stripFence(source))
	if f != nil {
		return nil, f
	}
	if lang == TypeScript {
		if src, f = lowerNamespaces(src); f != nil {
			return nil, f
		}
	}
	pos := positions{userLines: strings.Count(source, "\n") + 1}
	wrapped := wrapPrefix + src + wrapSuffix
	// goja's compiler panics on internal errors it does not expect; a program must never
	// crash the process, so anything left over becomes a syntax failure.
	defer func() {
		if x := recover(); x != nil {
			p, err = nil, &Failure{Kind: KindSyntax, Message: fmt.Sprintf("internal compiler error: %v", x)}
		}
	}()
	lower := lang == TypeScript || needsLowering(src)
	for {
		p, err = compileWrapped(wrapped, lang, lower, pos)
		if err == nil || lower || !regexFlagsFailure(err) {
			break
		}
		lower = true // a regular expression with flags goja lacks (d, v): esbuild rewrites it
	}
	if p != nil {
		p.size = len(source)*compiledPerSourceByte + len(p.text)
	}
	return p, err
}

// compileWrapped compiles the wrapped source, through esbuild first when lower is set.
func compileWrapped(wrapped string, lang Lang, lower bool, pos positions) (*Program, error) {
	name := programName
	sourceMaps := parser.WithDisableSourceMaps
	text := wrapped
	if lower {
		loader, sourcefile := api.LoaderJS, programName
		if lang == TypeScript {
			loader, sourcefile = api.LoaderTS, tsName
		}
		res := api.Transform(wrapped, api.TransformOptions{
			Loader:     loader,
			Target:     api.ES2022,
			Supported:  esbuildSupported,
			Sourcefile: sourcefile,
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
			return nil, pos.syntax(m.Text, line, col)
		}
		// Unmapped frames (esbuild's helpers) are named apart, so that error positions
		// only ever name the program's own lines.
		name = helpersName
		text = lowerRegexLiterals(string(res.Code)) + "\n//# sourceMappingURL=" + sourceMapURL
		sourceMap := res.Map
		sourceMaps = parser.WithSourceMapLoader(func(url string) ([]byte, error) {
			if url != sourceMapURL {
				return nil, errors.New("source maps are not loaded")
			}
			return sourceMap, nil
		})
		if sm, err := sourcemap.Parse(sourceMapURL, sourceMap); err == nil {
			pos.sourceMap = sm
		}
	}
	file, perr := parser.ParseFile(nil, name, text, 0, sourceMaps)
	if perr != nil {
		return nil, pos.parseFailure(perr)
	}
	if fn := programBody(file); fn != nil {
		if edits := shapeEdits(text, fn, 1); len(edits) > 0 {
			text = applyInsertions(text, edits)
			if file, perr = parser.ParseFile(nil, name, text, 0, sourceMaps); perr != nil {
				return nil, &Failure{Kind: KindSyntax, Message: "internal error: reshaping the program failed: " + perr.Error()}
			}
			if !lower {
				pos.edits = edits
			}
		}
	}
	tryCalls := false
	if fn := programBody(file); fn != nil {
		tryCalls = boundTryCalls(fn, text)
	}
	prg, cerr := goja.CompileAST(file, false)
	if cerr != nil {
		var se *goja.CompilerSyntaxError
		if errors.As(cerr, &se) && se.File != nil {
			p := se.File.Position(se.Offset)
			line, col := p.Line, p.Column
			if lower {
				line, col = pos.unmap(line, col)
			} else {
				line, col = unshift(pos.edits, line, col)
			}
			return nil, pos.syntax(se.Message, line, col)
		}
		return nil, &Failure{Kind: KindSyntax, Message: cerr.Error()}
	}
	posText := text // lowered programs keep none: their positions are not checked against a text
	if lower {
		posText = ""
	}
	return &Program{lang: lang, prg: prg, tryCalls: tryCalls, guards: guardsFor(text), features: featuresFor(text), locale: intl.BuiltinsFor(text), pos: pos, lowered: lower, text: posText}, nil
}

// programBody finds the wrapper function in a parsed program: the last top-level expression
// statement that is a function literal (esbuild puts its helpers before it).
func programBody(p *ast.Program) *ast.FunctionLiteral {
	for i := len(p.Body) - 1; i >= 0; i-- {
		if es, ok := p.Body[i].(*ast.ExpressionStatement); ok {
			if fn, ok := es.Expression.(*ast.FunctionLiteral); ok && fn.Body != nil {
				return fn
			}
			return nil
		}
	}
	return nil
}

// needsLowering reports whether JavaScript source uses regular-expression syntax goja gets
// wrong (Unicode property escapes): esbuild turns such literals into RegExp calls, which the
// sandbox's RegExp translates.
func needsLowering(src string) bool {
	return strings.Contains(src, `\p{`) || strings.Contains(src, `\P{`)
}

// lowerRegexLiterals rewrites the regular-expression literals of esbuild's output that goja
// would misread (property escapes, which esbuild leaves in place inside a class; the d and v
// flags) as RegExp calls, which the sandbox's RegExp translates.
func lowerRegexLiterals(text string) string {
	if !strings.Contains(text, `\p{`) && !strings.Contains(text, `\P{`) {
		return text
	}
	var b strings.Builder
	last := 0
	scanCode(text, scanHooks{regex: func(start, end int) {
		lit := text[start:end]
		slash := strings.LastIndexByte(lit, '/')
		if slash <= 0 {
			return
		}
		body, flags := lit[1:slash], lit[slash+1:]
		if !strings.Contains(body, `\p{`) && !strings.Contains(body, `\P{`) && !strings.ContainsAny(flags, "dv") {
			return
		}
		b.WriteString(text[last:start])
		b.WriteString("new RegExp(")
		b.WriteString(jsString(body))
		b.WriteString(", ")
		b.WriteString(jsString(flags))
		b.WriteString(")")
		last = end
	}})
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func regexFlagsFailure(err error) bool {
	var f *Failure
	return errors.As(err, &f) && strings.Contains(f.Message, "Invalid flags supplied to RegExp")
}

// positions translates positions in the compiled text back to the model's source.
type positions struct {
	userLines int
	edits     []insertion         // insertions made into unlowered text
	sourceMap *sourcemap.Consumer // lowered programs: esbuild's output → its input
}

// unmap maps a position in esbuild's output to esbuild's input (the wrapped source); 0, 0
// when it has no mapping (esbuild's helpers).
func (p positions) unmap(line, col int) (int, int) {
	if p.sourceMap == nil {
		return 0, 0
	}
	_, _, l, c, ok := p.sourceMap.Source(line, col-1)
	if !ok {
		return 0, 0
	}
	return l, c + 1
}

// user maps a line and column of the wrapped source to the model's source; ok is false for
// positions outside it (the wrapper).
func (p positions) user(line, col int) (int, int, bool) {
	if line <= 0 || line > p.userLines {
		return 0, 0, false
	}
	if line == 1 {
		col -= len(wrapPrefix)
	}
	if col < 1 {
		col = 1
	}
	return line, col, true
}

func (p positions) parseFailure(perr error) *Failure {
	var list parser.ErrorList
	if !errors.As(perr, &list) || len(list) == 0 {
		return &Failure{Kind: KindSyntax, Message: perr.Error()}
	}
	e := list[0]
	line, col := e.Position.Line, e.Position.Column
	if p.sourceMap != nil {
		line, col = p.unmap(line, col)
	}
	return p.syntax(e.Message, line, col)
}

// syntax reports msg at a position of the wrapped source, in the model's terms.
func (p positions) syntax(msg string, line, col int) *Failure {
	msg = strings.TrimSpace(msg)
	switch {
	case line <= 0:
		return &Failure{Kind: KindSyntax, Message: msg}
	case line > p.userLines:
		return &Failure{Kind: KindSyntax, Message: msg + " (at end of program)"}
	}
	l, c, _ := p.user(line, col)
	return &Failure{Kind: KindSyntax, Message: fmt.Sprintf("%s (at line %d:%d)", msg, l, c)}
}

// frame maps a stack frame's position (program.js or program.ts) to the model's source.
func (p *Program) frame(line, col int) (int, int, bool) {
	if !p.lowered {
		line, col = unshift(p.pos.edits, line, col)
	}
	return p.pos.user(line, col)
}

// calleeAt returns the callee of the call whose parenthesis is at line and col of goja's
// stack positions ("o.a.bar" for o.a.bar(1)), as V8 names it in "… is not a function"; ""
// when no call is there or its callee is not a plain chain of names, dots and brackets.
func (p *Program) calleeAt(line, col int) string {
	if p.text == "" {
		return ""
	}
	lines := strings.SplitN(p.text, "\n", line+1)
	if line < 1 || line > len(lines) {
		return ""
	}
	text := lines[line-1]
	paren := col - 1
	if paren < 1 || paren >= len(text) || text[paren] != '(' {
		return ""
	}
	end := paren
	if end >= 2 && text[end-2:end] == "?." {
		end -= 2
	}
	i := end
	for i > 0 {
		c := text[i-1]
		switch {
		case c == '_' || c == '$' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			i--
		case c == '?' && text[i] == '.':
			i--
		case c == ']' || c == ')':
			k := matchingOpen(text, i-1)
			if k < 0 {
				return ""
			}
			i = k
		default:
			goto done
		}
	}
done:
	callee := text[i:end]
	if callee == "" || callee[0] == '.' || callee[0] == '[' || callee[0] == '(' || callee[0] >= '0' && callee[0] <= '9' {
		return ""
	}
	// V8 writes a call's arguments as "...": f(1)(2) → "f(...) is not a function".
	var b strings.Builder
	for j := 0; j < len(callee); j++ {
		if callee[j] != '(' {
			b.WriteByte(callee[j])
			continue
		}
		depth := 0
		for ; j < len(callee); j++ {
			if callee[j] == '(' {
				depth++
			} else if callee[j] == ')' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		b.WriteString("(...)")
	}
	return b.String()
}

// matchingOpen returns the index of the bracket or parenthesis that the one at close closes,
// or -1.
func matchingOpen(text string, close int) int {
	open := byte('[')
	if text[close] == ')' {
		open = '('
	}
	depth := 0
	for k := close; k >= 0; k-- {
		switch text[k] {
		case text[close]:
			depth++
		case open:
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return -1
}
