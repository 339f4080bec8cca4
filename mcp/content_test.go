package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/runtime"
)

func TestInputSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"true root", `true`, `{"type":"object"}`},
		{"empty root", `{}`, `{"type":"object"}`},
		{"not JSON", `{"type":`, `{"type":"object"}`},
		{"scalar root is forced to object", `{"type":"string","minLength":2}`, `{"minLength":2,"type":"object"}`},
		{"type list", `{"type":["object","null"]}`, `{"type":"object"}`},
		{"bare property schemas", `{"type":"object","properties":{"a":true,"b":false,"c":{"type":"string"}}}`,
			`{"properties":{"a":{},"b":{"not":{}},"c":{"type":"string"}},"type":"object"}`},
		{"additionalProperties keeps its boolean", `{"type":"object","additionalProperties":true,"properties":{"x":{"additionalProperties":false,"type":"object"}}}`,
			`{"additionalProperties":true,"properties":{"x":{"additionalProperties":false,"type":"object"}},"type":"object"}`},
		{"additionalProperties object is normalized", `{"type":"object","additionalProperties":{"properties":{"y":true}}}`,
			`{"additionalProperties":{"properties":{"y":{}}},"type":"object"}`},
		{"items, tuples and combinators", `{"type":"object","properties":{"l":{"type":"array","items":true},"t":{"items":[true,false]},"p":{"prefixItems":[true]},"u":{"anyOf":[true,{"not":false}]}}}`,
			`{"properties":{"l":{"items":{},"type":"array"},"p":{"prefixItems":[{}]},"t":{"items":[{},{"not":{}}]},"u":{"anyOf":[{},{"not":{"not":{}}}]}},"type":"object"}`},
		{"$defs", `{"type":"object","$defs":{"any":true}}`, `{"$defs":{"any":{}},"type":"object"}`},
		{"data keywords are not schemas", `{"type":"object","properties":{"f":{"enum":[true,false],"const":true,"default":false,"examples":[true]}}}`,
			`{"properties":{"f":{"const":true,"default":false,"enum":[true,false],"examples":[true]}},"type":"object"}`},
		{"numbers keep their spelling", `{"type":"object","properties":{"n":{"maximum":12345678901234567890}}}`,
			`{"properties":{"n":{"maximum":12345678901234567890}},"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inputSchema(json.RawMessage(tt.in))
			if string(got) != tt.want {
				t.Errorf("inputSchema(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			checkStrictSchema(t, got)
		})
	}
}

func TestOutputSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
		wrapped        bool
	}{
		{"object root is kept", `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`,
			`{"properties":{"sum":{"type":"number"}},"required":["sum"],"type":"object"}`, false},
		{"json property becomes an object schema", `{"type":"object","properties":{"result":true}}`,
			`{"properties":{"result":{}},"type":"object"}`, false},
		{"true root is wrapped", `true`,
			`{"additionalProperties":false,"properties":{"value":{}},"required":["value"],"type":"object"}`, true},
		{"array root is wrapped", `{"type":"array","items":{"type":"string"}}`,
			`{"additionalProperties":false,"properties":{"value":{"items":{"type":"string"},"type":"array"}},"required":["value"],"type":"object"}`, true},
		{"untyped object root is wrapped", `{"properties":{"a":{}}}`,
			`{"additionalProperties":false,"properties":{"value":{"properties":{"a":{}}}},"required":["value"],"type":"object"}`, true},
		{"nullable object is wrapped", `{"type":["object","null"]}`,
			`{"additionalProperties":false,"properties":{"value":{"type":["object","null"]}},"required":["value"],"type":"object"}`, true},
		{"$schema and $defs move to the envelope", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"n":{"type":"number"}},"$defs":{"s":{"type":"string"}},"oneOf":[{"$ref":"#/definitions/n"},{"$ref":"#/$defs/s"}]}`,
			`{"$defs":{"s":{"type":"string"}},"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false,"definitions":{"n":{"type":"number"}},"properties":{"value":{"oneOf":[{"$ref":"#/definitions/n"},{"$ref":"#/$defs/s"}]}},"required":["value"],"type":"object"}`, true},
		{"not JSON is wrapped as anything", `nope`,
			`{"additionalProperties":false,"properties":{"value":{}},"required":["value"],"type":"object"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, wrapped := outputSchema(json.RawMessage(tt.in))
			if string(got) != tt.want || wrapped != tt.wrapped {
				t.Errorf("outputSchema(%s)\n got %s (wrapped %v)\nwant %s (wrapped %v)", tt.in, got, wrapped, tt.want, tt.wrapped)
			}
			checkStrictSchema(t, got)
		})
	}
}

// checkStrictSchema asserts what strict clients demand of a listed schema:
// an object with "type": "object" at the root and object schemas in every
// subschema position (additionalProperties and unevaluatedProperties may be
// booleans).
func checkStrictSchema(t *testing.T, raw json.RawMessage) {
	t.Helper()
	var root any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatalf("schema is not JSON: %v: %s", err, raw)
	}
	m, ok := root.(map[string]any)
	if !ok || m["type"] != "object" {
		t.Fatalf("schema root is not an object schema with type object: %s", raw)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		s, ok := v.(map[string]any)
		if !ok {
			t.Errorf("subschema at %s is %T, not an object: %s", path, v, raw)
			return
		}
		for k, sub := range s {
			switch {
			case subschemaMaps[k]:
				if mm, ok := sub.(map[string]any); ok {
					for name, x := range mm {
						walk(path+"/"+k+"/"+name, x)
					}
				}
			case subschemaLists[k], k == "items" && reflect.TypeOf(sub) == reflect.TypeOf([]any{}):
				for i, x := range sub.([]any) {
					walk(path+"/"+k+"/"+strconv.Itoa(i), x)
				}
			case subschemaSingles[k]:
				walk(path+"/"+k, sub)
			case booleanKeepers[k]:
				if _, isBool := sub.(bool); !isBool {
					walk(path+"/"+k, sub)
				}
			}
		}
	}
	walk("", root)
}

// resultOf runs a one-tool registry through the runtime and returns the
// frozen result, so mapping tests see results exactly as the pipeline makes
// them.
func resultOf(t *testing.T, b registry.Behavior, output string) *runtime.Result {
	t.Helper()
	reg := registry.New()
	tool, err := registry.Raw(registry.RawDefinition{Name: "probe", Output: json.RawMessage(output), Behavior: b})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(registry.Global, tool); err != nil {
		t.Fatal(err)
	}
	return runtime.New(reg, runtime.Options{}).Execute(context.Background(), runtime.Request{CallID: "c1", Name: "probe", Arguments: "{}"})
}

func TestCallResult(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	tests := []struct {
		name    string
		b       registry.Behavior
		output  string
		info    resultInfo
		want    string // the CallToolResult as JSON
		isError bool
	}{
		{
			name:   "object value is the structured content",
			b:      registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return map[string]int{"sum": 5}, nil }},
			output: `{"type":"object"}`,
			info:   resultInfo{sessionID: "s1", listed: true},
			want:   `{"_meta":{"codemode/callId":"c1","codemode/sessionId":"s1"},"content":[{"type":"text","text":"{\n  \"sum\": 5\n}"}],"structuredContent":{"sum":5}}`,
		},
		{
			name:   "wrapped value",
			b:      registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return []int{1, 2}, nil }},
			output: `{"type":"array"}`,
			info:   resultInfo{sessionID: "s1", listed: true, wrapped: true},
			want:   `{"_meta":{"codemode/callId":"c1","codemode/sessionId":"s1"},"content":[{"type":"text","text":"[\n  1,\n  2\n]"}],"structuredContent":{"value":[1,2]}}`,
		},
		{
			name:   "an unlisted tool has no structured content",
			b:      registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return "hi", nil }},
			output: `{"type":"string"}`,
			info:   resultInfo{sessionID: "s1"},
			want:   `{"_meta":{"codemode/callId":"c1","codemode/sessionId":"s1"},"content":[{"type":"text","text":"hi"}]}`,
		},
		{
			name: "image content, contexts and presentation meta",
			b: registry.Behavior{
				Execute: func(_ context.Context, exec registry.Exec, _ frozen.Value) (any, error) {
					exec.DeferContext("remember this")
					exec.ConcludeTurn()
					exec.Defer(registry.Context{Source: "util_swatch", Text: "image content from util_swatch", Content: []registry.ContentBlock{registry.Image("image/png", png)}})
					return map[string]any{}, nil
				},
				Render: func(_, _ frozen.Value) []registry.ContentBlock {
					return []registry.ContentBlock{registry.Text("swatch"), registry.Image("image/png", png), registry.Image("image/png", "%%%")}
				},
				PresentationMeta: func(_, _ frozen.Value) (any, error) { return map[string]string{"diff": "+x"}, nil },
			},
			output: `{"type":"object"}`,
			info:   resultInfo{sessionID: "s1", listed: true},
			want: `{"_meta":{"codemode/callId":"c1","codemode/concludesTurn":true,"codemode/meta":{"diff":"+x"},"codemode/sessionId":"s1"},"content":[` +
				`{"type":"text","text":"swatch"},{"type":"image","mimeType":"image/png","data":"` + png + `"},` +
				`{"type":"text","text":"[image/png image with invalid base64 data]"},` +
				`{"type":"text","text":"[context from probe] remember this"},` +
				`{"type":"text","text":"[context from util_swatch] image content from util_swatch"},{"type":"image","mimeType":"image/png","data":"` + png + `"}],` +
				`"structuredContent":{}}`,
		},
		{
			name: "failure",
			b: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
				return nil, registry.Errorf(registry.CodeToolFailed, "boom")
			}},
			output:  `{"type":"object"}`,
			info:    resultInfo{sessionID: "s1", listed: true},
			want:    `{"_meta":{"codemode/callId":"c1","codemode/error":{"code":"TOOL_FAILED","message":"boom"},"codemode/sessionId":"s1"},"content":[{"type":"text","text":"boom"}],"isError":true}`,
			isError: true,
		},
		{
			name: "failure with a kind",
			b: registry.Behavior{Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
				return nil, &registry.Error{Code: registry.CodeCodeRunFailed, Kind: "syntax", Message: "bad"}
			}},
			output:  `{"type":"object"}`,
			info:    resultInfo{sessionID: "s1", listed: true},
			want:    `{"_meta":{"codemode/callId":"c1","codemode/error":{"code":"CODE_RUN_FAILED","kind":"syntax","message":"bad"},"codemode/sessionId":"s1"},"content":[{"type":"text","text":"bad"}],"isError":true}`,
			isError: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resultOf(t, tt.b, tt.output)
			got := callResult(res, tt.info)
			if got.IsError != tt.isError {
				t.Fatalf("IsError = %v, want %v (%v)", got.IsError, tt.isError, res.Error())
			}
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if string(raw) != tt.want {
				t.Errorf("result\n got %s\nwant %s", raw, tt.want)
			}
		})
	}
}

func TestContentValueRoundTrip(t *testing.T) {
	blocks := []sdk.Content{
		&sdk.TextContent{Text: "hello", Annotations: &sdk.Annotations{Audience: []sdk.Role{"user"}, Priority: 0.5}, Meta: sdk.Meta{"k": "v"}},
		&sdk.TextContent{Text: ""},
		&sdk.ImageContent{Data: []byte("img"), MIMEType: "image/png"},
		&sdk.AudioContent{Data: []byte("wav!"), MIMEType: "audio/wav"},
		&sdk.ResourceLink{URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain"},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://t", Text: "inline text"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
		&sdk.ToolUseContent{ID: "u1", Name: "x"},
	}
	value, err := frozen.Snapshot(contentValue(blocks))
	if err != nil {
		t.Fatal(err)
	}
	out, err := registry.Raw(registry.RawDefinition{Name: "probe", Output: json.RawMessage(contentArraySchema), Behavior: registry.Behavior{
		Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) { return nil, nil },
	}})
	if err != nil {
		t.Fatalf("contentArraySchema does not compile: %v", err)
	}
	if err := out.ValidateOutput(value); err != nil {
		t.Fatalf("content value does not match contentArraySchema: %v\n%s", err, value)
	}
	wantValue := `[{"type":"text","text":"hello","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":"v"}},{"type":"text"},` +
		`{"type":"image","data":"aW1n","mimeType":"image/png"},{"type":"audio","data":"d2F2IQ==","mimeType":"audio/wav"},` +
		`{"type":"resource_link","mimeType":"text/plain","uri":"file:///a.txt","name":"a.txt"},` +
		`{"type":"resource","resource":{"uri":"mem://t","text":"inline text"}},` +
		`{"type":"resource","resource":{"uri":"mem://b","mimeType":"application/octet-stream","blob":"AQID"}},`
	if !strings.HasPrefix(value.String(), wantValue) {
		t.Errorf("value\n got %s\nwant %s…", value, wantValue)
	}
	got := renderContentValue(frozen.Value{}, value)
	if len(got) != len(blocks) {
		t.Fatalf("rendered %d blocks, want %d: %+v", len(got), len(blocks), got)
	}
	// The content reaches an MCP client as it came, every type and
	// annotation kept.
	for i, b := range blocks[:len(blocks)-1] {
		want, _ := b.MarshalJSON()
		back, err := mcpBlock(got[i]).MarshalJSON()
		if err != nil || !jsonEqual(t, back, want) {
			t.Errorf("block %d reaches a client as\n %s\nwant\n %s", i, back, want)
		}
	}
	if last := got[len(got)-1]; last.Type != "text" || !strings.Contains(last.Text, `"tool_use"`) {
		t.Errorf("a tool_use block should be kept as its JSON text, got %+v", last)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		blocks []sdk.Content
		want   string
	}{
		{[]sdk.Content{&sdk.TextContent{Text: "not found"}}, "not found"},
		{[]sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.ImageContent{}, &sdk.TextContent{Text: "b"}}, "a\nb"},
		{nil, "notes.get failed without a message"},
		{[]sdk.Content{&sdk.TextContent{Text: "  "}}, "notes.get failed without a message"},
	}
	for _, tt := range tests {
		if got := errorText(tt.blocks, "notes.get"); got != tt.want {
			t.Errorf("errorText = %q, want %q", got, tt.want)
		}
	}
}

func FuzzSchemas(f *testing.F) {
	for _, s := range []string{
		`true`, `false`, `null`, `{}`, `[]`, `"x"`, `{"type":"object","properties":{"a":true}}`,
		`{"type":"array","items":[true,{"items":false}]}`, `{"$defs":{"a":{"not":true}},"oneOf":[true]}`,
		`{"type":"object","additionalProperties":{"properties":{"x":false}}}`, `{"properties":[]}`, `{"items":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkStrictSchema(t, inputSchema(raw))
		out, _ := outputSchema(raw)
		checkStrictSchema(t, out)
	})
}

func FuzzRenderContentValue(f *testing.F) {
	for _, s := range []string{
		`[]`, `[{"type":"text","text":"x"}]`, `[{"type":"image"}]`, `[{"type":"resource"}]`, `{"a":1}`, `null`,
		`[{"type":"resource","resource":{"uri":"u","blob":"AAAA"}}]`, `[{"type":"weird"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := frozen.ParseString(s)
		if err != nil {
			return
		}
		for _, b := range renderContentValue(frozen.Value{}, v) {
			if !contentTypes[b.Type] {
				t.Fatalf("rendered a %q block", b.Type)
			}
			c := mcpBlock(b)
			if c == nil {
				t.Fatalf("block %+v maps to no MCP content", b)
			}
			if _, err := c.MarshalJSON(); err != nil {
				t.Fatalf("block %+v: %v", b, err)
			}
		}
	})
}

func BenchmarkCallResult(b *testing.B) {
	res := runtime.New(func() *registry.Registry {
		reg := registry.New()
		tool, _ := registry.Raw(registry.RawDefinition{Name: "probe", Output: json.RawMessage(`{"type":"object"}`), Behavior: registry.Behavior{
			Execute: func(context.Context, registry.Exec, frozen.Value) (any, error) {
				return map[string]any{"sum": 5, "items": []string{"a", "b", "c"}}, nil
			},
		}})
		_, _ = reg.Register(registry.Global, tool)
		return reg
	}(), runtime.Options{}).Execute(context.Background(), runtime.Request{CallID: "c1", Name: "probe", Arguments: "{}"})
	b.ReportAllocs()
	for b.Loop() {
		_ = callResult(res, resultInfo{sessionID: "s", listed: true})
	}
}

func BenchmarkInputSchema(b *testing.B) {
	raw := json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"array","items":true},"c":{"oneOf":[{"type":"string"},true]}},"required":["a"],"additionalProperties":false}`)
	b.ReportAllocs()
	for b.Loop() {
		_ = inputSchema(raw)
	}
}
