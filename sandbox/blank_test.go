package sandbox

import (
	"strconv"
	"testing"
	"time"
)

// Runs set up ahead serve one run each and start their clocks with the run: after many runs
// that change what they can, through runtimes made ahead and runtimes made on the spot, each
// run sees pristine globals, and performance.now counts from its own start, not from when its
// runtime was made.
func TestRunsSetUpAheadServeOneRunEach(t *testing.T) {
	takeBlank() // start filling
	for deadline := time.Now().Add(5 * time.Second); len(blanks) < cap(blanks) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if len(blanks) == 0 {
		t.Fatal("no run was set up ahead")
	}
	time.Sleep(200 * time.Millisecond) // the runs made ahead age
	for i := range 2 * blankRuns {
		res := runJS(t, `
			const fresh = [typeof mark === "undefined", ({}).polluted === undefined, [].push === Array.prototype.push && typeof [].push === "function", typeof console.log]
			globalThis.mark = 1; Object.prototype.polluted = 1; Array.prototype.push = null; console.log = null
			return [...fresh, performance.now() < 150]`, nil)
		wantValue(t, res, `[true,true,true,"function",true]`)
		if t.Failed() {
			t.Fatalf("run %s", strconv.Itoa(i+1))
		}
	}
}

// The guards every program gets are in a runtime set up ahead, and a program's own are
// added to it: an oversized repeat fails the run, a plain one does not.
func TestRunsSetUpAheadKeepTheirGuards(t *testing.T) {
	for range 2 * blankRuns {
		res := runJS(t, `return [1, 2].join("-") + "x".repeat(3)`, nil)
		wantValue(t, res, `"1-2xxx"`)
		res = runLang(t, `return "x".repeat(1 << 30).length`, JavaScript, nil, Options{Memory: 64 << 20})
		if res.Err == nil || res.Err.Kind != KindLimit {
			t.Fatalf("a guarded repeat in a run set up ahead: %+v", res.Err)
		}
	}
}
