//go:build unix

package mcp

import (
	"syscall"
	"testing"
)

// stopProcess stops pid (SIGSTOP): it neither reads nor answers until
// resume is called, or it is killed, which the upstream's restart does.
func stopProcess(t *testing.T, pid int) (resume func()) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
}
