package sdkgen

import (
	"bytes"
	"fmt"
	"testing"
)

// FuzzTypeScript feeds arbitrary bytes as a schema and arbitrary names and descriptions: nothing
// panics, the declarations always parse as TypeScript and strip to nothing, the JavaScript
// reference always parses and declares nothing but its two variables, the prompt's declarations
// parse with one line per tool, the signature is one bounded line, names quote losslessly, and
// the output is the same for a second set built from the same input.
func FuzzTypeScript(f *testing.F) {
	for _, tool := range append(append(demoTools(), unsupportedSchemaTools()...), hostileDescriptionTools()...) {
		f.Add([]byte(tool.Parameters), tool.Name, tool.Description)
	}
	for _, tool := range exoticNameTools() {
		f.Add([]byte(`{"type":"object","properties":{"`+tool.Name+`":{"description":"*/"}}}`), tool.Name, tool.Description)
	}
	f.Add([]byte(`{"enum":["*/","\u2028",1e999999,-0]}`), "x", "")
	f.Add([]byte(`{"type":"object","properties":{"a":{"default":"*/","pattern":"*/","format":"\n"}}}`), "y", "*/")
	f.Add([]byte(`{"anyOf":[{"type":"array","items":{"const":-1}},{"allOf":[{"type":["string","null"]}]}]}`), "z", "```")
	f.Add([]byte("\xff\xfe"), "\xff", "\xff")
	f.Add([]byte(objectWith(map[string]string{"owner": bigObject("*/ x", ""), "c": mcpContentSchema})), "shared", "")

	f.Fuzz(func(t *testing.T, schemaBytes []byte, name, description string) {
		tools := []Tool{
			{Name: name, Description: description, Parameters: schemaBytes, Output: schemaBytes},
			{Name: name + "_2", Description: description, Parameters: schemaBytes},
		}
		set := NewSet(tools)
		ts := TypeScript(set)
		assertDeclarations(t, ts)
		assertJSReference(t, JavaScript(set))
		assertPromptDeclarations(t, Prompt(set))
		assertSignature(t, tools[0])
		assertQuoteRoundTrips(t, name)

		again := NewSet([]Tool{tools[1], tools[0]})
		if again.Version() != set.Version() || !bytes.Equal(TypeScript(again), ts) {
			t.Fatalf("output depends on input order")
		}
	})
}

// benchmarkTools returns n tools shaped like the demo pack, with distinct names.
func benchmarkTools(n int) []Tool {
	demo := demoTools()
	tools := make([]Tool, n)
	for i := range tools {
		tool := demo[i%len(demo)]
		tool.Name = fmt.Sprintf("%s_%03d", tool.Name, i)
		tools[i] = tool
	}
	return tools
}

func BenchmarkTypeScript(b *testing.B) {
	set := NewSet(benchmarkTools(100))
	b.ReportAllocs()
	for b.Loop() {
		TypeScript(set)
	}
}

func BenchmarkNewSet(b *testing.B) {
	tools := benchmarkTools(100)
	b.ReportAllocs()
	for b.Loop() {
		NewSet(tools)
	}
}
