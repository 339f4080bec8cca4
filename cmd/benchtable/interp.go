package main

import (
	"context"
	"fmt"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// Data-sized programs (issue 30, class 7: sandboxtest.DataPrograms), each
// in the sandbox (sandbox.Run in process: compile cached, the platform and
// guards installed) beside raw goja running the same body in a new runtime:
// the floor the interpreter sets.

// interpFigures measures each program in the sandbox and on raw goja,
// their rounds alternating; a round is at least one run.
func interpFigures(e *env) ([]Row, error) {
	var rows []Row
	for _, p := range sandboxtest.DataPrograms {
		prog, err := sandbox.Compile(p.Body, sandbox.JavaScript)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		raw := goja.MustCompile("floor.js", "(function () {\n"+p.Body+"\n})()", false)
		want := p.Want
		inSandbox := func() error {
			res := sandbox.Run(context.Background(), prog, nil, sandbox.Options{Timeout: 4 * sandbox.DefaultTimeout})
			if res.Err != nil || string(res.Value) != want {
				return fmt.Errorf("sandbox: %s %v", res.Value, res.Err)
			}
			return nil
		}
		floor := func() error {
			v, err := goja.New().RunProgram(raw)
			if err != nil || v.String() != want {
				return fmt.Errorf("goja: %v %v", v, err)
			}
			return nil
		}
		ms, err := measureAlternating(e.o.rounds, e.o.roundTime, inSandbox, floor)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
		rows = append(rows, Row{Figure: p.Name, Value: ms[0].us / 1e3, Floor: ms[1].us / 1e3,
			FloorName: "raw goja", Unit: "ms", AllocsPerOp: ms[0].allocsPerOp}.withRatio())
	}
	return rows, nil
}
