//go:build !unix

package worker

import (
	"os"
	"os/exec"
)

func setProcAttr(*exec.Cmd) {}

func killedBySignal(error) bool { return false }

func protocolFiles() (in, out *os.File) { return os.Stdin, os.Stdout }
