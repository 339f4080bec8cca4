// Package sandbox runs one run_code program in a fresh goja runtime.
//
// Place in the pipeline: the bridge hands a model's program to a [Runner]: [InProcess]
// compiles it with [CompileAuto] (TypeScript is stripped in-process with esbuild; compiled
// programs are cached) and runs it with [Run]; package sandbox/worker does the same in a
// supervised worker process, with the Host left in the caller's process. Every
// tools.<name>(args) call in the program leaves the VM as a [Call] message whose argument is a
// lossless JSON snapshot taken in the sandbox; the bridge ([Host]) runs the tool pipeline (on
// the goroutine that waits for it when the program awaits that call alone, see [Holder]; else
// on another) and hands a [Settlement] (JSON value or error) back, which the sandbox
// applies on the VM goroutine. Nothing else crosses: no Go value is handed to the VM, so the
// host boundary stays message-shaped and the sandbox can move into a worker process.
//
// The sandbox knows nothing about tools, policy or logging. It owns the goja lifecycle: program
// wrapping (the source is the body of an async function), console capture, the job queue that
// applies settlements and timers, limits (wall time, call-stack depth, tool calls, log and
// result bytes, memory: caps on the built-ins that allocate in one step and a heap watchdog)
// and the closing of known goja hazards (source maps read from disk, catastrophic regular
// expressions, deeply nested source, Go panics, ambient capabilities). What one process cannot
// bound (see guards.go) is why hostile programs run in worker processes.
//
// What a program sees:
//   - tools: a read-only object with a null prototype, answered by the Host on access, so
//     set-up does not grow with the number of tools. tools[name](arg) returns a promise; with
//     no argument it sends {}; more than one argument, or an argument that is not JSON data,
//     rejects that call with a ToolCallError and dispatches nothing.
//   - ToolCallError (extends Error; name, toolName, code, message): what failed calls reject with.
//   - console.log/info/warn/error/debug: captured alike, formatted like Node's util.format
//     (goja_nodejs's formatter prints objects as [object Object], so this package has its own).
//   - setTimeout, setInterval, setImmediate and their clear functions: timers on the run's job
//     queue, stopped when the run ends.
//   - the platform [PlatformSummary] names (URL, TextEncoder, atob, crypto, AbortController,
//     structuredClone, Intl, …), each installed when the program mentions it (platform.go);
//     no require, process, file system or network.
//
// # Map
//
// The package has three ideas. The run ([Run], run.go): a goja runtime, the loop that applies
// jobs to it on its own goroutine (settlements, timers, held calls), and the host boundary with
// its limits: tool calls out as snapshots (tools.go, snapshot.go, host.go), settlements in
// (fromjson.go), the log sink and the result out, failures worded for the model (failure.go);
// the guards on built-ins that allocate in one step (guards.go: builtinGuards, installed
// against platformHost as the modules are), the heap watchdog (watchdog.go) and runtimes set up
// ahead (blank.go). Compiling ([Compile], program.go): source to a goja program, through one
// JavaScript scanner (scan.go) for the bracket guard (nesting.go), program shapes (shape.go,
// namespace.go), and the try-call rewriting (trycall.go); compiled programs are cached
// (cache.go). The platform (platform.go): what a program gets beyond ECMAScript (console and
// setTimeout always, the rest when the program names it), each piece installed against
// platformHost, the small interface through which a module reaches the run it extends (its
// runtime, job queue, failure, log sink, clock, memory caps and formatter), as k6's modules
// reach their VU. The modules are the console (console.go, console_extras.go), the timers
// (timers.go) and the Web APIs (webapi.go), each a type holding its own state with one field in
// the run; the ES2023–2025 built-ins, Date and RegExp fixes (platform_builtins.go, date.go,
// regexp.go) are functions of platformHost; Intl is package sandbox/intl, which the run
// installs with its guards (intl.go). The inspector (inspect.go, util.inspect as Node's) is the
// run's: failure messages describe thrown values with it, and the console formats through
// platformHost with it.
//
// The modules are types in this package rather than sub-packages because what they share with
// the run is its vocabulary, not its state: the job type, Failure, the memory caps and the
// inspector, which reads the Web API classes' internal state (URL, URLSearchParams); as
// sub-packages these would all be exported. None of them holds a *run: platformHost is all
// they see of it.
//
// Importing this package sets regexp2's process-wide default match timeout (see
// [RegexpMatchTimeout]); goja is the only user of regexp2 in codemode.
package sandbox
