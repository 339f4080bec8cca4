package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codemode/codemode/registry"
	"github.com/codemode/codemode/registry/frozen"
	"github.com/codemode/codemode/runtime"
)

// This file holds the mapping rules between codemode and MCP, both ways.
//
// Schemas (server side). Strict clients (the official TypeScript SDK among
// them) reject a tool list whose inputSchema or outputSchema is not an
// object schema with "type": "object" at its root, or whose properties are
// not objects. So every schema is normalized before it is listed:
//   - a boolean subschema (true, false) in a schema position becomes {} or
//     {"not": {}}; additionalProperties and unevaluatedProperties keep their
//     idiomatic booleans;
//   - inputSchema: the root's type is forced to "object" (arguments are a JSON
//     object in every call);
//   - outputSchema: a root whose type is exactly "object" is listed as is and
//     structuredContent is the canonical value. Any other root (a scalar, an
//     array, a union, true) is wrapped in the envelope
//     {"type":"object","properties":{"value": S},"required":["value"]} and
//     structuredContent is {"value": <canonical value>}. The root's $schema,
//     $defs and definitions move to the envelope so local $refs still resolve.
//
// Results (server side). Content blocks map one to one, every MCP type
// (text, image, audio, resource_link, resource) with its annotations and
// _meta; a result's additional contexts, which the agent loop would commit
// as user messages, follow its content as text and image blocks, since an MCP
// host has no other channel for them. Failed results set isError and carry
// no structuredContent. _meta carries codemode/sessionId, codemode/callId,
// codemode/error {code, kind?, message} on failure, codemode/meta (the
// tool's presentationMeta) when present, and codemode/concludesTurn when the
// result asks to end the turn.
//
// Upstream tools (client side). With an outputSchema, the binding's value is
// the upstream's structuredContent and its content renders for the model.
// Without one, the value is the upstream's content as an array of blocks
// (contentArraySchema), rendered back as the same blocks; such a tool is
// re-exported without an outputSchema and its results carry no
// structuredContent, as its server listed it.

// metaPrefix namespaces the _meta keys codemode writes.
const metaPrefix = "codemode/"

// subschemaMaps are keywords whose value maps names to subschemas.
var subschemaMaps = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true,
}

// subschemaLists are keywords whose value is a list of subschemas.
var subschemaLists = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true}

// subschemaSingles are keywords whose value is one subschema. "items" may
// also be a list (draft 2019-09 and earlier tuples).
var subschemaSingles = map[string]bool{
	"items": true, "additionalItems": true, "contains": true, "not": true, "if": true, "then": true,
	"else": true, "propertyNames": true, "unevaluatedItems": true,
}

// booleanKeepers are subschema keywords whose boolean form is idiomatic and
// accepted everywhere; objects under them are still normalized.
var booleanKeepers = map[string]bool{"additionalProperties": true, "unevaluatedProperties": true}

// decodeSchema parses a JSON Schema keeping number spellings. Text that is
// not JSON yields ok false.
func decodeSchema(raw []byte) (v any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if dec.More() {
		return nil, false
	}
	return v, true
}

// objectSchema turns a subschema into its object form: true → {}, false →
// {"not": {}}; objects are normalized in place. Anything else (a schema
// that is neither) becomes {}.
func objectSchema(v any) map[string]any {
	switch s := v.(type) {
	case bool:
		if s {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	case map[string]any:
		normalizeKeywords(s)
		return s
	default:
		return map[string]any{}
	}
}

// normalizeKeywords rewrites the subschemas of s so that none is a bare
// boolean (except the booleanKeepers). Values of keywords that are not
// subschemas (enum, const, default, examples, unknown keywords) are left
// alone.
func normalizeKeywords(s map[string]any) {
	for k, v := range s {
		switch {
		case subschemaMaps[k]:
			if m, ok := v.(map[string]any); ok {
				for name, sub := range m {
					m[name] = objectSchema(sub)
				}
			}
		case subschemaLists[k]:
			if list, ok := v.([]any); ok {
				for i, sub := range list {
					list[i] = objectSchema(sub)
				}
			}
		case subschemaSingles[k]:
			if list, ok := v.([]any); ok && k == "items" {
				for i, sub := range list {
					list[i] = objectSchema(sub)
				}
				continue
			}
			s[k] = objectSchema(v)
		case booleanKeepers[k]:
			if m, ok := v.(map[string]any); ok {
				normalizeKeywords(m)
			}
		}
	}
}

// marshalSchema encodes a normalized schema. It cannot fail for decoded
// JSON; the fallback keeps the contract (an object schema) regardless.
func marshalSchema(s map[string]any) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return b
}

// inputSchema is a tool's parameter schema as MCP lists it: an object schema
// with "type": "object" at its root and no bare boolean subschemas.
func inputSchema(raw json.RawMessage) json.RawMessage {
	v, ok := decodeSchema(raw)
	if !ok {
		v = map[string]any{}
	}
	s := objectSchema(v)
	s["type"] = "object"
	return marshalSchema(s)
}

// outputSchema is a tool's value schema as MCP lists it, and whether values
// are wrapped as {"value": v} (see the rules at the top of this file).
func outputSchema(raw json.RawMessage) (schema json.RawMessage, wrapped bool) {
	v, ok := decodeSchema(raw)
	if !ok {
		v = true
	}
	if m, isObj := v.(map[string]any); isObj && m["type"] == "object" {
		return marshalSchema(objectSchema(m)), false
	}
	inner := objectSchema(v)
	envelope := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"value": inner},
		"required":             []any{"value"},
		"additionalProperties": false,
	}
	for _, k := range [...]string{"$schema", "$defs", "definitions"} {
		if x, present := inner[k]; present {
			envelope[k] = x
			delete(inner, k)
		}
	}
	return marshalSchema(envelope), true
}

// listedTool is a registry tool as the MCP tool list shows it: its hints
// become MCP's annotations (and title). A tool whose value is its MCP
// content (an upstream tool without an output schema) is listed without
// one, as its server listed it, and its results carry no structuredContent
// (contentOnly).
func listedTool(t *registry.Tool, description string) (tool *sdk.Tool, wrapped, contentOnly bool) {
	tool = &sdk.Tool{
		Name:        t.Name(),
		Title:       t.Hints().Title,
		Description: description,
		InputSchema: inputSchema(t.Parameters()),
		Annotations: annotations(t.Hints()),
	}
	raw := t.OutputSchema()
	if bytes.Equal(raw, compactContentArraySchema) {
		return tool, false, true
	}
	tool.OutputSchema, wrapped = outputSchema(raw)
	return tool, wrapped, false
}

// compactContentArraySchema is contentArraySchema as a compiled tool
// returns it.
var compactContentArraySchema = func() []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(contentArraySchema)); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

// annotations are MCP's tool annotations for registry hints. Every hint is
// stated: readOnlyHint and idempotentHint always (their defaults are
// false), destructiveHint and openWorldHint when known.
func annotations(h registry.Hints) *sdk.ToolAnnotations {
	a := &sdk.ToolAnnotations{
		Title:           h.Title,
		ReadOnlyHint:    h.ReadOnly,
		DestructiveHint: h.Destructive,
		OpenWorldHint:   h.OpenWorld,
	}
	if h.Idempotent != nil {
		a.IdempotentHint = *h.Idempotent
	}
	return a
}

// mcpContent maps codemode content blocks to MCP content, whole: every
// type of MCP content block with its annotations and _meta. Data that is not
// valid base64, and a block of an unknown type, become text that says so
// rather than failing the call.
func mcpContent(blocks []registry.ContentBlock) []sdk.Content {
	out := make([]sdk.Content, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, mcpBlock(b))
	}
	return out
}

func mcpBlock(b registry.ContentBlock) sdk.Content {
	meta := decodeMeta(b.Meta)
	ann := decodeAnnotations(b.Annotations)
	switch b.Type {
	case "text":
		return &sdk.TextContent{Text: b.Text, Meta: meta, Annotations: ann}
	case "image", "audio":
		data, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			return &sdk.TextContent{Text: fmt.Sprintf("[%s %s with invalid base64 data]", orUnknown(b.MimeType), b.Type)}
		}
		if b.Type == "audio" {
			return &sdk.AudioContent{Data: data, MIMEType: b.MimeType, Meta: meta, Annotations: ann}
		}
		return &sdk.ImageContent{Data: data, MIMEType: b.MimeType, Meta: meta, Annotations: ann}
	case "resource_link":
		return &sdk.ResourceLink{URI: b.URI, Name: b.Name, Title: b.Title, Description: b.Description, MIMEType: b.MimeType, Size: b.Size, Meta: meta, Annotations: ann}
	case "resource":
		if b.Resource == nil {
			return &sdk.TextContent{Text: "[resource without contents]"}
		}
		rc := &sdk.ResourceContents{URI: b.Resource.URI, MIMEType: b.Resource.MimeType, Meta: decodeMeta(b.Resource.Meta)}
		switch {
		case b.Resource.Blob != nil:
			data, err := base64.StdEncoding.DecodeString(*b.Resource.Blob)
			if err != nil {
				return &sdk.TextContent{Text: fmt.Sprintf("[resource %s with invalid base64 data]", b.Resource.URI)}
			}
			rc.Blob = data
		case b.Resource.Text != nil:
			rc.Text = *b.Resource.Text
		}
		return &sdk.EmbeddedResource{Resource: rc, Meta: meta, Annotations: ann}
	default:
		if b.Text != "" {
			return &sdk.TextContent{Text: b.Text}
		}
		return &sdk.TextContent{Text: fmt.Sprintf("[%s content]", orUnknown(b.Type))}
	}
}

func decodeMeta(raw registry.RawJSON) sdk.Meta {
	if len(raw) == 0 {
		return nil
	}
	var m sdk.Meta
	if json.Unmarshal([]byte(raw), &m) != nil {
		return nil
	}
	return m
}

func decodeAnnotations(raw registry.RawJSON) *sdk.Annotations {
	if len(raw) == 0 {
		return nil
	}
	var a sdk.Annotations
	if json.Unmarshal([]byte(raw), &a) != nil {
		return nil
	}
	return &a
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// resultInfo is what callResult needs beside the result.
type resultInfo struct {
	sessionID string
	// listed reports whether the tool was in the list the client saw, and
	// wrapped whether its listed output schema is the {"value"} envelope.
	listed, wrapped bool
}

// callResult maps a codemode result to an MCP tool result.
func callResult(res *runtime.Result, info resultInfo) *sdk.CallToolResult {
	out := &sdk.CallToolResult{
		Content: mcpContent(res.Content()),
		IsError: res.IsError(),
		Meta:    sdk.Meta{metaPrefix + "sessionId": info.sessionID, metaPrefix + "callId": res.CallID()},
	}
	for _, c := range res.Contexts() {
		if c.Text != "" {
			text := c.Text
			if c.Source != "" {
				text = fmt.Sprintf("[context from %s] %s", c.Source, c.Text)
			}
			out.Content = append(out.Content, &sdk.TextContent{Text: text})
		}
		out.Content = append(out.Content, mcpContent(c.Content)...)
	}
	if e := res.Error(); e != nil {
		errMeta := map[string]any{"code": string(e.Code), "message": e.Message}
		if e.Kind != "" {
			errMeta["kind"] = e.Kind
		}
		out.Meta[metaPrefix+"error"] = errMeta
	}
	if m := res.Meta(); !m.IsZero() {
		out.Meta[metaPrefix+"meta"] = json.RawMessage(m.Bytes())
	}
	if res.ConcludesTurn() {
		out.Meta[metaPrefix+"concludesTurn"] = true
	}
	if !res.IsError() && info.listed {
		out.StructuredContent = structured(res.Value(), info.wrapped)
	}
	return out
}

// structured is the structuredContent for a value: the value itself when
// the listed schema is an object schema (and the value an object, which the
// registry's validation guarantees), {"value": v} when it is the envelope,
// nil when there is nothing to send.
func structured(v frozen.Value, wrapped bool) any {
	switch {
	case v.IsZero():
		return nil
	case wrapped:
		return map[string]json.RawMessage{"value": v.Bytes()}
	case v.Kind() == "object":
		return json.RawMessage(v.Bytes())
	default:
		return nil
	}
}

// contentArraySchema is the value schema of an upstream tool that declares
// no output schema: its MCP content as an array of blocks, one branch per
// block type so the SDK declarations show a discriminated union. Resource
// links and embedded resources are data a program can use (uri, name,
// text or base64 blob). (A text block's text is absent when it is empty.)
const contentArraySchema = `{"type":"array","title":"McpContent","description":"The tool's MCP content blocks.","items":{"oneOf":[` +
	`{"type":"object","properties":{"type":{"const":"text"},"text":{"type":"string"},` + blockExtras + `},"required":["type"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"const":"image"},"data":{"type":"string","description":"base64"},"mimeType":{"type":"string"},` + blockExtras + `},"required":["type","data","mimeType"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"const":"audio"},"data":{"type":"string","description":"base64"},"mimeType":{"type":"string"},` + blockExtras + `},"required":["type","data","mimeType"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"const":"resource_link"},"uri":{"type":"string"},"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},"mimeType":{"type":"string"},"size":{"type":"integer"},` + blockExtras + `},"required":["type","uri","name"],"additionalProperties":false},` +
	`{"type":"object","properties":{"type":{"const":"resource"},"resource":` + resourceContentsSchema + `,` + blockExtras + `},"required":["type","resource"],"additionalProperties":false}` +
	`]}}`

// blockExtras are the properties every content block may carry.
const blockExtras = `"annotations":{"type":"object","properties":{"audience":{"type":"array","items":{"enum":["user","assistant"]}},"priority":{"type":"number"},"lastModified":{"type":"string"}}},` +
	`"_meta":{"type":"object"}`

// resourceContentsSchema is one resource's contents: text, or a base64 blob.
const resourceContentsSchema = `{"type":"object","properties":{"uri":{"type":"string"},"mimeType":{"type":"string"},"text":{"type":"string"},"blob":{"type":"string","description":"base64"},"_meta":{"type":"object"}},"required":["uri"],"additionalProperties":false}`

// contentValue is the value of an upstream call without an output schema:
// its content blocks, whole, in the shape of contentArraySchema. A block
// that does not encode (which the go-sdk's own types cannot produce) becomes
// text saying so.
func contentValue(blocks []sdk.Content) []registry.ContentBlock {
	out := make([]registry.ContentBlock, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, blockOf(b))
	}
	return out
}

// contentTypes are the content block types of a tool result.
var contentTypes = map[string]bool{"text": true, "image": true, "audio": true, "resource_link": true, "resource": true}

// blockOf is one MCP content block as a codemode block: MCP's JSON read
// into registry.ContentBlock, whose JSON is the same shape.
func blockOf(b sdk.Content) registry.ContentBlock {
	if b == nil {
		return registry.Text("[empty content block]")
	}
	raw, err := b.MarshalJSON()
	if err != nil {
		return registry.Text("[content that does not encode: " + err.Error() + "]")
	}
	var blk registry.ContentBlock
	if err := json.Unmarshal(raw, &blk); err != nil || !contentTypes[blk.Type] {
		// Not a tool result's block (sampling's tool_use, say): its JSON.
		return registry.Text(string(raw))
	}
	return blk
}

// renderContentValue renders a content-array value for the model: the
// blocks as they came, every type kept. A value that is not such an array
// (which its schema prevents) renders as text.
func renderContentValue(_, value frozen.Value) []registry.ContentBlock {
	var blocks []registry.ContentBlock
	if err := value.Unmarshal(&blocks); err != nil {
		return registry.DefaultRender(value)
	}
	for _, b := range blocks {
		if !contentTypes[b.Type] {
			return registry.DefaultRender(value)
		}
	}
	return blocks
}

// errorText is the message of an upstream failure: its text blocks joined,
// or a fallback naming the tool when there are none.
func errorText(blocks []sdk.Content, tool string) string {
	var parts []string
	for _, b := range blocks {
		if t, ok := b.(*sdk.TextContent); ok && strings.TrimSpace(t.Text) != "" {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return tool + " failed without a message"
	}
	return strings.Join(parts, "\n")
}
