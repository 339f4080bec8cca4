package sandbox

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/dop251/goja/ast"
)

// Program shapes.
//
// Models write programs in the shapes they learned elsewhere: wrapped in a Markdown fence, as
// an ES module (export, import type), as one function (`async () => {…}`, `async function
// main() {…}`, `export default …`) that a host is expected to call, or with the call of that
// function left unawaited as the last statement. Each of these would otherwise end as a run
// that returns nothing and makes no tool call. The compile step turns them into the body the
// sandbox runs, without moving any of the model's code: blanked text is replaced by spaces and
// the few insertions are recorded, so every position reported later is the model's own line
// and column.

// blank replaces src[start:end] with spaces, keeping newlines, so positions after it stay put.
func blank(b []byte, start, end int) {
	for i := start; i < end && i < len(b); i++ {
		if b[i] != '\n' && b[i] != '\r' {
			b[i] = ' '
		}
	}
}

// stripFence blanks one Markdown code fence around the whole program: an opening line of three
// or more backticks (with an optional language tag) as the first non-blank line, and a closing
// line of backticks as the last one. Lines keep their numbers.
func stripFence(src string) string {
	start := 0
	for start < len(src) && (src[start] == ' ' || src[start] == '\t' || src[start] == '\r' || src[start] == '\n') {
		start++
	}
	if !strings.HasPrefix(src[start:], "```") {
		return src
	}
	openEnd := strings.IndexByte(src[start:], '\n')
	if openEnd < 0 {
		return src
	}
	openEnd += start
	tag := strings.TrimSpace(strings.TrimLeft(src[start:openEnd], "`"))
	if strings.ContainsAny(tag, "`") || strings.Contains(tag, " ") && !strings.HasPrefix(tag, "{") {
		return src
	}
	end := len(src)
	for end > openEnd && (src[end-1] == ' ' || src[end-1] == '\t' || src[end-1] == '\r' || src[end-1] == '\n') {
		end--
	}
	closeStart := strings.LastIndexByte(src[:end], '\n') + 1
	if closeStart <= openEnd || strings.Trim(src[closeStart:end], "`") != "" || end-closeStart < 3 {
		return src
	}
	b := []byte(src)
	blank(b, start, openEnd)
	blank(b, closeStart, end)
	return string(b)
}

// nextWord returns the word starting at or after i (skipping spaces and comments), with its
// offsets; "" when the next code is not a word.
func nextWord(src string, i int) (string, int, int) {
	i = skipSpace(src, i)
	j := i
	for j < len(src) && isWordByte(src[j]) {
		j++
	}
	return src[i:j], i, j
}

// skipSpace skips white space and comments from i.
func skipSpace(src string, i int) int {
	for i < len(src) {
		switch c := src[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return len(src)
			}
			i += end + 4
		default:
			return i
		}
	}
	return i
}

// statementStart reports whether a word whose previous significant byte is prev can begin a
// statement (and is not a property name such as obj.export).
func statementStart(t token) bool {
	if t.newline {
		return true
	}
	switch t.prev {
	case 0, ';', '}', '{', ')':
		return true
	}
	return false
}

// moduleFailure is the message for module syntax that cannot work in a sandboxed program.
const moduleHint = "a program is one script: it cannot import modules, and has no require, file system, network or process; call tools through the global `tools` object instead (for example `const r = await tools.<name>(args)`)"

// stripModuleSyntax blanks the module syntax of a program, which runs as one script: `export`
// before a declaration, `export { … }` and `export * from …` lists, `import type …`; `export
// default` becomes `return` (padded to the same width). A value import, `import(…)` or
// `import.meta` is a syntax failure at its position. Positions of everything else stay put.
func stripModuleSyntax(src string) (string, *Failure) {
	if !strings.Contains(src, "export") && !strings.Contains(src, "import") {
		return src, nil
	}
	b := []byte(src)
	var fail *Failure
	scanWords(src, func(t token) {
		if fail != nil {
			return
		}
		word := src[t.start:t.end]
		if word != "export" && word != "import" {
			return
		}
		if t.prev == '.' {
			return // a property: obj.import
		}
		after := skipSpace(src, t.end)
		if after < len(src) && src[after] == ':' {
			return // an object key: {export: 1}
		}
		if word == "import" {
			if after < len(src) && (src[after] == '(' || src[after] == '.') {
				fail = modulePosition(src, t.start, "dynamic import() is not available")
				return
			}
			if t.depth != 0 || !statementStart(t) {
				return
			}
			next, _, nextEnd := nextWord(src, t.end)
			if next == "type" {
				// import type … from "…": types only, nothing to run.
				if w, _, _ := nextWord(src, nextEnd); w != "from" {
					blank(b, t.start, statementEnd(src, t.start))
					return
				}
			}
			fail = modulePosition(src, t.start, "import is not available")
			return
		}
		if t.depth != 0 || !statementStart(t) {
			return
		}
		next, nextStart, nextEnd := nextWord(src, t.end)
		switch {
		case next == "default":
			// "export default" (14 bytes, or more with comments) → "return" padded.
			blank(b, t.start, nextEnd)
			copy(b[t.start:], "return")
		case next == "" && nextStart < len(src) && (src[nextStart] == '{' || src[nextStart] == '*'):
			blank(b, t.start, statementEnd(src, t.start))
		case next == "type" && !isDeclarationAfterType(src, nextEnd):
			blank(b, t.start, statementEnd(src, t.start)) // export type { A, B }
		case next == "=":
			fail = modulePosition(src, t.start, "export = is not available")
		default:
			blank(b, t.start, t.end)
		}
	})
	if fail != nil {
		return "", fail
	}
	return string(b), nil
}

// isDeclarationAfterType reports whether "type" at i is followed by a type alias name (export
// type Name = …) rather than a list (export type { A }).
func isDeclarationAfterType(src string, i int) bool {
	w, _, _ := nextWord(src, i)
	return w != ""
}

// statementEnd finds the end of an import or export list statement starting at i: after the
// module string when there is one (… from "x"), else after the closing brace, and a following
// semicolon.
func statementEnd(src string, i int) int {
	depth := 0
	for j := i; j < len(src); j++ {
		switch c := src[j]; c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				end := j + 1
				if w, _, we := nextWord(src, end); w == "from" {
					end = afterString(src, we)
				}
				return afterSemicolon(src, end)
			}
		case '\'', '"':
			if depth == 0 {
				return afterSemicolon(src, afterString(src, j))
			}
		case ';', '\n':
			if depth == 0 {
				return j
			}
		}
	}
	return len(src)
}

func afterString(src string, i int) int {
	i = skipSpace(src, i)
	if i >= len(src) || (src[i] != '"' && src[i] != '\'') {
		return i
	}
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		if src[j] == '\\' {
			j++
			continue
		}
		if src[j] == q || src[j] == '\n' {
			return j + 1
		}
	}
	return len(src)
}

func afterSemicolon(src string, i int) int {
	j := i
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if j < len(src) && src[j] == ';' {
		return j + 1
	}
	return i
}

func modulePosition(src string, offset int, what string) *Failure {
	line, col := lineCol(src, offset)
	return &Failure{Kind: KindSyntax, Message: fmt.Sprintf("%s: %s (at line %d:%d)", what, moduleHint, line, col)}
}

// lineCol is the 1-based line and column (in bytes) of offset in src.
func lineCol(src string, offset int) (int, int) {
	if offset > len(src) {
		offset = len(src)
	}
	line := strings.Count(src[:offset], "\n") + 1
	return line, offset - (strings.LastIndexByte(src[:offset], '\n') + 1) + 1
}

// insertion is text inserted into the wrapped source, at a line and column of the text before
// any insertion; positions are mapped back through it.
type insertion struct {
	offset    int // in the text before insertions
	line, col int
	text      string
}

// shapeEdits decides how the parsed program body must change to return what the model meant
// it to: the value of a lone function (called), of a lone function declaration or a function
// named main among declarations (called), of an `export default` function (called), or of an
// unawaited call left as the last statement (returned, so the run waits for it). It returns no
// edits for programs that need none, which is nearly all of them.
func shapeEdits(src string, fn *ast.FunctionLiteral, base int) []insertion {
	var stmts []ast.Statement
	for _, s := range fn.Body.List {
		if _, empty := s.(*ast.EmptyStatement); !empty {
			stmts = append(stmts, s)
		}
	}
	if len(stmts) == 0 {
		return nil
	}
	at := func(i int) insertion {
		line, col := lineCol(src, i)
		return insertion{offset: i, line: line, col: col}
	}
	ins := func(i int, text string) insertion {
		e := at(i)
		e.text = text
		return e
	}
	last := stmts[len(stmts)-1]

	// return <function> (what export default becomes) → return (<function>)(): a function
	// cannot be a result, so a program that returns one meant it to be called.
	for _, s := range stmts {
		ret, ok := s.(*ast.ReturnStatement)
		if !ok || ret.Argument == nil {
			continue
		}
		if isFunctionLiteral(ret.Argument) || isCallableName(ret.Argument, stmts) {
			start := stmtStart(src, exprStart(src, ret.Argument, base))
			end := stmtEnd(src, int(ret.Argument.Idx1())-base)
			return []insertion{ins(start, "("), ins(end, ")()")}
		}
		return nil
	}

	// A lone function expression: `async () => {…}` or `(async function () {…})`.
	if len(stmts) == 1 {
		if es, ok := last.(*ast.ExpressionStatement); ok && isFunctionLiteral(es.Expression) {
			start := stmtStart(src, exprStart(src, es.Expression, base))
			end := stmtEnd(src, int(es.Idx1())-base)
			return []insertion{ins(start, "return ("), ins(end, ")()")}
		}
	}

	// Declarations only, with one function to call: the lone function, or the one named main.
	var fns []*ast.FunctionLiteral
	declarationsOnly := true
	for _, s := range stmts {
		switch d := s.(type) {
		case *ast.FunctionDeclaration:
			fns = append(fns, d.Function)
		case *ast.VariableStatement, *ast.LexicalDeclaration, *ast.ClassDeclaration:
		case *ast.ExpressionStatement:
			if _, directive := d.Expression.(*ast.StringLiteral); !directive {
				declarationsOnly = false
			}
		default:
			declarationsOnly = false
		}
	}
	if declarationsOnly && len(fns) > 0 {
		var target *ast.FunctionLiteral
		for _, f := range fns {
			if f.Name != nil && f.Name.Name == "main" {
				target = f
			}
		}
		if target == nil && len(fns) == 1 {
			target = fns[0]
		}
		if target != nil && target.Name != nil && target.ParameterList != nil && len(target.ParameterList.List) == 0 {
			return []insertion{ins(int(fn.Body.RightBrace)-base, "\n;return "+string(target.Name.Name)+"()\n")}
		}
		return nil
	}

	// The last statement is a call whose promise nobody awaits (`main()`, an async IIFE,
	// `main().catch(console.error)`, `await main()`): return it, so the run waits for it and
	// its value is the result. A program that returns anywhere at its top level is left alone.
	if hasTopLevelReturn(stmts) {
		return nil
	}
	es, ok := last.(*ast.ExpressionStatement)
	if !ok || !isCallLike(es.Expression) {
		return nil
	}
	// After the previous statement, which may end without a semicolon (an empty statement
	// is harmless when it has one).
	start, text := stmtStart(src, exprStart(src, es.Expression, base)), " return ("
	if len(stmts) > 1 {
		start, text = afterSemicolon(src, int(stmts[len(stmts)-2].Idx1())-base), ";return ("
	}
	end := int(es.Idx1()) - base
	return []insertion{ins(start, text), ins(end, ")")}
}

func isFunctionLiteral(e ast.Expression) bool {
	switch e.(type) {
	case *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
		return true
	}
	return false
}

// isCallableName reports whether e names a function declared at the top of the program
// (export default main).
func isCallableName(e ast.Expression, stmts []ast.Statement) bool {
	id, ok := e.(*ast.Identifier)
	if !ok {
		return false
	}
	for _, s := range stmts {
		if d, ok := s.(*ast.FunctionDeclaration); ok && d.Function.Name != nil && d.Function.Name.Name == id.Name {
			return true
		}
	}
	return false
}

// isCallLike reports whether e is a call, or an await of one, whose value the model meant as
// the program's: not a console call.
func isCallLike(e ast.Expression) bool {
	if aw, ok := e.(*ast.AwaitExpression); ok {
		e = aw.Argument
	}
	call, ok := e.(*ast.CallExpression)
	if !ok {
		return false
	}
	for callee := call.Callee; ; {
		switch c := callee.(type) {
		case *ast.DotExpression:
			if id, ok := c.Left.(*ast.Identifier); ok && id.Name == "console" {
				return false
			}
			callee = c.Left
			continue
		case *ast.CallExpression:
			callee = c.Callee
			continue
		}
		return true
	}
}

func hasTopLevelReturn(stmts []ast.Statement) bool {
	found := false
	var walk func(s ast.Statement)
	walk = func(s ast.Statement) {
		if found || s == nil || reflect.ValueOf(s).IsNil() {
			return
		}
		switch x := s.(type) {
		case *ast.ReturnStatement:
			found = true
		case *ast.BlockStatement:
			for _, c := range x.List {
				walk(c)
			}
		case *ast.IfStatement:
			walk(x.Consequent)
			walk(x.Alternate)
		case *ast.TryStatement:
			walk(x.Body)
			if x.Catch != nil {
				walk(x.Catch.Body)
			}
			if x.Finally != nil {
				walk(x.Finally)
			}
		case *ast.ForStatement:
			walk(x.Body)
		case *ast.ForInStatement:
			walk(x.Body)
		case *ast.ForOfStatement:
			walk(x.Body)
		case *ast.WhileStatement:
			walk(x.Body)
		case *ast.DoWhileStatement:
			walk(x.Body)
		case *ast.LabelledStatement:
			walk(x.Statement)
		case *ast.SwitchStatement:
			for _, c := range x.Body {
				for _, cs := range c.Consequent {
					walk(cs)
				}
			}
		}
	}
	for _, s := range stmts {
		walk(s)
	}
	return found
}

// exprStart is the offset where e begins, including an async keyword goja does not count.
func exprStart(src string, e ast.Expression, base int) int {
	i := int(e.Idx0()) - base
	for c := e; ; {
		switch x := c.(type) {
		case *ast.CallExpression:
			c = x.Callee
			continue
		case *ast.DotExpression:
			c = x.Left
			continue
		case *ast.FunctionLiteral:
			if x.Async {
				j := i
				for j > 0 && (src[j-1] == ' ' || src[j-1] == '\t') {
					j--
				}
				if j >= 5 && src[j-5:j] == "async" {
					i = j - 5
				}
			}
		}
		return i
	}
}

// stmtStart steps back from an expression's start over opening parentheses and white space,
// to where its statement begins.
func stmtStart(src string, i int) int {
	for i > 0 {
		switch src[i-1] {
		case '(', ' ', '\t', '\r', '\n':
			i--
			continue
		}
		break
	}
	return i
}

// stmtEnd steps forward from an expression's end over closing parentheses to just before a
// semicolon or the end of the statement; the semicolon, if any, is left outside.
func stmtEnd(src string, i int) int {
	for i < len(src) && (src[i] == ')' || src[i] == ' ' || src[i] == '\t') {
		i++
	}
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	return i
}

// applyInsertions returns src with ins applied (ins sorted by offset).
func applyInsertions(src string, ins []insertion) string {
	var b strings.Builder
	b.Grow(len(src) + 32)
	last := 0
	for _, e := range ins {
		b.WriteString(src[last:e.offset])
		b.WriteString(e.text)
		last = e.offset
	}
	b.WriteString(src[last:])
	return b.String()
}

// unshift maps a line and column of the text after ins back to the text before them.
func unshift(ins []insertion, line, col int) (int, int) {
	shift := 0
	for _, e := range ins {
		if e.line != line || strings.Contains(e.text, "\n") {
			continue
		}
		start := e.col + shift
		switch {
		case col >= start+len(e.text):
			shift += len(e.text)
		case col >= start:
			return line, e.col
		}
	}
	return line, col - shift
}
