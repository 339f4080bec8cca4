// Package worker runs run_code programs in supervised worker processes: a Pool of processes
// of this same binary, each running one program at a time in the sandbox, speaking a framed
// protocol over its stdin and stdout.
//
// Place in the pipeline: the bridge hands a program to a sandbox.Runner; with `isolation:
// process` that Runner is a Pool. The program runs in a worker; each tools.<name>(args) call
// crosses to this process, where the bridge runs the pipeline and writes the log, and the
// settlement crosses back. Nothing of the host process (its memory, files, environment or
// Go runtime) is within a program's reach, and what goja cannot bound in one process is
// bounded by the worker's:
//
//   - wall clock: at the run's timeout (or its context's end) the pool sends cancel; a worker
//     that has not answered within KillGrace, stuck in native code that ignores Interrupt, is
//     killed (SIGKILL);
//   - memory: Go's soft memory limit and the sandbox's heap watchdog stop a growing run, and a
//     hard cap (RLIMIT_DATA on Linux) ends the worker that allocates past it in one step;
//   - stack: debug.SetMaxStack bounds native recursion (very deep JSON or source), which would
//     otherwise end in a fatal stack overflow of the whole server.
//
// A worker that dies is replaced, and its run fails with kind "limit" (memory, stack, killed
// by the system) or "runtime" (anything else, quoting the worker's last words). Workers are
// recycled after MaxRuns programs or when their resident size passes RecycleMemory; Warm idle
// workers are kept started ahead so that a run does not wait for a process to start.
//
// A worker is this same executable: the pool starts it with EnvVar set, and this package's
// init turns any process that imports it and finds EnvVar set into a worker before main runs.
// So the codemode binary, its test binaries and any program embedding codemode can all serve
// as workers, with nothing to wire in main; `codemode worker` is the same thing by name.
package worker
