package sdkgen

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	demo "github.com/codemode/codemode/examples/tools"
	"github.com/codemode/codemode/internal/golden"
)

// demoTools is the demo tool pack (examples/tools, docs/contract.md) as a registry view presents
// it to the SDK generator.
func demoTools() []Tool {
	pack := demo.New().Tools()
	out := make([]Tool, len(pack))
	for i, t := range pack {
		out[i] = Tool{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters(), Output: t.OutputSchema()}
	}
	return out
}

func exoticNameTools() []Tool {
	args := raw(`{"type":"object","properties":{"x":{"type":"string"}}}`)
	names := []string{
		"my-mcp.tool", `say "hi"`, `back\slash`, "ünïcödé", "__proto__", "constructor",
		"1st", "123", "new", "delete", "", "line\nbreak", "para\u2028sep", "tab\tbed",
		"nul\x00byte", "bad\xffutf8", "$dollar", "_under", "plain", "emoji🙂", "</script>",
	}
	tools := make([]Tool, len(names))
	for i, n := range names {
		tools[i] = Tool{Name: n, Description: "Tool " + n + ".", Parameters: args}
	}
	tools = append(tools, Tool{
		Name:        "odd_properties",
		Description: "Has property names that need quoting.",
		Parameters: raw(`{"type":"object","properties":{"a-b":{"type":"string"},"with space":{},
			"__proto__":{"type":"number"},"constructor":{"type":"boolean"},"0":{"type":"null"},
			"quote\"d":{"type":"string"},"ok_name":{"type":"string"},"":{"type":"string"}},
			"required":["a-b"],"additionalProperties":false}`),
	})
	return tools
}

func hostileDescriptionTools() []Tool {
	long := strings.Repeat("A very long description that goes on and on ", 40)
	return []Tool{
		{Name: "closes_comment", Description: "Ends here */ alert(1); /* and continues"},
		{Name: "slash_star_star", Description: "Stars: **/ and ***/ and */*/"},
		{Name: "trailing_star", Description: "ends with a star*"},
		{Name: "newlines", Description: "First line\ncontinues here.\nSecond sentence.\n\nSecond paragraph."},
		{Name: "backticks", Description: "Uses ``` fences ```` and `code`; see ````` here"},
		{Name: "very_long", Description: long},
		{Name: "long_word", Description: strings.Repeat("x", 500)},
		{Name: "controls", Description: "bell\a escape\x1b[31m nul\x00 line\u2028sep para\u2029sep"},
		{Name: "blank", Description: " \n\t "},
		{Name: "html", Description: "<script>alert('x')</script> & friends"},
		{Name: "bad_utf8", Description: "bad \xff\xfe bytes."},
		{Name: "jsdoc_tags", Description: "@deprecated @license MIT /*! keep */"},
		{
			Name:        "hostile_properties",
			Description: "Properties with hostile descriptions and annotations.",
			Parameters: raw(`{"type":"object","properties":{
				"p1":{"type":"string","description":"closes */ early","pattern":"^a*/b$"},
				"p2":{"type":"string","format":"line\nbreak */","default":"x*/y"},
				"p3":{"type":"integer","minimum":"zero","maximum":10,"default":{"deep":[1,2,3]}},
				"p4":{"type":"string","default":"` + strings.Repeat("d", 200) + `"},
				"p5":{"description":"` + long + `","deprecated":true}},
				"required":["p1"]}`),
		},
	}
}

func unsupportedSchemaTools() []Tool {
	deep := strings.Repeat(`{"type":"object","properties":{"n":`, 100) + `{"type":"string"}` +
		strings.Repeat(`}}`, 100)
	deepArray := strings.Repeat(`{"type":"array","items":`, 100) + `{"type":"number"}` +
		strings.Repeat(`}`, 100)
	tools := []Tool{
		{Name: "ref", Parameters: raw(`{"$ref":"#/$defs/x","$defs":{"x":{"type":"string"}}}`)},
		{Name: "not_object_string", Parameters: raw(`"object"`)},
		{Name: "not_object_number", Parameters: raw(`42`)},
		{Name: "not_object_array", Parameters: raw(`[{"type":"string"}]`)},
		{Name: "not_object_null", Parameters: raw(`null`)},
		{Name: "invalid_json", Parameters: raw(`{"type": "object",`)},
		{Name: "trailing_data", Parameters: raw(`{"type":"object"}}`)},
		{Name: "true_schema", Parameters: raw(`true`), Output: raw(`{}`)},
		{Name: "false_schema", Parameters: raw(`false`), Output: raw(`false`)},
		{Name: "wrong_keyword_types", Parameters: raw(`{"type":"object","properties":{
			"a":{"type":7},"b":{"type":"object","properties":[]},"c":{"type":"object","required":"x"},
			"d":{"enum":"x"},"e":{"anyOf":{}},"f":{"type":"array","items":"string"},
			"g":{"type":"object","additionalProperties":"no"},"h":{"type":[]},"i":{"type":["string",3]},
			"j":{"allOf":[]},"k":{"type":"object","required":[1]},"l":{"type":"object","patternProperties":1}}}`)},
		{Name: "unknown_types", Parameters: raw(`{"type":"object","properties":{
			"a":{"type":"json"},"b":{"type":["string","date"]},"c":{"type":"integer","nullable":true}}}`)},
		{Name: "combinators", Parameters: raw(`{"type":"object","properties":{
			"any":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"string"}]},
			"one":{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"}},"required":["kind"],
				"additionalProperties":false},{"type":"null"}]},
			"all":{"allOf":[{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]},
				{"type":"object","properties":{"y":{"type":"number"}}}]},
			"all_conflict":{"allOf":[{"type":"string"},{"type":"number"}]},
			"base_and_one":{"type":"object","properties":{"a":{"type":"string"}},
				"oneOf":[{"required":["a"]},{"properties":{"b":{"const":1}}}]},
			"any_with_unknown":{"anyOf":[{"type":"string"},{"$ref":"#/x"}]},
			"union_array":{"type":"array","items":{"type":["string","null"]}},
			"intersection_array":{"type":"array","items":{"allOf":[{"type":"object"},
				{"properties":{"z":{"type":"string"}}}]}},
			"not":{"not":{"type":"string"}},
			"if_then":{"if":{"type":"string"},"then":{"minLength":1}}}}`)},
		{Name: "literals", Parameters: raw(`{"type":"object","properties":{
			"e":{"enum":["a","b\"q",1,-2.5,true,null]},"e_obj":{"enum":["a",{"x":1}]},
			"e_empty":{"enum":[]},"c_str":{"const":"x"},"c_neg":{"type":"array","items":{"const":-1}},
			"c_obj":{"const":{"a":1}},"c_big":{"const":1e400},"type_list":{"type":["object","null","object"],
			"properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}}`)},
		{Name: "objects", Parameters: raw(`{"type":"object","properties":{
			"closed_empty":{"type":"object","additionalProperties":false},
			"open_empty":{"type":"object"},
			"map":{"type":"object","additionalProperties":{"type":"number"}},
			"map_props":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],
				"additionalProperties":{"type":"number"}},
			"map_optional":{"type":"object","properties":{"name":{"type":"string"}},
				"additionalProperties":{"type":"number"}},
			"never_extra":{"type":"object","properties":{"a":{"type":"string"}},
				"additionalProperties":{"not":{}, "type":"string", "enum":[]}},
			"pattern":{"type":"object","patternProperties":{"^x":{"type":"string"}},
				"additionalProperties":false},
			"implied":{"properties":{"a":{"type":"boolean"}}},
			"implied_array":{"items":{"type":"boolean"}},
			"tuple":{"type":"array","prefixItems":[{"type":"string"}]},
			"old_tuple":{"type":"array","items":[{"type":"string"}]},
			"no_items":{"type":"array"},
			"items_false":{"type":"array","items":false},
			"nested":{"type":"object","properties":{"inner":{"type":"object","properties":{
				"leaf":{"type":"string","description":"A leaf."}},"additionalProperties":false}},
				"additionalProperties":false}},
			"required":["closed_empty","ghost"]}`)},
		{Name: "deep_object", Parameters: raw(deep)},
		{Name: "deep_array", Parameters: raw(deepArray)},
		{Name: "no_required_combinator", Parameters: raw(`{"anyOf":[{"type":"object"}]}`)},
	}
	return tools
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// goldenCases are the tool sets whose rendered texts are pinned under testdata/.
var goldenCases = []struct {
	name  string
	tools func() []Tool
}{
	{"demo", demoTools},
	{"empty", func() []Tool { return nil }},
	{"exotic_names", exoticNameTools},
	{"hostile_descriptions", hostileDescriptionTools},
	{"unsupported_schemas", unsupportedSchemaTools},
	{"refs", refTools},
	{"shared_types", sharedTypeTools},
}

// refTools have schemas with $ref and $defs, as MCP servers generated from
// zod or pydantic models list them.
func refTools() []Tool {
	return []Tool{
		{Name: "contacts.add", Description: "Adds a contact.", Parameters: raw(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string","description":"The city."}},"required":["city"],"additionalProperties":false},` +
			`"phone":{"type":"string","pattern":"^\\+[0-9]+$"}},` +
			`"properties":{"name":{"type":"string"},"home":{"$ref":"#/$defs/address","description":"Where they live."},"work":{"$ref":"#/$defs/address"},` +
			`"phones":{"type":"array","items":{"$ref":"#/$defs/phone"}},"backup":{"anyOf":[{"$ref":"#/$defs/address"},{"type":"null"}]}},` +
			`"required":["name","home"],"additionalProperties":false}`),
			Output: raw(`{"type":"object","definitions":{"id":{"type":"integer","description":"Contact id."}},"properties":{"id":{"$ref":"#/definitions/id"}},"required":["id"],"additionalProperties":false}`)},
		{Name: "tree.walk", Description: "A recursive schema: the recursion renders as unknown.", Parameters: raw(`{"type":"object",` +
			`"$defs":{"node":{"type":"object","properties":{"label":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["label"],"additionalProperties":false}},` +
			`"properties":{"root":{"$ref":"#/$defs/node"}},"required":["root"],"additionalProperties":false}`)},
		{Name: "refs.unresolved", Description: "Remote, anchor and dangling references stay unknown.", Parameters: raw(`{"type":"object","properties":{` +
			`"remote":{"$ref":"https://example.com/schema.json"},"anchor":{"$ref":"#item"},"dangling":{"$ref":"#/$defs/missing"}},"additionalProperties":false}`)},
	}
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			set := NewSet(tc.tools())
			ts := TypeScript(set)
			assertDeclarations(t, ts)
			golden.Check(t, "testdata/"+tc.name+".ts.golden", ts)

			js := JavaScript(set)
			assertJSReference(t, js)
			golden.Check(t, "testdata/"+tc.name+".js.golden", js)

			prompt := Prompt(set)
			assertPromptDeclarations(t, prompt)
			golden.Check(t, "testdata/"+tc.name+".prompt.golden", prompt)
		})
	}
}

// transform returns what esbuild compiles src, what (the declarations, the JavaScript), to
// with loader, its comments dropped, failing the test when esbuild rejects it.
func transform(t testing.TB, src []byte, loader api.Loader, what string) string {
	t.Helper()
	res := api.Transform(string(src), api.TransformOptions{
		Loader:        loader,
		LegalComments: api.LegalCommentsNone,
		LogLevel:      api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		t.Fatalf("esbuild rejects %s: %s\n%s", what, formatMessages(res.Errors), src)
	}
	return string(res.Code)
}

// assertDeclarations checks that src parses as TypeScript and consists of declarations only:
// esbuild reports no error and strips everything.
func assertDeclarations(t testing.TB, src []byte) {
	t.Helper()
	if code := strings.TrimSpace(transform(t, src, api.LoaderTS, "the declarations")); code != "" {
		t.Fatalf("declarations compile to code %q\n%s", code, src)
	}
}

// assertJSReference checks that src parses as JavaScript and that, its comments aside, it is
// exactly the two declarations of an unassigned ToolCallError and tools: nothing in it can run.
func assertJSReference(t testing.TB, src []byte) {
	t.Helper()
	if got, want := transform(t, src, api.LoaderJS, "the JavaScript"), "var ToolCallError;\nvar tools;\n"; got != want {
		t.Fatalf("the JavaScript compiles to %q, want %q\n%s", got, want, src)
	}
}

// assertPromptDeclarations checks that the last fenced block of a prompt parses as TypeScript
// declarations and puts every shared type and every tool on one line.
func assertPromptDeclarations(t testing.TB, prompt []byte) {
	t.Helper()
	decls := promptDeclarations(t, prompt)
	assertDeclarations(t, decls)
	lines := strings.Split(strings.TrimSuffix(string(decls), "\n"), "\n")
	for len(lines) > 0 && !strings.HasPrefix(lines[0], "declare const tools: {") {
		if !sharedTypeLine.MatchString(lines[0]) {
			t.Fatalf("line %q before the tools is not a shared type's declaration\n%s", lines[0], decls)
		}
		lines = lines[1:]
	}
	if len(lines) == 1 {
		return // declare const tools: {};
	}
	for _, line := range lines[1 : len(lines)-1] {
		if !strings.HasSuffix(line, ">;") {
			t.Fatalf("declaration line %q is not a whole tool signature\n%s", line, decls)
		}
	}
}

// sharedTypeLine is a shared type's declaration on one line.
var sharedTypeLine = regexp.MustCompile(`^(/\*\* .* \*/ )?type [A-Z][A-Za-z0-9]* = .*;$`)

// promptDeclarations returns the text of a prompt's last fenced block (the declarations).
func promptDeclarations(t testing.TB, prompt []byte) []byte {
	t.Helper()
	text := strings.TrimSuffix(string(prompt), "\n")
	fenceStart := strings.LastIndex(text, "\n") + 1
	fence := text[fenceStart:]
	if fence == "" || strings.Trim(fence, "`") != "" {
		t.Fatalf("prompt does not end with a fence:\n%s", prompt)
	}
	open := strings.LastIndex(text[:fenceStart], "\n"+fence+"ts\n")
	if open < 0 {
		t.Fatalf("prompt has no opening %sts fence:\n%s", fence, prompt)
	}
	return []byte(text[open+len(fence)+4 : fenceStart])
}

func formatMessages(msgs []api.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text)
		if m.Location != nil {
			b.WriteString(" at line ")
			b.WriteString(m.Location.LineText)
		}
		b.WriteString("; ")
	}
	return b.String()
}
