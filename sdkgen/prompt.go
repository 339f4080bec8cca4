package sdkgen

import (
	"bytes"
	"strconv"
	"time"

	"github.com/codemode/codemode/internal/bytesize"
	"github.com/codemode/codemode/runtime"
	"github.com/codemode/codemode/sandbox"
)

// PromptOptions are the facts of the service that the prompt states. The zero value of each
// field (or a negative one) means the default of the limit's owner, which is what a service
// configured with no limits runs with.
type PromptOptions struct {
	Timeout        time.Duration // one run, wall clock; default sandbox.DefaultTimeout
	MaxCalls       int           // tool calls per run; default sandbox.DefaultMaxCalls
	MaxParallel    int           // tool calls running at once; default runtime.DefaultWindow
	MaxLogBytes    int64         // captured console output; default sandbox.DefaultMaxLogBytes
	MaxResultBytes int64         // the returned value as JSON; default sandbox.DefaultMaxResultBytes
	// Platform is the line that says what the runtime offers besides the tools, for example
	// sandbox.PlatformSummary; empty means DefaultPlatform.
	Platform string
	// Budget bounds the prompt in o200k tokens: the whole SDK while it fits, a catalog past
	// it. Zero means DefaultPromptBudget; negative means no bound (always the whole SDK).
	Budget int
	// Pinned names the tools a catalog shows whole first, in this order (names the set does
	// not have are passed over).
	Pinned []string
}

// DefaultPlatform says what the runtime offers, in the prompt's words, when the caller passes
// no Platform line.
const DefaultPlatform = "ES2024, Intl, URL, TextEncoder, atob, crypto.randomUUID, AbortController, " +
	"structuredClone, timers, console.*; no I/O but the tools."

// Prompt is PromptWith(s, PromptOptions{}): the prompt of a service with the default limits.
func Prompt(s *Set) []byte { return PromptWith(s, PromptOptions{}) }

// PromptWith renders what a model reads up front to use run_code: the program contract
// (docs/contract.md "The program") in as few words as it can be said — the program's
// shape, what a call returns, when promises settle, how values cross, the limits, how failures
// surface, what the runtime offers — one short example, and then the tools. While the whole SDK
// fits o.Budget it follows, with each tool on one line (its JSDoc summary, then its signature
// with property JSDoc inline); past the budget a catalog follows instead: how to find tools
// from a program (tools.$search, tools.$describe), the groups of tools with their counts, and
// whole declarations of the pinned tools and a few of each group, within the budget. It has
// no version banner: the version is the ETag's, so two prompts differ only where the tools or
// the options do. Fences are longer than any backtick run inside them.
func PromptWith(s *Set, o PromptOptions) []byte {
	contract := promptContract(o)
	if o.Budget < 0 {
		var decls bytes.Buffer
		st := s.shared()
		st.writeDeclarations(&decls, nil, layoutInline)
		writeToolsDecl(&decls, s.entries(), layoutInline, false, st)
		return appendFenced(contract, decls.Bytes(), "ts")
	}
	budget := pick(o.Budget, DefaultPromptBudget)
	if whole, ok := wholeWithin(s, contract, budget); ok {
		return whole
	}
	return catalogPrompt(s, contract, budget, o.Pinned)
}

// IsCatalog reports whether a prompt PromptWith rendered is a catalog rather than the whole SDK.
func IsCatalog(prompt []byte) bool { return bytes.Contains(prompt, []byte(catalogMarker)) }

// catalogMarker is the text only a catalog prompt has.
const catalogMarker = " tools, too many to list here"

// promptContract is the part of the prompt before the tools.
func promptContract(o PromptOptions) []byte {
	platform := o.Platform
	if platform == "" {
		platform = DefaultPlatform
	}
	var b bytes.Buffer
	b.Grow(1500)
	b.WriteString("`run_code({code, description?})`: `code` is the body of an async function, JS or TS (types unchecked), " +
		"calling the tools below; top-level `await`/`return` work.\n" +
		"- `await tools.name(args)` returns the tool's value (data, not text); other names: `tools[\"a.b\"](args)`.\n" +
		"- Each call's promise settles when it ends: `Promise.all` runs calls in parallel, `Promise.race` works; " +
		"calls still running at return are cancelled and reported: await them.\n" +
		"- Values cross as `JSON.stringify` would (Date → ISO string, `undefined` dropped, NaN/Infinity → `null` " +
		"in results); BigInt, Map, Set, functions and cycles are refused.\n" +
		"- A failed call throws `ToolCallError` (`name`, `toolName`, `code`, `message`); uncaught, the run fails: " +
		"`CODE_RUN_FAILED`, kind runtime (or syntax, timeout, limit, cancelled).\n" +
		"- Only logs and the returned JSON come back: return just what answers the task.\n" +
		"- An interpreter, not V8: build long text with `parts.push(…)` then `parts.join('')`; `s +=` in a loop " +
		"copies the whole string every time.\n" +
		"- Limits: ")
	b.WriteString(formatDuration(pick(o.Timeout, sandbox.DefaultTimeout)))
	b.WriteString(", ")
	b.WriteString(strconv.Itoa(pick(o.MaxCalls, sandbox.DefaultMaxCalls)))
	b.WriteString(" calls, ")
	b.WriteString(strconv.Itoa(pick(o.MaxParallel, runtime.DefaultWindow)))
	b.WriteString(" at once, ")
	b.WriteString(bytesize.Format(pick(o.MaxLogBytes, sandbox.DefaultMaxLogBytes)))
	b.WriteString(" of logs, ")
	b.WriteString(bytesize.Format(pick(o.MaxResultBytes, sandbox.DefaultMaxResultBytes)))
	b.WriteString(" of result.\n- Runtime: ")
	b.WriteString(collapseSpace(platform))
	b.WriteString("\n\n```js\n" +
		"const [a, b] = await Promise.all([tools.x({ id: 1 }), tools.y({})])\n" +
		"try { await tools.z(a) } catch (e) { console.log(e.code, e.message) }\n" +
		"return { a, n: b.items.length }\n" +
		"```\n\n")
	return b.Bytes()
}

// pick returns v, or def when v is not positive.
func pick[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// formatDuration writes whole seconds as "30 s" and anything else as Go does ("1m30s" is
// "90 s"; "1.5s" stays "1.5s").
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + " s"
	}
	return d.String()
}

// longestBacktickRun returns the length of the longest run of consecutive backticks in text.
func longestBacktickRun(text []byte) int {
	longest, run := 0, 0
	for _, c := range text {
		if c != '`' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}
