package sdkgen

import (
	"bytes"
	"slices"
	"strings"
)

// jsHeader labels the JavaScript text for what it is.
const jsHeader = `// @ts-check
// Code Mode SDK for JavaScript readers: the tools a run_code program can call, typed with JSDoc
// in TypeScript syntax (which TypeScript-aware editors check). A reference for editors and
// people, not a program to run: a run_code program finds tools and ToolCallError defined.

/**
 * A failed tool call: the promise returned by a tools call rejects with one. Its code says why:
 * UNKNOWN_TOOL, INVALID_ARGS, DENIED, TOOL_TIMEOUT, TOOL_FAILED, ABORTED, …
 * @typedef {Error & { readonly name: "ToolCallError"; readonly toolName: string; readonly code: string }} ToolCallError
 */
/** @type {{ new (toolName: string, message: string, code?: string): ToolCallError; readonly prototype: ToolCallError }} */
var ToolCallError;
`

// JavaScript renders the SDK for JavaScript readers: the same tools as TypeScript, as JSDoc on
// two variable declarations, `ToolCallError` and `tools`. The JSDoc of tools lists each tool
// with its summary and the summaries of its top-level arguments, then types tools in a
// multi-line @type with one member per tool (a JSDoc type cannot hold nested comments, so the
// types themselves carry no property docs). Every "*/" that could end the comment is escaped:
// in prose as "*\/", in string literal types as the equivalent escape "*\/". The text parses
// as JavaScript and evaluates to nothing but two undefined variables; it is byte-identical for
// sets with the same Version.
func JavaScript(s *Set) []byte {
	entries := s.entries()
	var b bytes.Buffer
	b.Grow(len(jsHeader) + 256 + 384*len(entries))
	b.WriteString(jsHeader)
	b.WriteString("\n/**\n * ")
	b.WriteString(toolsDoc)
	b.WriteString("\n *\n")
	for _, e := range entries {
		b.WriteString(" * - `")
		b.WriteString(escapeCommentEnd(propertyKey(e.name)))
		b.WriteString("`")
		if doc := docSummary(e.description); doc != "" {
			b.WriteString(": ")
			b.WriteString(doc)
		}
		for _, arg := range argumentDocs(e.params, e.name) {
			b.WriteString(" `args")
			if key := propertyKey(arg.name); key == arg.name {
				b.WriteString("." + key)
			} else {
				b.WriteString("[" + escapeCommentEnd(key) + "]")
			}
			b.WriteString("`: ")
			b.WriteString(arg.doc)
		}
		b.WriteByte('\n')
	}
	b.WriteString(" * - `$search`: " + searchDoc + "\n")
	b.WriteString(" * - `$describe`: " + describeDoc + "\n")
	b.WriteString(" *\n * @type {{")
	for _, e := range entries {
		b.WriteString("\n *   ")
		sig, _ := signature(e, layoutBare, nil)
		b.WriteString(escapeCommentEnd(sig))
		b.WriteByte(';')
	}
	b.WriteString("\n *   " + searchDecl + ";")
	b.WriteString("\n *   " + describeDecl + ";")
	b.WriteString("\n * ")
	b.WriteString("}}\n */\nvar tools;\n")
	return b.Bytes()
}

// argumentDoc is the JSDoc summary of one top-level argument.
type argumentDoc struct{ name, doc string }

// argumentDocs returns the documented properties of a tool's argument object schema, in name
// order, without descriptions that restate the names (see dropRestatedDocs).
func argumentDocs(sc schema, toolName string) []argumentDoc {
	if sc.state != schemaValid {
		return nil
	}
	obj, _ := sc.value().(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	var out []argumentDoc
	for name, ps := range props {
		if doc := trimRestated(propertyDoc(ps), name+" "+toolName); doc != "" {
			out = append(out, argumentDoc{name, doc})
		}
	}
	slices.SortFunc(out, func(a, b argumentDoc) int { return strings.Compare(a.name, b.name) })
	return out
}
