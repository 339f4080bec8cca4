//go:build unix

package worker

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setProcAttr puts a worker in its own process group, so that a terminal's Ctrl-C, sent to
// the foreground group, stops the server (which then closes its pool) rather than killing
// the workers under runs in progress. A worker whose parent dies sees its stdin end and
// exits.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killedBySignal reports whether a process ended by SIGKILL.
func killedBySignal(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// protocolFiles returns the pipes of the protocol (the process's stdin and stdout, duplicated)
// in non-blocking mode, so that Go's network poller serves them: a goroutine waiting for a
// frame then parks instead of holding a thread in read(2), and the goroutine it wakes runs on
// the same thread rather than on one that must be woken, which costs hundreds of microseconds
// per hop on some virtual machines. The duplicates keep the pipes open whatever becomes of
// os.Stdin and os.Stdout, whose variables the caller points elsewhere. (The pool's ends of
// the pipes are a different file description, unaffected.) It falls back to blocking stdin
// and stdout.
func protocolFiles() (in, out *os.File) {
	dup := func(fd int, name string) *os.File {
		nfd, err := syscall.Dup(fd)
		if err != nil {
			return nil
		}
		syscall.CloseOnExec(nfd)
		if err := syscall.SetNonblock(nfd, true); err != nil {
			syscall.Close(nfd)
			return nil
		}
		return os.NewFile(uintptr(nfd), name)
	}
	in, out = dup(0, "protocol-in"), dup(1, "protocol-out")
	if in == nil || out == nil {
		return os.Stdin, os.Stdout
	}
	return in, out
}
