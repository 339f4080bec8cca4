package worker

import "syscall"

// setDataLimit caps the process's data segment: RLIMIT_DATA, which since Linux 4.7 counts
// every private writable mapping. That is the memory Go actually maps for its heap and stacks,
// and not the address space it only reserves (mapped PROT_NONE: over 1 GiB in an idle Go
// process, which is why RLIMIT_AS would be no cap at all). Past it, the Go runtime cannot grow
// its heap and the process dies with "fatal error: out of memory", which the pool reports as
// the run exceeding its memory limit.
func setDataLimit(n int64) error {
	lim := uint64(n)
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: lim, Max: lim})
}
