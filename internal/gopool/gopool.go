// Package gopool runs functions on goroutines that outlive them.
//
// A new goroutine starts with a small stack and grows it, copying, as deep
// calls need: the pipeline under a tool call and the goja interpreter under a
// program grow theirs several times, in every run. A goroutine of the pool
// keeps its grown stack for the next function (until a collection finds it
// idle and shrinks it), so runs stop paying for the same growth every time.
package gopool

import (
	"sync/atomic"
	"time"
)

// idleFor is how long a goroutine waits for its next function before it ends.
const idleFor = 10 * time.Second

var (
	handoff = make(chan func()) // to a waiting goroutine
	idle    atomic.Int64
)

// Go runs f on a waiting goroutine of the pool, or on a new one. Like a go
// statement it returns at once; a panic in f ends the process as one would.
func Go(f func()) {
	select {
	case handoff <- f:
	default:
		go serve(f)
	}
}

// Idle is the number of goroutines waiting for a function: what a test
// counting goroutines should not take for a leak.
func Idle() int { return int(idle.Load()) }

func serve(f func()) {
	t := time.NewTimer(idleFor)
	defer t.Stop()
	for {
		f()
		f = nil // no reference to the last function while waiting
		t.Reset(idleFor)
		idle.Add(1)
		select {
		case f = <-handoff:
			idle.Add(-1)
		case <-t.C:
			idle.Add(-1)
			return
		}
	}
}
