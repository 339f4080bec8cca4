package sdkgen_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/codemode/codemode/sdkgen"
)

func ExampleTypeScript() {
	set := sdkgen.NewSet([]sdkgen.Tool{
		{
			Name:        "math_add",
			Description: "Adds two numbers. Returns their sum.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`),
			Output:      json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"],"additionalProperties":false}`),
		},
		{Name: "notes.search", Description: "Searches notes.", Parameters: json.RawMessage(`{"$ref":"#/defs/q"}`)},
		{Name: "run_code", Description: "Never part of the SDK."},
	})
	ts := string(sdkgen.TypeScript(set))
	fmt.Print(ts[strings.Index(ts, "declare const tools"):])
	// Output:
	// declare const tools: {
	//   /** Adds two numbers. */
	//   math_add(args: {
	//     a: number;
	//     b: number;
	//   }): Promise<{
	//     sum: number;
	//   }>;
	//   /** Searches notes. */
	//   "notes.search"(args: unknown): Promise<unknown>;
	//   /** Finds tools: ranked by how well name, description and parameters match the query (plain words); `total` counts the whole catalog; limit 1–50, default 10; `group` keeps a name prefix; `also` names the same operation under other prefixes. */
	//   $search(query: string, options?: { limit?: number; group?: string }): Promise<{ total: number; matched: number; tools: { name: string; summary: string; signature: string; also?: string[] }[] }>;
	//   /** The full TypeScript declarations, with descriptions, of the named tools. */
	//   $describe(names: string | string[]): Promise<string>;
	// };
	//
	// /** The name of a tool. */
	// type ToolName = Exclude<keyof typeof tools, "$search" | "$describe">;
	// /** The argument object of each tool. */
	// type ToolArgsMap = { [K in ToolName]: Exclude<Parameters<(typeof tools)[K]>[0], undefined> };
	// /** The value each tool's call resolves to. */
	// type ToolOutputMap = { [K in ToolName]: Awaited<ReturnType<(typeof tools)[K]>> };
}

func ExampleSignature() {
	fmt.Println(sdkgen.Signature(sdkgen.Tool{
		Name:        "math_add",
		Description: "Adds two numbers.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"The first addend."},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`),
		Output:      json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"],"additionalProperties":false}`),
	}))
	// Output: math_add(args: { a: number; b: number }): Promise<{ sum: number }>
}

func ExampleSet_Version() {
	a := sdkgen.NewSet([]sdkgen.Tool{
		{Name: "x", Parameters: json.RawMessage(`{"type":"object","required":["k"]}`)},
		{Name: "y"},
	})
	b := sdkgen.NewSet([]sdkgen.Tool{
		{Name: "y"},
		{Name: "x", Parameters: json.RawMessage(`{ "required": ["k"], "type": "object" }`)},
	})
	c := sdkgen.NewSet([]sdkgen.Tool{
		{Name: "x", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "y"},
	})
	fmt.Println(a.Version() == b.Version(), a.Version() == c.Version())
	// Output: true false
}
