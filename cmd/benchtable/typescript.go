package main

import (
	"strconv"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// compileOp compiles src in lang with a comment that changes every time, so
// that sandbox's program cache never answers.
func compileOp(src string, lang sandbox.Lang) op {
	n := 0
	return func() error {
		n++
		_, err := sandbox.Compile(src+"// "+strconv.Itoa(n)+"\n", lang)
		return err
	}
}

// typescriptFigures measures compiling the TypeScript program (esbuild
// strips the types, goja compiles the result) against compiling the same
// program written in JavaScript, both missing the cache.
func typescriptFigures(e *env) ([]Row, error) {
	ms, err := measureAlternating(e.o.rounds, e.o.roundTime, compileOp(sandboxtest.TypicalTS, sandbox.TypeScript), compileOp(sandboxtest.TypicalJS, sandbox.JavaScript))
	if err != nil {
		return nil, err
	}
	return []Row{Row{Figure: "TypeScript compile, 30 lines, uncached", Value: ms[0].us, Floor: ms[1].us, FloorName: "same as JS",
		Unit: "µs", AllocsPerOp: ms[0].allocsPerOp}.withRatio()}, nil
}
