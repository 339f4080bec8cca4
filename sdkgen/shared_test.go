package sdkgen

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// mcpContentSchema is mcp's contentArraySchema: the output codemode gives an MCP tool without
// an output schema.
const mcpContentSchema = `{"type":"array","title":"McpContent","description":"The tool's MCP content blocks.","items":{"oneOf":[` +
	`{"type":"object","properties":{"type":{"const":"text"},"text":{"type":"string"},` + mcpBlockExtras + `},"required":["type"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"const":"image"},"data":{"type":"string","description":"base64"},"mimeType":{"type":"string"},` + mcpBlockExtras + `},"required":["type","data","mimeType"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"const":"audio"},"data":{"type":"string","description":"base64"},"mimeType":{"type":"string"},` + mcpBlockExtras + `},"required":["type","data","mimeType"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"const":"resource_link"},"uri":{"type":"string"},"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"mimeType":{"type":"string"},"size":{"type":"integer"},` + mcpBlockExtras + `},"required":["type","uri","name"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"const":"resource"},"resource":` + mcpResourceSchema + `,` + mcpBlockExtras + `},"required":["type","resource"],"additionalProperties":false}` +
	`]}}`

const mcpBlockExtras = `"annotations":{"type":"object","properties":{"audience":{"type":"array","items":{"enum":["user","assistant"]}},"priority":{"type":"number"},"lastModified":{"type":"string"}}},` +
	`"_meta":{"type":"object"}`

const mcpResourceSchema = `{"type":"object","properties":{"uri":{"type":"string"},"mimeType":{"type":"string"},"text":{"type":"string"},"blob":{"type":"string","description":"base64"},"_meta":{"type":"object"}},"required":["uri"],"additionalProperties":false}`

// mcpTools returns n tools shaped like an MCP server's tools without output schemas.
func mcpTools(n int) []Tool {
	tools := make([]Tool, n)
	for i := range tools {
		tools[i] = Tool{
			Name:        fmt.Sprintf("server.tool_%03d", i),
			Description: fmt.Sprintf("Does thing %d to an item.", i),
			Parameters:  raw(fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"The item's id."},"count_%d":{"type":"integer"}},"required":["id"]}`, i)),
			Output:      raw(mcpContentSchema),
		}
	}
	return tools
}

// The content-block union of 100 MCP tools is declared once: the SDK is about an eighth of
// what it was with the union repeated (177,269 bytes).
func TestSharedMCPContent(t *testing.T) {
	set := NewSet(mcpTools(100))
	ts := TypeScript(set)
	assertDeclarations(t, ts)
	if n := strings.Count(string(ts), "type McpContent = "); n != 1 {
		t.Fatalf("McpContent declared %d times\n%s", n, ts)
	}
	if n := strings.Count(string(ts), "Promise<McpContent>"); n != 100 {
		t.Errorf("%d members resolve to McpContent, want 100", n)
	}
	if len(ts) > 30000 {
		t.Errorf("TypeScript is %d bytes", len(ts))
	}
	sig, ok := set.Signature("server.tool_007")
	if want := "\"server.tool_007\"(args: { count_7?: number; id: string; [key: string]: unknown }): Promise<McpContent>"; !ok || sig != want {
		t.Errorf("Set.Signature = %q, %v; want %q", sig, ok, want)
	}
	if _, ok := set.Signature("nope"); ok {
		t.Errorf("Set.Signature of an unknown tool is ok")
	}
	tool, _ := set.Tool("server.tool_007")
	if self := Signature(tool); !strings.Contains(self, "_meta") || strings.Contains(self, "McpContent") {
		t.Errorf("Signature is not self-contained: %s", self)
	}
}

// bigObject is an object schema that renders to well over minSharedTypeBytes, its properties
// prefixed with p so that two calls with different p differ.
func bigObject(title, p string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object",`)
	if title != "" {
		b.WriteString(`"title":` + strconv.Quote(title) + `,`)
	}
	b.WriteString(`"properties":{`)
	for i, f := range []string{"login", "id", "node_id", "avatar_url", "html_url", "type", "site_admin", "gravatar_id", "url"} {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + p + f + `":{"type":"string"}`)
	}
	b.WriteString(`},"required":["` + p + `login"]}`)
	return b.String()
}

func objectWith(props map[string]string) string {
	keys := slices.Sorted(maps.Keys(props))
	var parts []string
	for _, k := range keys {
		parts = append(parts, strconv.Quote(k)+":"+props[k])
	}
	return `{"type":"object","properties":{` + strings.Join(parts, ",") + `}}`
}

func declaredTypes(ts string) []string {
	var out []string
	for _, line := range strings.Split(ts, "\n") {
		if rest, ok := strings.CutPrefix(line, "type "); ok {
			name, _, _ := strings.Cut(rest, " ")
			if !strings.HasPrefix(name, "Tool") {
				out = append(out, name)
			}
		}
	}
	return out
}

func TestSharedTypeNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools []Tool
		want  []string
	}{
		{"key", []Tool{
			{Name: "a", Output: raw(objectWith(map[string]string{"owner": bigObject("", "")}))},
			{Name: "b", Parameters: raw(objectWith(map[string]string{"owner": bigObject("", "")}))},
		}, []string{"Owner"}},
		{"title over key", []Tool{
			{Name: "a", Output: raw(objectWith(map[string]string{"owner": bigObject("simple-user", "")}))},
			{Name: "b", Output: raw(objectWith(map[string]string{"author": bigObject("", "")}))},
		}, []string{"SimpleUser"}},
		{"defs key", []Tool{
			{Name: "a", Parameters: raw(`{"type":"object","$defs":{"user_account":` + bigObject("", "") + `},"properties":{"who":{"$ref":"#/$defs/user_account"}}}`)},
			{Name: "b", Output: raw(objectWith(map[string]string{"who": bigObject("", "")}))},
		}, []string{"UserAccount"}},
		{"collisions and reserved names", []Tool{
			{Name: "a", Output: raw(objectWith(map[string]string{"owner": bigObject("", "x_"), "other": bigObject("Owner", "y_"), "p": bigObject("Promise", "z_")}))},
			{Name: "b", Output: raw(objectWith(map[string]string{"owner": bigObject("", "x_"), "other": bigObject("", "y_"), "p": bigObject("", "z_")}))},
		}, []string{"Owner", "Owner2", "Promise2"}},
		{"one tool only", []Tool{
			{Name: "a", Output: raw(objectWith(map[string]string{"owner": bigObject("", ""), "author": bigObject("", "")}))},
			{Name: "b", Output: raw(`{"type":"string"}`)},
		}, nil},
		{"too small", []Tool{
			{Name: "a", Output: raw(objectWith(map[string]string{"x": `{"type":"object","properties":{"n":{"type":"number"}}}`}))},
			{Name: "b", Output: raw(objectWith(map[string]string{"x": `{"type":"object","properties":{"n":{"type":"number"}}}`}))},
		}, nil},
		{"parameters whole stay inline", []Tool{
			{Name: "a", Parameters: raw(bigObject("", ""))},
			{Name: "b", Parameters: raw(bigObject("", ""))},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := string(TypeScript(NewSet(tc.tools)))
			assertDeclarations(t, []byte(ts))
			if got := declaredTypes(ts); !slices.Equal(got, tc.want) {
				t.Errorf("declared %v, want %v\n%s", got, tc.want, ts)
			}
			for _, name := range tc.want {
				if strings.Count(ts, name+";") < 2 {
					t.Errorf("%s is referred to fewer than twice\n%s", name, ts)
				}
			}
		})
	}
}

// Names depend on the set's content only: the same text whatever order the tools come in.
func TestSharedTypesDeterministic(t *testing.T) {
	tools := sharedTypeTools()
	want := TypeScript(NewSet(tools))
	for i := range 20 {
		shuffled := slices.Clone(tools)
		rand.New(rand.NewPCG(uint64(i), 7)).Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if got := TypeScript(NewSet(shuffled)); !bytes.Equal(got, want) {
			t.Fatalf("order %d renders differently:\n%s\nwant\n%s", i, got, want)
		}
	}
}

// A declared type refers to another by name, and Describe declares exactly the types its tools
// need, directly or through one another.
func TestSharedTypeReferences(t *testing.T) {
	set := NewSet(sharedTypeTools())
	ts := string(TypeScript(set))
	if !regexp.MustCompile(`(?s)type Repository = \{.*\n  owner: SimpleUser;\n`).MatchString(ts) {
		t.Errorf("Repository does not refer to SimpleUser:\n%s", ts)
	}
	for _, tc := range []struct {
		tools []string
		want  []string
	}{
		{[]string{"repos.get"}, []string{"Repository", "SimpleUser"}},
		{[]string{"users.get"}, []string{"SimpleUser"}},
		{[]string{"files.read"}, []string{"McpContent"}},
		{[]string{"math.add"}, nil},
		{[]string{"math.add", "files.read", "repos.list"}, []string{"McpContent", "Repository", "SimpleUser"}},
	} {
		text, missing := Describe(set, tc.tools)
		if len(missing) > 0 {
			t.Fatalf("missing %v", missing)
		}
		assertDeclarations(t, []byte(text))
		if got := declaredTypes(text); !slices.Equal(got, tc.want) {
			t.Errorf("Describe(%v) declares %v, want %v\n%s", tc.tools, got, tc.want, text)
		}
	}
}

// sharedTypeTools share MCP's content blocks, a user object and a repository object that holds
// a user.
func sharedTypeTools() []Tool {
	user := bigObject("Simple User", "")
	repo := `{"type":"object","title":"Repository","description":"A git repository.","properties":{"full_name":{"type":"string"},"private":{"type":"boolean"},"owner":` + user + `,"default_branch":{"type":"string"}},"required":["full_name","owner"]}`
	return []Tool{
		{Name: "files.read", Description: "Reads a file.", Parameters: raw(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`), Output: raw(mcpContentSchema)},
		{Name: "files.list", Description: "Lists files.", Parameters: raw(`{"type":"object","properties":{"dir":{"type":"string"}}}`), Output: raw(mcpContentSchema)},
		{Name: "search.web", Description: "Searches the web.", Parameters: raw(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`), Output: raw(mcpContentSchema)},
		{Name: "repos.get", Description: "Gets a repository.", Parameters: raw(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"}},"required":["owner","repo"]}`), Output: raw(repo)},
		{Name: "repos.list", Description: "Lists repositories.", Output: raw(`{"type":"array","items":` + repo + `}`)},
		{Name: "users.get", Description: "Gets a user.", Parameters: raw(`{"type":"object","properties":{"login":{"type":"string"}},"required":["login"]}`), Output: raw(user)},
		{Name: "issues.get", Description: "Gets an issue.", Parameters: raw(`{"type":"object","properties":{"number":{"type":"integer"}},"required":["number"]}`),
			Output: raw(`{"type":"object","properties":{"title":{"type":"string"},"user":` + user + `,"assignees":{"type":"array","items":` + user + `}},"required":["title"]}`)},
		{Name: "math.add", Description: "Adds.", Parameters: raw(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`), Output: raw(`{"type":"number"}`)},
	}
}
