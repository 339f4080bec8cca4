package worker_test

import (
	"context"
	"fmt"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/worker"
)

func ExamplePool() {
	pool, err := worker.New(worker.Options{Warm: -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	res := pool.Run(context.Background(), `console.log("in a worker"); return 6 * 7`, nil, sandbox.Options{})
	fmt.Println(res.Logs, string(res.Value), res.Err)
	res = pool.Run(context.Background(), `new globalThis["Array" + "Buffer"](2 ** 40)`, nil, sandbox.Options{})
	// Whether the worker died (at its hard memory cap) or a guard stopped the
	// allocation first depends on the machine; either way the run is a limit.
	fmt.Println(res.Err.Kind)
	// Output:
	// [in a worker] 42 <nil>
	// limit
}
