//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts a stdio server in its own process group: a
// terminal's Ctrl-C reaches codemode, which then stops its upstreams in
// order, and stopping one reaches the processes it started (npx and the
// node it runs).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends SIGTERM (or SIGKILL) to a started command's process
// group.
func signalGroup(cmd *exec.Cmd, kill bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		_ = cmd.Process.Signal(sig)
	}
}
