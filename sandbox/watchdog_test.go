package sandbox

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestWatchdogStopsAGrowingRun(t *testing.T) {
	// A string doubled in a loop: no built-in guard sees +, the watchdog does.
	res := runLang(t, `let s = "x"; for (;;) s += s`, JavaScript, nil, Options{Memory: 16 << 20, Timeout: 20 * time.Second})
	wantFailure(t, res, KindLimit, "exceeded its memory limit of 16 MiB")
}

func TestWatchdogBlamesTheRunThatGrows(t *testing.T) {
	// An idle run (waiting on a timer) shares the process with one that grows: only the one
	// executing JavaScript while the heap grows is charged.
	var wg sync.WaitGroup
	var bomb, idle Result
	wg.Add(2)
	go func() {
		defer wg.Done()
		bomb = runLang(t, `await new Promise(r => setTimeout(r, 50)); const keep = []; for (;;) keep.push({a: [1, 2, 3], b: "x" + keep.length})`,
			JavaScript, nil, Options{Memory: 64 << 20, Timeout: 20 * time.Second})
	}()
	go func() {
		defer wg.Done()
		idle = runLang(t, `await new Promise(r => setTimeout(r, 1000)); return "fine"`, JavaScript, nil, Options{Memory: 64 << 20, Timeout: 20 * time.Second})
	}()
	wg.Wait()
	wantFailure(t, bomb, KindLimit, "memory limit")
	wantValue(t, idle, `"fine"`)
}

func TestWatchdogIgnoresGarbage(t *testing.T) {
	// 64 MiB allocated over the run, little of it alive at once: garbage is not growth. The
	// limit is half of that. A collection's shrinkage is taken first from what ended runs
	// left (in a test binary, also what earlier tests keep alive), so this run's share can
	// stay above its live memory by that much: at 16 MiB it failed now and then on a busy
	// machine.
	res := runLang(t, `let n = 0; for (let i = 0; i < 64; i++) { n += ("x".repeat(1 << 20) + i).length } return n > 0`,
		JavaScript, nil, Options{Memory: 32 << 20, Timeout: 20 * time.Second})
	wantValue(t, res, `true`)
}

func TestWatchdogAttribution(t *testing.T) {
	w := &heapWatchdog{runs: make(map[*run]float64)}
	busy, idle := newRun(nil, nil, Options{}.withDefaults()), newRun(nil, nil, Options{}.withDefaults())
	busy.ranJS.Store(true)
	idle.idle.Store(true)
	w.runs[busy], w.runs[idle] = 0, 0

	w.attribute(100)
	if w.runs[busy] != 100 || w.runs[idle] != 0 {
		t.Fatalf("growth with one busy run: %v", w.runs)
	}
	busy.idle.Store(true)
	// Nobody ran JavaScript since: growth is shared by all.
	w.attribute(50)
	if w.runs[busy] != 125 || w.runs[idle] != 25 {
		t.Fatalf("growth with no busy run: %v", w.runs)
	}
	// Shrinkage comes out of what ended runs left first, then proportionally.
	w.orphaned = 30
	w.attribute(-60)
	if w.orphaned != 0 || w.runs[busy] != 100 || w.runs[idle] != 20 {
		t.Fatalf("after shrinking: orphaned %v, %v", w.orphaned, w.runs)
	}
	busy.opts.Memory = 99
	if over := w.overLimit(); len(over) != 1 || over[0] != busy {
		t.Fatalf("overLimit = %v", over)
	}
}

func TestAbandonedRunIsReported(t *testing.T) {
	// A regexp2 match is native code that ignores Interrupt for up to RegexpMatchTimeout.
	p, err := Compile(`/^(a+)+\1b$/.test('a'.repeat(40))`, JavaScript)
	if err != nil {
		t.Fatal(err)
	}
	res := Run(context.Background(), p, nil, Options{Timeout: 20 * time.Millisecond})
	wantFailure(t, res, KindTimeout)
	if !res.Abandoned {
		t.Fatal("the run did not report its goroutine as abandoned")
	}
	if res := runJS(t, `return 1`, nil); res.Abandoned {
		t.Fatal("a finished run reports Abandoned")
	}
}
