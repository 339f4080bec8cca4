package main

import (
	"context"
	"io"

	"github.com/codemode/codemode/sandbox/worker"
)

// cmdWorker is the hidden `codemode worker`: one sandbox worker process, speaking the worker
// protocol on stdin and stdout until stdin ends. The pool of `isolation: process` starts
// these; a process it starts turns into a worker before main runs (see package
// sandbox/worker), so this command is the same thing by name, for ps listings and for
// running a worker by hand.
func cmdWorker(_ context.Context, args []string, _ io.Reader, _, _ io.Writer) error {
	if len(args) > 0 {
		return usagef("worker takes no arguments")
	}
	if code := worker.Main(); code != 0 {
		return exitError(code)
	}
	return nil
}
