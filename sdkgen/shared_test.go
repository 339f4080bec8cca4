package sdkgen

import (
	"fmt"
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

func TestMCPSize(t *testing.T) {
	set := NewSet(mcpTools(100))
	t.Logf("TypeScript: %d bytes; prompt (no budget): %d bytes", len(TypeScript(set)), len(PromptWith(set, PromptOptions{Budget: -1})))
}

func TestMCPShow(t *testing.T) {
	set := NewSet(mcpTools(3))
	t.Logf("%s", TypeScript(set))
	t.Logf("%s", PromptWith(set, PromptOptions{Budget: -1}))
	sig, _ := set.Signature("server.tool_001")
	t.Logf("%s", sig)
}
