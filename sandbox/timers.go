package sandbox

import (
	"container/heap"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// timers is the platform's timer module: setTimeout, setInterval and setImmediate (with their
// clear functions) and queueMicrotask, on the job queue of the run it is installed in (its
// platformHost). Due timers fire in the order of their due time, and of their creation for
// equal times, each as a job of its own (so promise jobs run between two callbacks, as in
// Node); one Go timer, for the earliest due time, wakes the loop. A due time counts from the
// clock as the job that set the timer first read it (loopTime), so the timers one job sets
// fire in the order of their delays however long the job runs or the machine is loaded
// (Node reads its clock at each setTimeout, to the millisecond: there a job that computes
// between two timers can reorder them). Nothing outlives the run:
// when it ends (stop) the Go timer is stopped and pending callbacks are dropped. Fields
// without a guard note belong to the VM goroutine.
type timers struct {
	h     platformHost
	seq   int            // the last id given
	byID  map[int]*timer // pending timers by id
	due   timerHeap      // scheduled timers by due time
	mu    sync.Mutex
	done  bool        // stop has run; guarded by mu
	alarm *time.Timer // wakes the loop for the earliest due timer; guarded by mu
}

// pending is how many timers are pending: a run whose promise is pending with none of them,
// no job queued and no call in flight can never settle.
func (ts *timers) pending() int { return len(ts.byID) }

// stop stops the Go timer for good: no callback is queued after it. Safe from any goroutine.
func (ts *timers) stop() {
	ts.mu.Lock()
	ts.done = true
	if ts.alarm != nil {
		ts.alarm.Stop()
	}
	ts.mu.Unlock()
}

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
func (ts *timers) delay(v goja.Value) time.Duration {
	ms := v.ToFloat()
	if math.IsNaN(ms) || ms < 1 || ms > math.MaxInt32 {
		ms = 1
	}
	ms = math.Min(ms, float64(ts.h.timeout()/time.Millisecond)+1)
	return time.Duration(ms * float64(time.Millisecond))
}

// newTimer registers a timer made by kind(fn, ...args), counted against maxTimers.
func (ts *timers) newTimer(kind string, call goja.FunctionCall, argsFrom int) *timer {
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(ts.h.runtime().NewTypeError(kind + ": the callback must be a function"))
	}
	if len(ts.byID) >= maxTimers {
		ts.h.fail(&Failure{Kind: KindLimit, Message: fmt.Sprintf("the program has more than %d timers pending", maxTimers)})
		panic(ts.h.runtime().NewTypeError("too many timers")) // unwinds; the run has failed
	}
	if ts.byID == nil {
		ts.byID = make(map[int]*timer)
	}
	ts.seq++
	t := &timer{id: ts.seq, fn: fn, kind: kind, index: -1}
	if len(call.Arguments) > argsFrom {
		t.args = append(t.args, call.Arguments[argsFrom:]...)
	}
	ts.byID[t.id] = t
	return t
}

// setTimeout(fn, ms, ...args) runs fn once after ms and returns a numeric id.
func (ts *timers) setTimeout(call goja.FunctionCall) goja.Value {
	t := ts.newTimer("setTimeout", call, 2)
	ts.schedule(t, ts.h.loopTime().Add(ts.delay(call.Argument(1))))
	return ts.h.runtime().ToValue(t.id)
}

// setInterval(fn, ms, ...args) runs fn every ms until cleared and returns a numeric id.
func (ts *timers) setInterval(call goja.FunctionCall) goja.Value {
	t := ts.newTimer("setInterval", call, 2)
	t.interval = ts.delay(call.Argument(1))
	ts.schedule(t, ts.h.loopTime().Add(t.interval))
	return ts.h.runtime().ToValue(t.id)
}

// setImmediate(fn, ...args) runs fn after the jobs already queued and returns a numeric id.
func (ts *timers) setImmediate(call goja.FunctionCall) goja.Value {
	t := ts.newTimer("setImmediate", call, 1)
	id := t.id
	ts.h.enqueue(jobFunc(func() { ts.fireTimer(id) }))
	return ts.h.runtime().ToValue(id)
}

// clearTimer is clearTimeout, clearInterval and clearImmediate: ids are shared, as in Node;
// unknown ids are ignored.
func (ts *timers) clearTimer(call goja.FunctionCall) goja.Value {
	id := call.Argument(0)
	if goja.IsUndefined(id) || goja.IsNull(id) {
		return goja.Undefined()
	}
	f := id.ToFloat()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return goja.Undefined()
	}
	ts.dropTimer(int(f))
	return goja.Undefined()
}

// schedule puts t in the due heap at when and re-arms the alarm if t is now the earliest.
func (ts *timers) schedule(t *timer, when time.Time) {
	t.when = when
	heap.Push(&ts.due, t)
	if ts.due[0] == t {
		ts.arm()
	}
}

// arm sets the Go timer for the earliest due timer. While the run replays a journal, timers
// fire where the journal says instead (see run.replayJob).
func (ts *timers) arm() {
	if len(ts.due) == 0 || ts.h.replayingJournal() {
		return
	}
	d := time.Until(ts.due[0].when)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.done {
		return
	}
	if ts.alarm == nil {
		ts.alarm = time.AfterFunc(d, func() { ts.h.enqueue(&dueJob{ts: ts}) })
		return
	}
	ts.alarm.Reset(d)
}

// dueJob collects the timers due at its time, which the loop stamps: the clock's, recorded,
// or the journal's.
type dueJob struct {
	ts *timers
	at time.Time
}

func (d *dueJob) run() { d.ts.runDue(d.at) }

// runDue queues a job for each timer due at now, in order, and re-arms the alarm.
func (ts *timers) runDue(now time.Time) {
	for len(ts.due) > 0 && !ts.due[0].when.After(now) {
		t := heap.Pop(&ts.due).(*timer)
		id := t.id
		ts.h.enqueue(jobFunc(func() { ts.fireTimer(id) }))
	}
	ts.arm()
}

func (ts *timers) dropTimer(id int) bool {
	t, ok := ts.byID[id]
	if !ok {
		return false
	}
	delete(ts.byID, id)
	if t.index >= 0 {
		heap.Remove(&ts.due, t.index)
	}
	return true
}

// fireTimer runs a due timer's callback inside the VM; an interval is scheduled again unless
// its callback cleared it. An exception the callback throws is uncaught, as in Node, and
// fails the run.
func (ts *timers) fireTimer(id int) {
	t, ok := ts.byID[id]
	if !ok {
		return
	}
	if t.interval == 0 {
		ts.dropTimer(id)
	}
	_, err := t.fn(goja.Undefined(), t.args...)
	if t.interval > 0 {
		if _, live := ts.byID[id]; live && t.index < 0 {
			ts.schedule(t, ts.h.loopTime().Add(t.interval))
		}
	}
	if err != nil {
		ts.h.uncaught(err, "a "+t.kind+" callback")
	}
}

// queueMicrotask(fn) runs fn as a promise job, after the current job; an exception it throws
// is uncaught and fails the run.
func (ts *timers) queueMicrotask() goja.Value {
	report := ts.h.function("report", func(call goja.FunctionCall) goja.Value {
		ts.h.fail(&Failure{Kind: KindRuntime, Message: "uncaught exception in a queueMicrotask callback: " + ts.h.describeThrown(call.Argument(0))})
		return goja.Undefined()
	})
	return ts.h.prelude("microtask.js", report)
}

// install defines the timer functions beyond setTimeout and clearTimeout (which setupBase
// defines for every program).
func (ts *timers) install() error {
	for _, g := range []struct {
		name string
		fn   func(goja.FunctionCall) goja.Value
	}{
		{"setInterval", ts.setInterval},
		{"clearInterval", ts.clearTimer},
		{"setImmediate", ts.setImmediate},
		{"clearImmediate", ts.clearTimer},
	} {
		fn, name := g.fn, g.name
		if err := ts.h.lazyGlobal(name, func() goja.Value { return ts.h.function(name, fn) }); err != nil {
			return err
		}
	}
	return ts.h.lazyGlobal("queueMicrotask", ts.queueMicrotask)
}
