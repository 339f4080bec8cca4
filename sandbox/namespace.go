package sandbox

import (
	"fmt"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// TypeScript allows a namespace (or `module`) declaration only at the top level of a file,
// while a program is the body of a function: esbuild refuses one there. lowerNamespaces
// compiles each declaration at the body's top level on its own, as the top level of a file,
// and puts the JavaScript esbuild makes of it (`var N; (N => {…})(N || (N = {}))`, which is
// valid in a function body) in its place: on the declaration's first line, followed by as many
// line breaks as the declaration had, so every line after it keeps its number. A declaration
// that merges with earlier ones of its name is compiled after them, so that it sees their
// exports unqualified as tsc has it, and only its own part of the output is kept.

// namespaceSpan is one top-level declaration: src[start:end], whose body opens at open;
// name is the first identifier of its (maybe dotted) name.
type namespaceSpan struct {
	start, open, end int
	name             string
}

// namespaceSplit ends each earlier declaration of a name when a later one is compiled after
// them; the later one's JavaScript follows the split's in esbuild's output.
const namespaceSplit = "__codemode_namespace_split__();"

func lowerNamespaces(src string) (string, *Failure) {
	if !strings.Contains(src, "namespace") && !strings.Contains(src, "module") {
		return src, nil
	}
	var spans []namespaceSpan
	var prevWord token // the word before the current one at depth 0, for `declare namespace`
	scanCode(src, scanHooks{
		word: func(t token) {
			defer func() {
				if t.depth == 0 {
					prevWord = t
				}
			}()
			if n := len(spans); n > 0 && spans[n-1].end == 0 {
				return // inside a declaration already found
			}
			w := src[t.start:t.end]
			if t.depth != 0 || (w != "namespace" && w != "module") {
				return
			}
			start := t.start
			switch {
			case statementStart(t):
			case prevWord.end > 0 && src[prevWord.start:prevWord.end] == "declare" && statementStart(prevWord) &&
				strings.TrimSpace(src[prevWord.end:t.start]) == "":
				start = prevWord.start
			default:
				return
			}
			open, ok := namespaceOpen(src, t.end)
			if ok {
				name, _, _ := nextWord(src, t.end)
				spans = append(spans, namespaceSpan{start: start, open: open, name: name})
			}
		},
		close: func(at, depth int) {
			if n := len(spans); n > 0 && spans[n-1].end == 0 && depth == 0 && at > spans[n-1].open {
				spans[n-1].end = at + 1
			}
		},
	})
	if len(spans) == 0 {
		return src, nil
	}
	var b strings.Builder
	last := 0
	before := map[string]string{} // a namespace's name → its declarations so far, each followed by namespaceSplit
	for _, sp := range spans {
		if sp.end == 0 {
			break // unclosed: the parser reports it
		}
		decl := src[sp.start:sp.end]
		// A declaration merges with the earlier ones of its name, whose exports it sees
		// unqualified: it is compiled after them, and only its own part is kept.
		prefix := before[sp.name]
		res := api.Transform(prefix+decl, api.TransformOptions{
			Loader:           api.LoaderTS,
			Target:           api.ES2022,
			Sourcefile:       tsName,
			MinifyWhitespace: true,
			LogLevel:         api.LogLevelSilent,
			Charset:          api.CharsetUTF8,
		})
		if len(res.Errors) > 0 {
			m := res.Errors[0]
			line, col := lineCol(src, sp.start)
			// The prefix ends with a line break: lines of decl count from after it.
			if m.Location != nil {
				if l := m.Location.Line - strings.Count(prefix, "\n"); l >= 1 {
					if l > 1 {
						col = 1
					}
					line, col = line+l-1, col+m.Location.Column
				}
			}
			return "", &Failure{Kind: KindSyntax, Message: fmt.Sprintf("%s (at line %d:%d)", m.Text, line, col)}
		}
		code := string(res.Code)
		if prefix != "" {
			i := strings.LastIndex(code, namespaceSplit)
			if i < 0 {
				line, col := lineCol(src, sp.start)
				return "", &Failure{Kind: KindSyntax, Message: fmt.Sprintf("namespace %s: its declarations could not be merged (at line %d:%d)", sp.name, line, col)}
			}
			// Its part starts with "(": a semicolon keeps it from calling what precedes it.
			code = ";" + code[i+len(namespaceSplit):]
		}
		before[sp.name] = prefix + decl + "\n" + namespaceSplit + "\n"
		b.WriteString(src[last:sp.start])
		b.WriteString(strings.TrimRight(code, "\n"))
		b.WriteString(strings.Repeat("\n", strings.Count(decl, "\n")))
		last = sp.end
	}
	b.WriteString(src[last:])
	return b.String(), nil
}

// namespaceOpen reports the offset of the `{` that opens a declaration whose keyword ends at
// i: a name, or a dotted name (`namespace A.B {`), then the brace.
func namespaceOpen(src string, i int) (int, bool) {
	for {
		w, _, end := nextWord(src, i)
		if w == "" || !isIdentStart(w[0]) {
			return 0, false
		}
		i = skipSpace(src, end)
		if i < len(src) && src[i] == '.' {
			i++
			continue
		}
		if i < len(src) && src[i] == '{' {
			return i, true
		}
		return 0, false
	}
}

func isIdentStart(c byte) bool { return isWordByte(c) && (c < '0' || c > '9') }
