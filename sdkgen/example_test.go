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
	fmt.Print(ts[strings.Index(ts, "interface ToolArgsMap"):])
	// Output:
	// interface ToolArgsMap {
	//   math_add: {
	//     a: number;
	//     b: number;
	//   };
	//   "notes.search": unknown;
	// }
	//
	// /** The value each tool's call resolves to. */
	// interface ToolOutputMap {
	//   math_add: {
	//     sum: number;
	//   };
	//   "notes.search": unknown;
	// }
	//
	// /** The name of a tool. */
	// type ToolName = keyof ToolArgsMap;
	//
	// /** The tools: `await tools.name(args)`, or `await tools["other-name"](args)`. */
	// declare const tools: {
	//   /** Adds two numbers. */
	//   math_add(args: ToolArgsMap["math_add"]): Promise<ToolOutputMap["math_add"]>;
	//   /** Searches notes. */
	//   "notes.search"(args: ToolArgsMap["notes.search"]): Promise<ToolOutputMap["notes.search"]>;
	// };
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
