package main

import (
	"fmt"

	"github.com/codemode/codemode/config"
)

// sdkFigures measures the per-run cost of the SDK: a trivial run_code call
// through the pipeline (no session log) in a scope of 10, 100, 1,000 and
// 10,000 tools, in-process and, when this build offers it, with process
// isolation (where the tool names cross to the worker). The 10-tool run is
// the floor; the set-up must be flat in the number of tools (issue 16:
// within 1.2× at 10,000, both ways).
func sdkFigures(e *env) ([]Row, error) {
	var rows []Row
	// The two settings are measured apart: a worker pool starts processes
	// in the background, which would slow the in-process rounds after it.
	for _, iso := range []string{inproc, process} {
		ms, err := measureSDK(e, iso)
		if err != nil {
			if iso == process {
				rows = append(rows, skipped("  same, process isolation", err.Error()))
				break
			}
			return nil, err
		}
		for i, n := range sdkCounts {
			r := Row{Figure: fmt.Sprintf("SDK set-up, %d tools (trivial run_code, no log)", n), Value: ms[i].us, Unit: "µs", AllocsPerOp: ms[i].allocsPerOp}
			if iso == process {
				r.Figure = fmt.Sprintf("  same, process isolation, %d tools", n)
			}
			if i > 0 {
				r.Floor, r.FloorName = ms[0].us, "10 tools"
				r = r.withRatio()
			}
			if n == sdkCounts[len(sdkCounts)-1] {
				r.Target = "≤ 1.20×"
				r = r.judge(r.Ratio <= 1.2)
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

var sdkCounts = []int{10, 100, 1000, 10000}

// measureSDK measures the trivial run_code call with each of sdkCounts
// tools in scope, rounds alternating. An App that cannot be built with
// isolation is an error.
func measureSDK(e *env, isolation string) ([]measured, error) {
	var ops []op
	for _, n := range sdkCounts {
		a, err := newApp(e.ctx, appConfig("memory://", isolation, false))
		if err != nil {
			return nil, err
		}
		defer a.Close()
		if err := registerTools(a.Registry, config.DefaultScope, n); err != nil {
			return nil, err
		}
		ops = append(ops, executeOp(e.ctx, a.Runtime, runCodeRequest(config.DefaultScope, trivialProgram)))
	}
	return measureAlternating(e.o.rounds, e.o.roundTime, ops...)
}
