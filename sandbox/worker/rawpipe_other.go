//go:build !linux

package worker

import (
	"io"
	"os"
)

// rawPipe is the file itself off Linux.
func rawPipe(f *os.File) io.ReadWriter { return f }

// spinOn does nothing off Linux: reads park at once.
func spinOn(io.Reader, func() bool) (restart func()) { return func() {} }

// keepMonitorAwake has nothing to do where the pipes' system calls wake the monitor.
func keepMonitorAwake() (stop func()) { return func() {} }
