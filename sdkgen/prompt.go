package sdkgen

import "bytes"

// promptIntro is the tool-set-independent part of the instructions. It describes the program
// contract (DESIGN.md §6, CONTRACT.md "Program") in the model's terms.
const promptIntro = "# Code Mode: run_code\n" +
	"\n" +
	"Call the tool `run_code` with `{\"code\": \"...\", \"description\": \"...\"}` to run a short program\n" +
	"against the tools declared at the end. `description` says in a few words what the program does;\n" +
	"it must not be blank.\n" +
	"\n" +
	"## Writing the program\n" +
	"\n" +
	"- `code` is the body of an async function, in JavaScript or TypeScript (types are removed before\n" +
	"  it runs and are not checked). Top-level `await` and `return` work; do not wrap the code in a\n" +
	"  function, and do not use `import`, `require` or `export`.\n" +
	"- Call a tool with `await tools.name(args)`, where `args` is one JSON object. A name that is not\n" +
	"  an identifier is called with brackets: `await tools[\"my-server.tool\"](args)`.\n" +
	"- A call resolves to the tool's value: structured JSON data shaped as `ToolOutputMap` says, not\n" +
	"  text. Use its fields directly; there is nothing to parse.\n" +
	"- Start independent calls together and await them at once, so they can run concurrently:\n" +
	"  `const [a, b] = await Promise.all([tools.x(argsX), tools.y(argsY)])`. Await a call before one\n" +
	"  that needs its result.\n" +
	"- A failed call rejects with a `ToolCallError` (`e.name === \"ToolCallError\"`, `e.toolName`,\n" +
	"  `e.message`). Wrap it in `try { ... } catch (e) { ... }` when the program can carry on without\n" +
	"  that result; an error nobody catches fails the whole run.\n" +
	"- `console.log` (and `console.info`, `console.warn`, `console.error`) records intermediate output.\n" +
	"- `return` a JSON value (object, array, string, number, boolean or null) as the result.\n" +
	"- Only what the program prints or returns comes back to you: tool values it neither logs nor\n" +
	"  returns are not shown. Return what answers the task, curated, rather than whole large values.\n" +
	"- The tools are the only way to reach anything outside the program: there is no network and no\n" +
	"  file system. A run is limited in time, in the number of tool calls and in output size.\n" +
	"\n" +
	"Example (the tool names are illustrative; use those declared below):\n" +
	"\n" +
	"```ts\n" +
	"const user = await tools.users_get({ id: 42 })\n" +
	"const [orders, tickets] = await Promise.all([\n" +
	"  tools.orders_list({ userId: user.id }),\n" +
	"  tools.tickets_list({ userId: user.id }),\n" +
	"])\n" +
	"let refund = null\n" +
	"try {\n" +
	"  refund = await tools.refunds_get({ orderId: orders.items[0].id })\n" +
	"} catch (e) {\n" +
	"  console.log(e.name, e.toolName, e.message) // ToolCallError refunds_get <reason>\n" +
	"}\n" +
	"return { name: user.name, orders: orders.items.length, openTickets: tickets.open, refund }\n" +
	"```\n" +
	"\n" +
	"## What comes back\n" +
	"\n" +
	"- On success, the value `{\"logs\": [...], \"result\": ...}`: you see the logs, then the result (a\n" +
	"  string as is, any other JSON pretty-printed), or `(run_code completed with no output)` when\n" +
	"  there is neither.\n" +
	"- On failure, an error with code `CODE_RUN_FAILED`, a kind, a message and the logs captured\n" +
	"  before the failure. The kind is `syntax` (the code does not parse), `runtime` (an uncaught\n" +
	"  exception, including an uncaught ToolCallError), `timeout` (the run took too long), `limit`\n" +
	"  (a limit on tool calls, output size, memory or stack depth was exceeded) or `cancelled` (the\n" +
	"  run was stopped from outside).\n" +
	"\n" +
	"## Tools\n" +
	"\n"

// Prompt renders the model-facing instructions for run_code: how to write a program, what comes
// back and how failures look, then the set's TypeScript declarations in a fenced block. The
// fence is long enough that no backticks in the declarations can close it.
func Prompt(s *Set) []byte {
	decls := TypeScript(s)
	fence := bytes.Repeat([]byte("`"), max(3, longestBacktickRun(decls)+1))
	var b bytes.Buffer
	b.Grow(len(promptIntro) + len(decls) + 2*len(fence) + 4)
	b.WriteString(promptIntro)
	b.Write(fence)
	b.WriteString("ts\n")
	b.Write(decls)
	b.Write(fence)
	b.WriteByte('\n')
	return b.Bytes()
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
