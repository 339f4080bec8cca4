// Package registry holds tool definitions and the scopes that decide which
// tools a call can see.
//
// It is the bottom of the pipeline: runtime resolves a call's tool here when
// the call starts, sdkgen renders a scope's view, and dispatch reads the same
// view, so what a model was shown and what runs never drift apart. A tool has
// four contracts: its model schema (name, description, parameters), its
// execution (a body returning a canonical JSON value), its durable content
// (output schema, render, optional finalizeContent) and optional UI metadata
// (presentationMeta and replay-safe presenters).
//
// Typed infers a tool's schemas from Go types (In, Out) and hands its body a
// decoded In; Define compiles a tool from the schema DSL (package schema);
// both validate arguments before policy and the body. Raw registers a tool
// whose body receives arbitrary JSON. Both declare an output schema, and every value a body
// returns is validated against it by the runtime.
package registry
