package sdkgen

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// demoTools is the demo tool pack of CONTRACT.md as a registry view would present it: a
// parameter root is an open object (additionalProperties omitted); outputs are closed.
func demoTools() []Tool {
	return []Tool{
		{
			Name:        "math_add",
			Description: "Adds two numbers. Returns their sum.",
			Parameters: raw(`{"type":"object","properties":{
				"a":{"type":"number","description":"The first addend."},
				"b":{"type":"number","description":"The second addend."}},
				"required":["a","b"]}`),
			Output: raw(`{"type":"object","properties":{"sum":{"type":"number"}},
				"required":["sum"],"additionalProperties":false}`),
		},
		{
			Name:        "util_echo",
			Description: "Returns its argument unchanged.",
			Parameters: raw(`{"type":"object","properties":{"value":{"description":"Any JSON value."}},
				"required":["value"]}`),
			Output: raw(`{"type":"object","properties":{"value":{}},"required":["value"],
				"additionalProperties":false}`),
		},
		{
			Name:        "util_sleep",
			Description: "Waits for the given number of milliseconds; honours cancellation at once.",
			Parameters: raw(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0,
				"maximum":60000,"description":"How long to wait, in milliseconds."}},"required":["ms"]}`),
			Output: raw(`{"type":"object","properties":{"slept_ms":{"type":"integer"}},
				"required":["slept_ms"],"additionalProperties":false}`),
		},
		{
			Name:        "util_fail",
			Description: "Always fails with the given message.\n\nUseful to test error handling.",
			Parameters: raw(`{"type":"object","properties":{"message":{"type":"string",
				"description":"The error message."}},"required":["message"]}`),
		},
		{
			Name:        "util_swatch",
			Description: "Renders an 8x8 PNG swatch of a colour.",
			Parameters: raw(`{"type":"object","properties":{"color":{"type":"string",
				"pattern":"^#[0-9a-fA-F]{6}$","description":"The colour as #rrggbb."}},
				"required":["color"]}`),
			Output: raw(`{"type":"object","properties":{"mime":{"const":"image/png"},
				"width":{"type":"integer","const":8},"height":{"type":"integer","const":8}},
				"required":["mime","width","height"],"additionalProperties":false}`),
		},
		{
			Name:        "kv_set",
			Description: "Stores a value under a key in this session's key-value store.",
			Parameters: raw(`{"type":"object","properties":{"key":{"type":"string","minLength":1},
				"value":{"description":"Any JSON value."}},"required":["key","value"]}`),
			Output: raw(`{"type":"object","properties":{"ok":{"const":true}},"required":["ok"],
				"additionalProperties":false}`),
		},
		{
			Name:        "kv_get",
			Description: "Reads the value stored under a key in this session's key-value store.",
			Parameters: raw(`{"type":"object","properties":{"key":{"type":"string","minLength":1}},
				"required":["key"]}`),
			Output: raw(`{"type":"object","properties":{"found":{"type":"boolean"},"value":{}},
				"required":["found"],"additionalProperties":false}`),
		},
		{
			Name:        "files_write",
			Description: "Writes a file in the session's virtual workspace, replacing any content.",
			Parameters: raw(`{"type":"object","properties":{"path":{"type":"string"},
				"content":{"type":"string"}},"required":["path","content"]}`),
			Output: raw(`{"type":"object","properties":{"path":{"type":"string"},
				"bytes":{"type":"integer"}},"required":["path","bytes"],"additionalProperties":false}`),
		},
		{
			Name:        "files_read",
			Description: "Reads a file of the session's virtual workspace.",
			Parameters:  raw(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
			Output: raw(`{"type":"object","properties":{"path":{"type":"string"},
				"content":{"type":"string"},"lines":{"type":"integer"}},
				"required":["path","content","lines"],"additionalProperties":false}`),
		},
		{
			Name:        "files_edit",
			Description: "Replaces exact text in a file of the workspace. Fails when old does not occur.",
			Parameters: raw(`{"type":"object","properties":{"path":{"type":"string"},
				"old":{"type":"string","description":"The text to replace."},
				"new":{"type":"string","description":"The replacement."}},
				"required":["path","old","new"]}`),
			Output: raw(`{"type":"object","properties":{"path":{"type":"string"},
				"replaced":{"type":"integer"}},"required":["path","replaced"],
				"additionalProperties":false}`),
		},
		{
			Name:        "files_list",
			Description: "Lists the paths in the workspace, optionally under a prefix.",
			Parameters: raw(`{"type":"object","properties":{"prefix":{"type":"string",
				"description":"Only paths starting with this."}}}`),
			Output: raw(`{"type":"object","properties":{"paths":{"type":"array",
				"items":{"type":"string"}}},"required":["paths"],"additionalProperties":false}`),
		},
	}
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
	name   string
	tools  func() []Tool
	prompt bool // also pin the Prompt text
}{
	{"demo", demoTools, true},
	{"empty", func() []Tool { return nil }, true},
	{"exotic_names", exoticNameTools, false},
	{"hostile_descriptions", hostileDescriptionTools, true},
	{"unsupported_schemas", unsupportedSchemaTools, false},
	{"refs", refTools, false},
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
			checkGolden(t, tc.name+".ts.golden", ts)

			js := Bindings(set)
			assertScript(t, js)
			checkGolden(t, tc.name+".js.golden", js)

			if tc.prompt {
				checkGolden(t, tc.name+".prompt.golden", Prompt(set))
			}
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update if the change is intended)\n--- got ---\n%s", path, got)
	}
}

// assertDeclarations checks that src parses as TypeScript and consists of declarations only:
// esbuild reports no error and strips everything.
func assertDeclarations(t testing.TB, src []byte) {
	t.Helper()
	res := api.Transform(string(src), api.TransformOptions{
		Loader:        api.LoaderTS,
		LegalComments: api.LegalCommentsNone,
		LogLevel:      api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		t.Fatalf("esbuild rejects the declarations: %s\n%s", formatMessages(res.Errors), src)
	}
	if code := strings.TrimSpace(string(res.Code)); code != "" {
		t.Fatalf("declarations compile to code %q\n%s", code, src)
	}
}

// assertScript checks that src parses as JavaScript.
func assertScript(t testing.TB, src []byte) {
	t.Helper()
	res := api.Transform(string(src), api.TransformOptions{
		Loader:   api.LoaderJS,
		LogLevel: api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		t.Fatalf("esbuild rejects the script: %s\n%s", formatMessages(res.Errors), src)
	}
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
