package gcfloor

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{0, Floor, maxPercent},
		{1 << 10, Floor, maxPercent},
		{8 << 20, Floor, 800},
		{32 << 20, Floor, 200},
		{64 << 20, Floor, 100},
		{1 << 30, Floor, 100},
	} {
		if got := Percent(c.live, c.floor); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.live, c.floor, got, c.want)
		}
	}
}

// TestStartFollowsTheLiveHeap runs in a child process, because the GC setting
// is the process's: there, Start must raise GOGC above 100 for a small heap
// and bring it back to 100 once the live heap passes the floor.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	if os.Getenv("GCFLOOR_CHILD") == "" {
		child(t, "TestStartFollowsTheLiveHeap")
		return
	}
	if !Start() {
		t.Fatal("Start declined without GOGC in the environment")
	}
	if p := percentNow(); p <= 100 {
		t.Fatalf("GOGC with a small heap = %d, want > 100", p)
	}
	big := make([][]byte, 0, 96)
	for range 96 {
		big = append(big, make([]byte, 1<<20)) // live: 96 MiB > Floor
	}
	collect(t)
	if p := percentNow(); p != 100 {
		t.Errorf("GOGC with a live heap of 96 MiB = %d, want 100", p)
	}
	runtime.KeepAlive(big)
	big = nil
	collect(t)
	if p := percentNow(); p <= 100 {
		t.Errorf("GOGC after the heap shrank = %d, want > 100", p)
	}
}

// TestStartWithTakesItsFloor: in a child process, StartWith(8 MiB) brings GOGC
// to 100 once the live heap passes 8 MiB, where Floor would keep it above.
func TestStartWithTakesItsFloor(t *testing.T) {
	if os.Getenv("GCFLOOR_CHILD") == "" {
		child(t, "TestStartWithTakesItsFloor")
		return
	}
	if !StartWith(8 << 20) {
		t.Fatal("StartWith declined without GOGC in the environment")
	}
	big := make([][]byte, 0, 16)
	for range 16 {
		big = append(big, make([]byte, 1<<20)) // live: 16 MiB, past 8 MiB, under Floor
	}
	collect(t)
	if p := percentNow(); p != 100 {
		t.Errorf("GOGC with a live heap of 16 MiB over a floor of 8 MiB = %d, want 100", p)
	}
	runtime.KeepAlive(big)
}

func TestStartLeavesGOGCAlone(t *testing.T) {
	t.Setenv("GOGC", "100")
	if Start() {
		t.Fatal("Start took over with GOGC set")
	}
}

// child runs the test named test in a child process without GOGC.
func child(t *testing.T, test string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), "GCFLOOR_CHILD=1")
	env := cmd.Env[:0]
	for _, kv := range cmd.Env {
		if !strings.HasPrefix(kv, "GOGC=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// collect runs a collection and waits for the floor to have seen it.
func collect(t *testing.T) {
	t.Helper()
	n := cycles.Load()
	runtime.GC()
	for deadline := time.Now().Add(10 * time.Second); cycles.Load() == n; {
		if time.Now().After(deadline) {
			t.Fatal("the floor did not see the collection")
		}
		runtime.GC() // the finalizer of the sentinel runs after the cycle that freed it
		time.Sleep(time.Millisecond)
	}
}

func percentNow() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}
