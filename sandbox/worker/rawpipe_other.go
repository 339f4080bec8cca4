//go:build !linux

package worker

import (
	"io"
	"os"
)

// rawPipe is the file itself off Linux.
func rawPipe(f *os.File) io.ReadWriter { return f }

// keepMonitorAwake has nothing to do where the pipes' system calls wake the monitor.
func keepMonitorAwake() (stop func()) { return func() {} }
