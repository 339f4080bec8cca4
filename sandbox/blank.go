package sandbox

import (
	"errors"
	"sync/atomic"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/codemode/codemode/internal/gopool"
)

// Runs set up ahead. A new goja runtime with the globals every program gets (the guards every
// program needs, tools, console, the timers, ToolCallError, and the intrinsics an async
// function uses) is most of what a trivial run costs, and none of it depends on the program,
// its Host or its limits: so the process keeps a few made ahead, built while it has a moment,
// and a run takes one instead of building its own on its critical path. Each serves one run
// only, as a fresh one would: nothing runs in it before its program but set-up of our own.

// blankRuns is how many runs are kept set up ahead.
const blankRuns = 2

var (
	blanks       = make(chan *run, blankRuns)
	blankFilling atomic.Bool // a goroutine is setting runs up ahead
)

// takeBlank returns a run set up ahead, or nil when none is ready, and sees to it that more
// are made.
func takeBlank() *run {
	var r *run
	select {
	case r = <-blanks:
	default:
	}
	if len(blanks) < cap(blanks) && blankFilling.CompareAndSwap(false, true) {
		gopool.Go(fillBlanks)
	}
	return r
}

// fillBlanks sets runs up until blanks is full.
func fillBlanks() {
	defer blankFilling.Store(false)
	for len(blanks) < cap(blanks) {
		r := newBlankRun()
		if r == nil {
			return
		}
		select {
		case blanks <- r:
		default:
			return
		}
	}
}

// newBlankRun returns a run with its runtime and the globals every program gets, and no
// program, Host or limits yet; nil if set-up failed (a bug: Run then sets one up itself and
// reports it).
func newBlankRun() (r *run) {
	r = allocRun()
	defer func() {
		if recover() != nil {
			r = nil
		}
	}()
	if r.setupBase() != nil {
		return nil
	}
	return r
}

// asyncWarmUp materializes the intrinsics every program's async function uses.
var asyncWarmUp = goja.MustCompile("warm-up.js", "(async function () {})()", true)

// setupBase installs what every program's runtime gets, whatever the program: see setup.
func (r *run) setupBase() error {
	rt := r.rt
	// eval and new Function parse at run time; never let them read source maps from disk.
	rt.SetParserOptions(parser.WithDisableSourceMaps)
	if err := r.guards.install(alwaysGuarded); err != nil {
		return err
	}
	r.trampoline, _ = goja.AssertFunction(r.function("sandbox", func(goja.FunctionCall) goja.Value {
		r.next.run()
		return goja.Undefined()
	}))
	global := rt.GlobalObject()
	define := func(name string, v goja.Value) error {
		return global.DefineDataProperty(name, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	tce := r.function("ToolCallError", r.toolCallErrorAccessor)
	if err := errors.Join(
		global.DefineAccessorProperty("ToolCallError", tce, tce, goja.FLAG_TRUE, goja.FLAG_FALSE),
		define("tools", r.newTools()),
		define("console", r.console.newObject()),
		define("setTimeout", r.function("setTimeout", r.timers.setTimeout)),
		define("clearTimeout", r.function("clearTimeout", r.timers.clearTimer)),
	); err != nil {
		return err
	}
	if _, err := rt.RunProgram(asyncWarmUp); err != nil {
		return err
	}
	r.based = true
	return nil
}
