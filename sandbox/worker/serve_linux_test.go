package worker

import (
	"runtime"
	"syscall"
	"testing"
)

// offMainThread runs its function on a goroutine that is not locked to the caller's thread:
// init runs locked to the main thread, and a protocol reader that stayed there would move
// the P between two threads on every frame.
func TestOffMainThreadLeavesTheLockedThread(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		locked := syscall.Gettid()
		offMainThread(func() int {
			// Park and wake a few times: an unlocked goroutine never runs on a locked thread.
			for range 10 {
				ch := make(chan struct{})
				go func() { close(ch) }()
				<-ch
				if syscall.Gettid() == locked {
					t.Error("the function ran on the caller's locked thread")
					return 0
				}
			}
			return 0
		})
	}()
	<-done
}
