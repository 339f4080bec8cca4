package sandbox

import (
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"
)

// timer is a pending setTimeout callback.
type timer struct {
	fn   goja.Callable
	args []goja.Value
}

// setTimeout(fn, ms, ...args) schedules fn on the run's job queue and returns a numeric id.
// Timers never outlive the run: the ones still pending when it ends are stopped.
func (r *run) setTimeout(call goja.FunctionCall) goja.Value {
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(r.rt.NewTypeError("setTimeout: the callback must be a function"))
	}
	ms := call.Argument(1).ToFloat()
	if math.IsNaN(ms) || ms < 0 {
		ms = 0
	}
	// Longer than any run can last; also keeps the Duration from overflowing.
	ms = math.Min(ms, float64(r.opts.Timeout/time.Millisecond)+1)
	if len(r.timers) >= maxTimers {
		r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("the program has more than %d timers pending", maxTimers)})
		return goja.Undefined()
	}
	if r.timers == nil {
		r.timers = make(map[int]timer)
	}
	r.timerSeq++
	id := r.timerSeq
	var args []goja.Value
	if len(call.Arguments) > 2 {
		args = append(args, call.Arguments[2:]...)
	}
	r.timers[id] = timer{fn: fn, args: args}
	t := time.AfterFunc(time.Duration(ms*float64(time.Millisecond)), func() {
		r.enqueue(func() { r.fireTimer(id) })
	})
	r.mu.Lock()
	if r.closed {
		t.Stop()
	} else {
		r.timerHandles[id] = t
	}
	r.mu.Unlock()
	return r.rt.ToValue(id)
}

// clearTimeout(id) cancels a pending timer; unknown ids are ignored.
func (r *run) clearTimeout(call goja.FunctionCall) goja.Value {
	id := call.Argument(0)
	if goja.IsUndefined(id) || goja.IsNull(id) {
		return goja.Undefined()
	}
	r.dropTimer(int(id.ToInteger()))
	return goja.Undefined()
}

func (r *run) dropTimer(id int) bool {
	if _, ok := r.timers[id]; !ok {
		return false
	}
	delete(r.timers, id)
	r.mu.Lock()
	if t, ok := r.timerHandles[id]; ok {
		t.Stop()
		delete(r.timerHandles, id)
	}
	r.mu.Unlock()
	return true
}

// fireTimer runs a due timer's callback inside the VM. An exception it throws is uncaught, as
// in Node, and fails the run.
func (r *run) fireTimer(id int) {
	t, ok := r.timers[id]
	if !ok || !r.dropTimer(id) {
		return
	}
	if _, err := t.fn(goja.Undefined(), t.args...); err != nil {
		if isUncatchable(err) {
			panic(err)
		}
		msg := "uncaught exception"
		if ex, ok := err.(*goja.Exception); ok {
			msg = r.describeThrown(ex.Value())
		}
		r.fail(&Failure{Kind: KindRuntime, Message: "uncaught exception in a setTimeout callback: " + msg})
	}
}
