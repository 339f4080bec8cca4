package schema

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCompileStandardKeepsTheInput(t *testing.T) {
	src := "{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n  \"type\": \"object\",\n" +
		"  \"properties\": {\"z\": {\"$ref\": \"#/$defs/pos\"}, \"a\": {\"type\": \"string\", \"format\": \"email\"}},\n" +
		"  \"required\": [\"z\"],\n  \"$defs\": {\"pos\": {\"type\": \"integer\", \"exclusiveMinimum\": 0}}\n}"
	s, err := CompileStandard([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"z":{"$ref":"#/$defs/pos"},"a":{"type":"string","format":"email"}},"required":["z"],"$defs":{"pos":{"type":"integer","exclusiveMinimum":0}}}`
	if got := string(s.JSON()); got != want {
		t.Errorf("JSON() = %s\nwant     %s", got, want)
	}
	tests := []struct {
		value string
		want  []string
	}{
		{`{"z":1,"a":"not an email is fine: formats are annotations in 2020-12"}`, nil},
		{`{"z":0}`, []string{"at /z: must be > 0, got 0"}},
		{`{"a":1}`, []string{`at root: missing required property "z"`, "at /a: expected string, got number 1"}},
	}
	for _, tt := range tests {
		if got := messages(s.Validate(decode(t, tt.value))); !slices.Equal(got, tt.want) {
			t.Errorf("Validate(%s) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

func TestCompileStandardMessages(t *testing.T) {
	s, err := CompileStandard([]byte(`{
		"type": "object",
		"properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer", "multipleOf": 3}]}, "n": {"not": {"type": "null"}}, "f": false},
		"patternProperties": {"^x-": {}},
		"additionalProperties": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	v := decode(t, `{"a":4,"n":null,"f":1,"x-ok":1,"bad":2}`)
	want := []string{
		`at /a: matches none of the 2 anyOf alternatives (0: expected string, got number 4; 1: 4 not multipleOf 3)`,
		`at /bad: unexpected property "bad"`,
		`at /f: no value is allowed here`,
		`at /n: must not match the schema under "not"`,
	}
	vs := s.Validate(v)
	if got := messages(vs); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	checkViolations(t, v, vs)
}

func TestCompileStandardPropertyNames(t *testing.T) {
	s, err := CompileStandard([]byte(`{"propertyNames":{"maxLength":3},"properties":{"propertyNames":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`at /propertyNames: expected string, got number 1`, `at /propertyNames: property name: length must be <= 3, but got 13`}
	if got := messages(s.Validate(decode(t, `{"propertyNames":1}`))); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestCompileStandardNeverFetches(t *testing.T) {
	// A readable local schema file: if the compiler loaded it, compiling
	// would succeed.
	dir := t.TempDir()
	local := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(local, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		`{"$ref":"file:///etc/passwd"}`,
		`{"$ref":"file://` + filepath.ToSlash(local) + `"}`,
		`{"properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
		`{"$schema":"https://example.com/meta.json"}`,
		`{"$ref":"other.json"}`,
	} {
		_, err := CompileStandard([]byte(src))
		if !errors.Is(err, ErrExternalRef) {
			t.Errorf("CompileStandard(%s) = %v, want ErrExternalRef", src, err)
		}
		if err != nil && strings.Contains(err.Error(), "codemode:///") {
			t.Errorf("error names the internal document URL: %v", err)
		}
	}
}

func TestCompileStandardRejects(t *testing.T) {
	deep := strings.Repeat(`{"items":`, maxStandardDepth) + `{}` + strings.Repeat(`}`, maxStandardDepth)
	tests := []struct{ name, src, want string }{
		{"not JSON", `{"type":`, "invalid JSON"},
		{"trailing data", `{} {}`, "unexpected data after the schema"},
		{"bad keyword value", `{"type":5}`, "invalid JSON Schema: '/type' does not validate with https://json-schema.org/draft/2020-12/schema#"},
		{"lookahead pattern", `{"pattern":"(?=a)"}`, "invalid JSON Schema"},
		{"self reference loop", `{"$ref":"#"}`, "invalid JSON Schema"},
		{"too deep", deep, "nested deeper than 128 levels"},
		{"huge number", `{"minimum":1e999999}`, "at /minimum: number exponent is beyond ±10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileStandard([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// Just inside the depth limit compiles.
	ok := strings.Repeat(`{"items":`, 40) + `{}` + strings.Repeat(`}`, 40)
	if _, err := CompileStandard([]byte(ok)); err != nil {
		t.Errorf("40 levels: %v", err)
	}
}

func TestCompileStandardBooleanAndDraft07(t *testing.T) {
	s, err := CompileStandard([]byte(`true`))
	if err != nil {
		t.Fatal(err)
	}
	if vs := s.Validate(decode(t, `{"a":[1]}`)); vs != nil {
		t.Errorf("true schema: %v", vs)
	}
	s, err = CompileStandard([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Format(s.Validate(decode(t, `["a",1]`))), "at root: only 1 items are allowed, but found 2 items"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzCompileStandard(f *testing.F) {
	for _, s := range []string{
		`true`, `{}`, `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`,
		`{"$ref":"#/definitions/a","definitions":{"a":{"$ref":"#/definitions/a"}}}`, `{"$dynamicRef":"#meta"}`,
		`{"pattern":"["}`, `{"patternProperties":{"(":{}}}`, `{"$id":"http://x/y","$ref":"z"}`, `{"enum":[]}`,
		`{"minLength":1.5}`, `{"$schema":"http://json-schema.org/draft-04/schema#","exclusiveMinimum":true}`,
		`{"$vocabulary":{"x":true}}`, `{"format":"date","type":"string"}`, `{"contentSchema":{},"contentMediaType":"application/json"}`,
	} {
		f.Add([]byte(s))
	}
	values := []any{nil, "s", mustDecode(`{"a":"x","b":[1,{}]}`), mustDecode(`[1,2,2]`)}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := CompileStandard(data)
		if err != nil {
			return
		}
		for _, v := range values {
			checkViolations(t, v, s.Validate(v))
		}
	})
}

// A document over eagerCompileBytes is checked at once for what compiling most often refuses
// (external refs, unknown drafts, bad patterns) and compiled on first use: a fault only
// compiling finds then fails every validation with the reason. Equal documents share one
// compilation.
func TestLargeStandardSchemasCompileOnFirstUse(t *testing.T) {
	pad := `"description":"` + strings.Repeat("x", eagerCompileBytes) + `"`
	big := func(rest string) []byte { return []byte(`{` + pad + `,` + rest + `}`) }

	for _, rest := range []string{
		`"properties":{"a":{"$ref":"https://example.com/s.json"}}`,
		`"$schema":"https://example.com/meta.json"`,
	} {
		if _, err := CompileStandard(big(rest)); !errors.Is(err, ErrExternalRef) {
			t.Errorf("%.60s: %v, want ErrExternalRef", rest, err)
		}
	}
	if _, err := CompileStandard(big(`"properties":{"a":{"pattern":"(?<"}}`)); err == nil || !strings.Contains(err.Error(), "invalid regex pattern") {
		t.Errorf("bad pattern: %v", err)
	}

	s, err := CompileStandard(big(`"type":5`)) // only the metaschema says no
	if err != nil {
		t.Fatalf("a large schema is compiled on first use: %v", err)
	}
	vs := s.Validate(map[string]any{})
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "the schema itself is invalid") {
		t.Fatalf("validation: %v", vs)
	}

	good := big(`"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]`)
	a, err := CompileStandard(good)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := CompileStandard(good)
	if a.lazy != b.lazy {
		t.Errorf("equal documents do not share their compilation")
	}
	if vs := a.Validate(map[string]any{"n": "x"}); len(vs) != 1 || vs[0].Path != "/n" {
		t.Errorf("validation: %v", vs)
	}
	if vs := b.Validate(map[string]any{"n": json.Number("1")}); len(vs) != 0 {
		t.Errorf("valid value: %v", vs)
	}
}
