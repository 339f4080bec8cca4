package sandbox

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"
)

// Timers: setTimeout, setInterval and setImmediate (with their clear functions) and
// queueMicrotask, on the run's job queue. Due timers fire in the order of their due time, and
// of their creation for equal times, each as a job of its own (so promise jobs run between
// two callbacks, as in Node); one Go timer, for the earliest due time, wakes the loop. Nothing
// outlives the run: when it ends the Go timer is stopped and pending callbacks are dropped.

// timer is a pending timer callback. Fields belong to the VM goroutine.
type timer struct {
	id       int
	fn       goja.Callable
	args     []goja.Value
	when     time.Time     // due time; zero for setImmediate
	interval time.Duration // > 0 for setInterval
	kind     string        // the function that made it, for error messages
	index    int           // in the due heap; -1 when not in it
}

// timerHeap orders due timers by due time, then by id (creation order).
type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].id < h[j].id
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// delay converts a timer's ms argument as Node does: missing, NaN, below 1 or above 2^31-1
// ms is 1 ms. Longer than a run can last is clipped, which keeps the Duration in range.
func (r *run) delay(v goja.Value) time.Duration {
	ms := v.ToFloat()
	if math.IsNaN(ms) || ms < 1 || ms > math.MaxInt32 {
		ms = 1
	}
	ms = math.Min(ms, float64(r.opts.Timeout/time.Millisecond)+1)
	return time.Duration(ms * float64(time.Millisecond))
}

// newTimer registers a timer made by kind(fn, ...args), counted against maxTimers.
func (r *run) newTimer(kind string, call goja.FunctionCall, argsFrom int) *timer {
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(r.rt.NewTypeError(kind + ": the callback must be a function"))
	}
	if len(r.timers) >= maxTimers {
		r.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("the program has more than %d timers pending", maxTimers)})
		panic(r.rt.NewTypeError("too many timers")) // unwinds; the run has failed
	}
	if r.timers == nil {
		r.timers = make(map[int]*timer)
	}
	r.timerSeq++
	t := &timer{id: r.timerSeq, fn: fn, kind: kind, index: -1}
	if len(call.Arguments) > argsFrom {
		t.args = append(t.args, call.Arguments[argsFrom:]...)
	}
	r.timers[t.id] = t
	return t
}

// setTimeout(fn, ms, ...args) runs fn once after ms and returns a numeric id.
func (r *run) setTimeout(call goja.FunctionCall) goja.Value {
	t := r.newTimer("setTimeout", call, 2)
	r.schedule(t, time.Now().Add(r.delay(call.Argument(1))))
	return r.rt.ToValue(t.id)
}

// setInterval(fn, ms, ...args) runs fn every ms until cleared and returns a numeric id.
func (r *run) setInterval(call goja.FunctionCall) goja.Value {
	t := r.newTimer("setInterval", call, 2)
	t.interval = r.delay(call.Argument(1))
	r.schedule(t, time.Now().Add(t.interval))
	return r.rt.ToValue(t.id)
}

// setImmediate(fn, ...args) runs fn after the jobs already queued and returns a numeric id.
func (r *run) setImmediate(call goja.FunctionCall) goja.Value {
	t := r.newTimer("setImmediate", call, 1)
	id := t.id
	r.enqueue(jobFunc(func() { r.fireTimer(id) }))
	return r.rt.ToValue(id)
}

// clearTimer is clearTimeout, clearInterval and clearImmediate: ids are shared, as in Node;
// unknown ids are ignored.
func (r *run) clearTimer(call goja.FunctionCall) goja.Value {
	id := call.Argument(0)
	if goja.IsUndefined(id) || goja.IsNull(id) {
		return goja.Undefined()
	}
	f := id.ToFloat()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return goja.Undefined()
	}
	r.dropTimer(int(f))
	return goja.Undefined()
}

// schedule puts t in the due heap at when and re-arms the alarm if t is now the earliest.
func (r *run) schedule(t *timer, when time.Time) {
	t.when = when
	heap.Push(&r.due, t)
	if r.due[0] == t {
		r.arm()
	}
}

// arm sets the Go timer for the earliest due timer.
func (r *run) arm() {
	if len(r.due) == 0 {
		return
	}
	d := time.Until(r.due[0].when)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.alarm == nil {
		r.alarm = time.AfterFunc(d, func() { r.enqueue(jobFunc(r.runDue)) })
		return
	}
	r.alarm.Reset(d)
}

// runDue queues a job for each timer now due, in order, and re-arms the alarm.
func (r *run) runDue() {
	now := time.Now()
	for len(r.due) > 0 && !r.due[0].when.After(now) {
		t := heap.Pop(&r.due).(*timer)
		id := t.id
		r.enqueue(jobFunc(func() { r.fireTimer(id) }))
	}
	r.arm()
}

func (r *run) dropTimer(id int) bool {
	t, ok := r.timers[id]
	if !ok {
		return false
	}
	delete(r.timers, id)
	if t.index >= 0 {
		heap.Remove(&r.due, t.index)
	}
	return true
}

// fireTimer runs a due timer's callback inside the VM; an interval is scheduled again unless
// its callback cleared it. An exception the callback throws is uncaught, as in Node, and
// fails the run.
func (r *run) fireTimer(id int) {
	t, ok := r.timers[id]
	if !ok {
		return
	}
	if t.interval == 0 {
		r.dropTimer(id)
	}
	_, err := t.fn(goja.Undefined(), t.args...)
	if t.interval > 0 {
		if _, live := r.timers[id]; live && t.index < 0 {
			r.schedule(t, time.Now().Add(t.interval))
		}
	}
	if err != nil {
		r.uncaught(err, "a "+t.kind+" callback")
	}
}

// uncaught fails the run with an exception nothing caught, thrown in where.
func (r *run) uncaught(err error, where string) {
	if isUncatchable(err) {
		panic(err)
	}
	msg := "uncaught exception"
	if ex, ok := err.(*goja.Exception); ok {
		msg = r.describeThrown(ex.Value())
	}
	r.fail(&Failure{Kind: KindRuntime, Message: "uncaught exception in " + where + ": " + msg})
}

// queueMicrotask(fn) runs fn as a promise job, after the current job; an exception it throws
// is uncaught and fails the run.
func (r *run) queueMicrotask() goja.Value {
	report := r.function("report", func(call goja.FunctionCall) goja.Value {
		r.fail(&Failure{Kind: KindRuntime, Message: "uncaught exception in a queueMicrotask callback: " + r.describeThrown(call.Argument(0))})
		return goja.Undefined()
	})
	return r.prelude("microtask.js", report)
}

// installTimerGlobals defines the timer functions beyond setTimeout and clearTimeout.
func (r *run) installTimerGlobals() error {
	for _, g := range []struct {
		name string
		fn   func(goja.FunctionCall) goja.Value
	}{
		{"setInterval", r.setInterval},
		{"clearInterval", r.clearTimer},
		{"setImmediate", r.setImmediate},
		{"clearImmediate", r.clearTimer},
	} {
		fn, name := g.fn, g.name
		if err := r.lazyGlobal(name, func() goja.Value { return r.function(name, fn) }); err != nil {
			return err
		}
	}
	return r.lazyGlobal("queueMicrotask", r.queueMicrotask)
}
