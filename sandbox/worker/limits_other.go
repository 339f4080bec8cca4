//go:build !linux

package worker

import (
	"errors"
	"runtime"
)

// setDataLimit is unavailable here: outside Linux, RLIMIT_DATA does not count the anonymous
// mappings Go's heap lives in, so it would cap nothing. The soft limit and the heap watchdog
// remain.
func setDataLimit(int64) error {
	return errors.New("no hard memory cap on " + runtime.GOOS)
}
