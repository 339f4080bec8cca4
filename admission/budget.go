// Package admission keeps a service-wide memory budget. Work that may
// make the service hold memory (a run, up to its memory limit; a request
// body, up to its size) reserves that much before it starts and returns it
// when it ends; what does not fit in what is left is refused at once
// rather than queued, so that a burst of runs or large requests is turned
// away with a clear error instead of taking the process, or the machine,
// past its memory. A Pool shares a number of slots (MCP sessions, event
// streams) fairly among API keys.
package admission

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/codemode/codemode/internal/bytesize"
)

// Budget is a number of bytes that reservations draw from. It is safe for
// concurrent use.
type Budget struct {
	limit int64 // immutable

	mu    sync.Mutex
	inUse int64 // guarded by mu
}

// NewBudget returns a budget of limit bytes (at least 1).
func NewBudget(limit int64) *Budget { return &Budget{limit: max(limit, 1)} }

// ExhaustedError is a reservation that does not fit.
type ExhaustedError struct {
	Want  int64 // bytes asked for
	InUse int64 // bytes reserved when it was asked
	Limit int64 // the budget
}

func (e *ExhaustedError) Error() string {
	if e.Want > e.Limit {
		return fmt.Sprintf("admission: %s do not fit a memory budget of %s at all", bytesize.Format(e.Want), bytesize.Format(e.Limit))
	}
	return fmt.Sprintf("admission: %s do not fit the memory budget: %s of %s are reserved", bytesize.Format(e.Want), bytesize.Format(e.InUse), bytesize.Format(e.Limit))
}

// Reserve takes n bytes from the budget, or fails with an *ExhaustedError
// when they do not fit what is left. On success the caller must call
// release (once; later calls do nothing) when the memory is no longer
// held. A reservation of n <= 0 always succeeds.
func (b *Budget) Reserve(n int64) (release func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.limit || b.inUse > b.limit-n {
		return nil, &ExhaustedError{Want: n, InUse: b.inUse, Limit: b.limit}
	}
	b.inUse += n
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			b.inUse -= n
			b.mu.Unlock()
		})
	}, nil
}

// Limit is the budget in bytes.
func (b *Budget) Limit() int64 { return b.limit }

// InUse is the number of bytes reserved now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inUse
}

// FallbackMemory is what MachineMemory assumes when the machine does not
// say.
const FallbackMemory = 8 << 30

// DefaultLimit is the budget of a service given none: three quarters of
// MachineMemory, leaving the rest to the process's own needs and to the
// rest of the machine.
func DefaultLimit() int64 { return MachineMemory() / 4 * 3 }

// MachineMemory is the memory this process may use: the limit of its
// control group when it has one (cgroup v2 memory.max, or v1
// memory.limit_in_bytes), else the machine's physical memory (MemTotal of
// /proc/meminfo), else FallbackMemory.
func MachineMemory() int64 {
	total, ok := memTotal("/proc/meminfo")
	if !ok {
		total = FallbackMemory
	}
	for _, f := range cgroupLimitFiles() {
		if n, ok := cgroupLimit(f); ok && n < total {
			total = n
		}
	}
	return total
}

// cgroupLimitFiles are the files that may hold this process's cgroup memory
// limit: its own cgroup v2 directory's memory.max, the unified root's, and
// the v1 memory controller's limit.
func cgroupLimitFiles() []string {
	files := []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if path, ok := strings.CutPrefix(line, "0::"); ok && path != "/" && !strings.Contains(path, "..") {
				files = append(files, "/sys/fs/cgroup"+path+"/memory.max")
			}
		}
	}
	return files
}

// cgroupLimit reads a cgroup memory limit file; "max" and the v1 "no
// limit" value (near 2^63) are no limit.
func cgroupLimit(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	s := string(bytes.TrimSpace(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0, false
	}
	return n, true
}

// memTotal reads MemTotal from a meminfo file.
func memTotal(file string) (int64, bool) {
	f, err := os.Open(file)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 || kb > 1<<50 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
