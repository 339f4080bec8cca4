// Package sdkgen renders the Code Mode SDK for one resolved tool set.
//
// The caller (the bridge, the CLI, the HTTP layer) adapts a registry view into []Tool and builds
// a Set with NewSet; sdkgen knows nothing of the registry, goja or HTTP. From a Set it produces
// three byte-stable texts:
//
//   - TypeScript: the declarations shown to models and tool authors (ToolCallError, ToolArgsMap,
//     ToolOutputMap, ToolName and `declare const tools`);
//   - Prompt: the model-facing instructions for run_code, ending with those declarations;
//   - Bindings: the JS program the sandbox evaluates once per run to install `tools` and
//     `ToolCallError`, compiled once per Set.Version and cached by the caller.
//
// Output depends only on the set's content: tools are sorted by name, run_code is never part of
// the SDK, and schemas are read as data (JSON key order is irrelevant). A schema sdkgen cannot
// express in TypeScript degrades to `unknown`; no input makes it fail or panic.
package sdkgen
