// Package sandbox runs one run_code program in a fresh goja runtime.
//
// Place in the pipeline: the bridge compiles a model's program with [Compile] (TypeScript is
// stripped in-process with esbuild; compiled programs are cached) and runs it with [Run]. Every
// tools.<name>(args) call in the program leaves the VM as a [Call] message whose arguments are a
// lossless JSON snapshot taken in the sandbox; the bridge ([Host]) runs the tool pipeline on
// another goroutine and hands a [Settlement] (JSON value or error) back, which the sandbox applies
// on the VM goroutine. Nothing else crosses: no Go value is ever handed to the VM, so the host
// boundary stays message-shaped and the sandbox can move into a worker process.
//
// The sandbox knows nothing about tools, policy or logging. It owns the goja lifecycle: program
// wrapping (the source is the body of an async function), console capture, the job queue that
// applies settlements and timers, limits (wall time, call-stack depth, tool calls, log and result
// bytes) and the closing of known goja hazards (source maps read from disk, catastrophic
// regular expressions, Go panics, ambient capabilities such as require or process).
//
// Importing this package sets regexp2's process-wide default match timeout (see
// [RegexpMatchTimeout]); goja is the only user of regexp2 in codemode.
package sandbox
