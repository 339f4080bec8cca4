package sdkgen

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/codemode/codemode/internal/bytesize"
)

// Every text lists each tool exactly once, as one member of `tools` whose signature carries the
// argument and result types inline: TypeScript and JavaScript lay a member out over lines, with
// each property's JSDoc on its own line (for editors and people); the prompt puts it on one line
// (for models, who pay for every byte). ToolName, ToolArgsMap and ToolOutputMap, which tool
// authors name in their code, are derived from `typeof tools` in three constant-size lines
// instead of listing every tool again.

// toolCallErrorDecl declares the error a failed tool call rejects with, as the sandbox defines
// it: constructor (toolName, message, code = "TOOL_FAILED"), name on the prototype, toolName and
// code on the instance.
const toolCallErrorDecl = `/** A failed tool call: the promise returned by a tools call rejects with one. */
declare class ToolCallError extends Error {
  constructor(toolName: string, message: string, code?: string);
  readonly name: "ToolCallError";
  /** The name of the tool whose call failed. */
  readonly toolName: string;
  /** Why: UNKNOWN_TOOL, INVALID_ARGS, DENIED, TOOL_TIMEOUT, TOOL_FAILED, ABORTED, … */
  readonly code: string;
}
`

// toolsDoc is the JSDoc summary of `tools` in every text.
const toolsDoc = "The tools: `await tools.name(args)`, or `await tools[\"other-name\"](args)`."

// derivedMaps are the named types tool authors use, derived from the one declaration of tools.
const derivedMaps = `
/** The name of a tool. */
type ToolName = Exclude<keyof typeof tools, "$search" | "$describe">;
/** The argument object of each tool. */
type ToolArgsMap = { [K in ToolName]: Exclude<Parameters<(typeof tools)[K]>[0], undefined> };
/** The value each tool's call resolves to. */
type ToolOutputMap = { [K in ToolName]: Awaited<ReturnType<(typeof tools)[K]>> };
`

// TypeScript renders the declarations of the set for tool authors and editors: ToolCallError,
// `declare const tools` with one member per tool (its one-line JSDoc, then its signature with
// the argument and result types inline, each property's JSDoc on its own line), then ToolName,
// ToolArgsMap and ToolOutputMap derived from it. Tools appear in name order; names that are not
// plain identifiers are quoted; a tool without an output schema resolves to unknown. The text
// contains declarations only, and is byte-identical for sets with the same Version.
func TypeScript(s *Set) []byte {
	entries := s.entries()
	var b bytes.Buffer
	b.Grow(1024 + 512*len(entries))
	b.WriteString("// Code Mode SDK: the tools a run_code program can call, as TypeScript declarations.\n\n")
	b.WriteString(toolCallErrorDecl)
	b.WriteString("\n")
	st := s.shared()
	st.writeDeclarations(&b, nil, layoutLines)
	b.WriteString("/** ")
	b.WriteString(toolsDoc)
	b.WriteString(" */\n")
	writeToolsDecl(&b, entries, layoutLines, true, st)
	b.WriteString(derivedMaps)
	return b.Bytes()
}

// layout says how a tool's signature is laid out.
type layout uint8

const (
	layoutLines  layout = iota // over lines, property JSDoc on lines of their own
	layoutInline               // on one line, property JSDoc inline
	layoutBare                 // on one line, without property JSDoc
)

// writeToolsDecl writes `declare const tools: {…};` with one member per tool, then, with
// discovery set, the members $search and $describe.
func writeToolsDecl(b *bytes.Buffer, entries []entry, lay layout, discovery bool, st *sharedTypes) {
	b.WriteString("declare const tools: {")
	if len(entries) > 0 || discovery {
		b.WriteByte('\n')
	}
	for _, e := range entries {
		writeMember(b, e, lay, docSummary(e.description), st)
	}
	if discovery {
		for _, m := range [...][2]string{{searchDoc, searchDecl}, {describeDoc, describeDecl}} {
			b.WriteString("  /** ")
			b.WriteString(m[0])
			if lay == layoutLines {
				b.WriteString(" */\n  ")
			} else {
				b.WriteString(" */ ")
			}
			b.WriteString(m[1])
			b.WriteString(";\n")
		}
	}
	b.WriteString("};\n")
}

// signature renders a tool as a method signature: name(args: A): Promise<R>, with `args?` when
// the arguments may be omitted.
//
// With st, the declared types stand in for their occurrences, and used lists the ones the
// signature refers to directly.
func signature(e entry, lay layout, st *sharedTypes) (sig string, used []*declType) {
	argsType, used := sharedSchemaType(e.params, "  ", st, false)
	args := dropRestatedDocs(argsType.text, e.name)
	if len(args) > maxTypeBytes {
		args, used = tooLarge("{ [key: string]: unknown }", "parameters", len(args)), nil
	}
	result := tsUnknown.text
	if e.output.state != schemaEmpty {
		resultType, resultUses := sharedSchemaType(e.output, "  ", st, true)
		result = dropRestatedDocs(resultType.text, e.name)
		if len(result) > maxTypeBytes {
			result, resultUses = tooLarge("unknown", "value", len(result)), nil
		}
		used = append(used, resultUses...)
	}
	switch lay {
	case layoutInline:
		// Whether a result is an integer does not change how a program reads it.
		args, result = inline(args), inline(dropDocTag(result, "@integer"))
	case layoutBare:
		args, result = inline(stripDocs(args)), inline(stripDocs(result))
	}
	var b strings.Builder
	b.Grow(len(e.name) + len(args) + len(result) + 24)
	b.WriteString(propertyKey(e.name))
	b.WriteString("(args")
	if argsOptional(e.params) {
		b.WriteByte('?')
	}
	b.WriteString(": ")
	b.WriteString(args)
	b.WriteString("): Promise<")
	b.WriteString(result)
	b.WriteString(">")
	return b.String(), used
}

// maxTypeBytes bounds one tool's argument or result type: a schema that renders longer (a
// huge or self-multiplying one) is shown as tooLarge says, so one tool can never blow up the
// texts every other tool shares.
const maxTypeBytes = 64 << 10

// tooLarge is the type shown for a schema that renders to n bytes, past maxTypeBytes: the
// widest type, with a comment saying why.
func tooLarge(widest, what string, n int) string {
	return "/* its " + what + " schema is too large to show (" + bytesize.Format(int64(n)) + " as TypeScript) */ " + widest
}

// maxSignatureRunes bounds Signature.
const maxSignatureRunes = 300

// Signature returns the one-line TypeScript signature of a tool, without JSDoc, for messages:
// `math_add(args: { a: number; b: number }): Promise<{ sum: number }>`. Longer than 300
// characters, it is cut and ends with "…". It never contains a line break. It is
// self-contained: every type is written out (Set.Signature names the set's shared types).
func Signature(t Tool) string {
	return entry{name: t.Name, description: t.Description, params: decodeSchema(t.Parameters), output: decodeSchema(t.Output)}.signature(nil)
}

// Signature is the package's Signature of the named tool, with the set's shared types
// referred to by name (`Promise<McpContent>`) as TypeScript and the prompt declare them; ok is
// false when the set has no tool so named.
func (s *Set) Signature(name string) (sig string, ok bool) {
	if s == nil {
		return "", false
	}
	if v, ok := s.signatures.Load(name); ok {
		return v.(string), true // error messages ask on every refused call: render once
	}
	e, ok := s.find(name)
	if !ok {
		return "", false
	}
	sig = e.signature(s.shared())
	s.signatures.Store(name, sig)
	return sig, true
}

// signature is Signature of an entry, with the shared types st.
func (e entry) signature(st *sharedTypes) string {
	sig, _ := signature(e, layoutBare, st)
	if utf8.RuneCountInString(sig) <= maxSignatureRunes {
		return sig
	}
	n := 0
	for i := range sig {
		if n == maxSignatureRunes-1 {
			return sig[:i] + "…"
		}
		n++
	}
	return sig
}

// argsOptional reports whether a call may omit its argument object (the sandbox then passes
// {}): the parameters are absent, accept anything, or are an object schema with no required
// property and no combinator that could add one.
func argsOptional(sc schema) bool {
	switch sc.state {
	case schemaEmpty:
		return true
	case schemaInvalid:
		return false
	}
	switch v := sc.value().(type) {
	case bool:
		return v
	case map[string]any:
		for _, kw := range [...]string{"$ref", "$dynamicRef", "$recursiveRef", "anyOf", "oneOf", "allOf", "const", "enum"} {
			if _, ok := v[kw]; ok {
				return false
			}
		}
		if t, present := v["type"]; present && t != "object" {
			return false
		}
		if r, present := v["required"]; present {
			list, ok := r.([]any)
			return ok && len(list) == 0
		}
		return true
	default:
		return false
	}
}
