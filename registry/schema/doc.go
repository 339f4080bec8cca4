// Package schema is the tool schema DSL: an enforced subset of JSON Schema
// that tool authors write as Go data (Node, usually via the builders) or as
// JSON (Parse), compiled once at definition time and validated with
// github.com/santhosh-tekuri/jsonschema/v5.
//
// Place in the pipeline: the registry compiles every tool's parameters
// (Kind Parameters) and output schema (Kind Value) when the tool is defined,
// rejecting a bad schema with an error naming its path; Define'd tools
// validate arguments with Schema.Validate before the body runs (violations
// become INVALID_ARGS), and every tool's value is validated against its output
// schema (INVALID_TOOL_OUTPUT). Schema.JSON is what a model is shown. Raw
// registrations and upstream MCP tools bring full standard schemas, compiled
// with CompileStandard and no DSL rules.
//
// The DSL rules (see Compile): one type per schema; the parameter root is an
// implicitly open object; every other object states additionalProperties
// true or false; unsupported or misplaced keywords, enum/const/default values
// of the wrong type, oneOf with fewer than two alternatives, required names
// that are not declared properties, and cyclic Node graphs are rejected.
// Defaults are documentation: validation never applies or mutates anything.
//
// Depth. jsonschema/v5 is cubic in schema depth at compile time (meta-schema
// validation builds keyword locations by repeated string concatenation) and
// quadratic per error at validation time. Compile therefore cuts a DSL schema
// into chunks at most 8 levels deep, compiled as separate jsonschema
// schemas joined by a private extension keyword whose validator starts the
// child chunk afresh; Validate stitches the instance paths back together. This
// keeps compile linear and lets schemas up to MaxDepth levels compile,
// validate and render. Validation recursion still costs several KB of
// goroutine stack per nesting level it visits (tens of MB at MaxDepth; Go stacks
// may grow to 1GB). CompileStandard cannot be chunked ($ref pointers span the
// document), so it rejects documents nested deeper than 128 JSON levels.
//
// For and ForType infer a Node from a Go type (with
// github.com/google/jsonschema-go), so that typed tools get DSL schemas that
// obey every rule above: structs become closed objects.
//
// Nothing here ever fetches a document: the jsonschema compilers used by this
// package refuse every external $ref and $schema URL.
package schema
