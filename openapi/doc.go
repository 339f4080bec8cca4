// Package openapi turns an OpenAPI 3.0 or 3.1 description into tool
// definitions: one Operation per method of each path, named by the MCP
// tool-name rule, with a self-contained JSON Schema for its arguments (path,
// query and header parameters plus the request body) and for its JSON result.
//
// It is the first stage of an OpenAPI tool source: Parse reads the document,
// Operations resolves each operation once; policy, transport and rendering
// belong to the packages that consume an Operation.
//
// Documents are untrusted input. Local $refs are inlined; a ref already being
// expanded on the current path (a cycle) and every ref met after a schema's
// expansion has passed MaxSchemaBytes become an empty schema that keeps only
// the target's description, so no document amplifies without bound. Errors
// name the JSON pointer of what is wrong.
package openapi
