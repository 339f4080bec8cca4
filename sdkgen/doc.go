// Package sdkgen renders the Code Mode SDK for one resolved tool set.
//
// The caller (the bridge, the CLI, the HTTP layer) adapts a registry view into []Tool and builds
// a Set with NewSet; sdkgen reads no registry, runs no JavaScript and serves no HTTP (it imports
// packages sandbox and runtime only for the default limits a prompt states, so that each is
// written once, by the package that applies it). The sandbox does not run anything sdkgen
// makes: it builds `tools` and `ToolCallError` itself, and these texts describe them. From a Set sdkgen produces three byte-stable texts and one line per tool:
//
//   - TypeScript: the declarations for tool authors and editors (ToolCallError, `declare const
//     tools` with one member per tool, and ToolName, ToolArgsMap, ToolOutputMap derived from it);
//   - JavaScript: the same for JavaScript readers, as JSDoc types on two variable declarations
//     (a `// @ts-check` reference, not a program);
//   - Prompt / PromptWith: what a model reads up front to use run_code: the program contract
//     with the service's limits, one example, and the declarations with one line per tool;
//   - Signature: one tool's one-line signature, for error messages (self-contained), and
//     Set.Signature, the same with the set's shared types by name, for search results.
//
// A large type that several tools repeat (MCP's content blocks, GitHub's simple-user) is declared
// once as `type Name = …;` before `tools` and referred to by name (shared.go); the prompt's
// catalog and Describe declare only the shared types their tools use.
//
// Output depends only on the set's content (and the prompt's options): tools are sorted by name,
// run_code is never part of the SDK, and schemas are read as data (JSON key order is
// irrelevant). No text carries a version: Set.Version is the ETag. A schema sdkgen cannot
// express in TypeScript degrades to `unknown`; no input makes it fail or panic.
package sdkgen
