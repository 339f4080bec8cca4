package worker

import (
	"io"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// rawPipe reads and writes a non-blocking pipe that Go's network poller serves with raw
// system calls: a read or write on such a pipe never blocks (it fails with EAGAIN, and the
// goroutine parks on the poller until the pipe is ready), so it need not tell the scheduler
// it is in a system call. That telling is what costs: a process whose only P was idle wakes
// its sleeping monitor thread on every system call it enters, and on a virtual machine each
// such wake-up is a context switch of tens of microseconds, several per tool call. A file
// the poller does not serve is used as it is.
func rawPipe(f *os.File) io.ReadWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	// A file the poller does not serve runs the function once with a blocking fd: probe.
	pollable := true
	if err := rc.Control(func(fd uintptr) {
		flags, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		pollable = e == 0 && flags&syscall.O_NONBLOCK != 0
	}); err != nil || !pollable {
		return f
	}
	return newRawConn(rc)
}

// rawConn is one side of a pipe: one goroutine reads it at a time and one writes it at a
// time (the frame reader and the frame writer's lock see to that). The functions handed to
// the poller are bound once, with their operands in the struct, so that a frame costs no
// allocation.
type rawConn struct {
	rc syscall.RawConn

	rbuf   []byte
	rn     int
	rerrno syscall.Errno
	rgot   bool // tryFn read something, or failed
	readFn func(fd uintptr) bool
	tryFn  func(fd uintptr)

	// spin, when set, is asked each time a read finds nothing buffered: whether the reader
	// should retry an empty pipe for a while before parking on the poller. See spinRead.
	spin    func() bool
	backoff int // reads to park at once after the last spin that came up empty
	skip    int // of those, still to go
	spins   struct{ caught, empty int }

	wbuf    []byte
	wn      int
	werrno  syscall.Errno
	writeFn func(fd uintptr) bool
}

func newRawConn(rc syscall.RawConn) *rawConn {
	c := &rawConn{rc: rc}
	c.readFn, c.writeFn, c.tryFn = c.read, c.write, c.try
	return c
}

func (c *rawConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.rbuf, c.rn, c.rerrno = b, 0, 0
	var err error
	if !c.spinRead() {
		err = c.rc.Read(c.readFn)
	}
	n, errno := c.rn, c.rerrno
	c.rbuf = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: "pipe", Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is one attempt: false parks the reader until the pipe is readable.
func (c *rawConn) read(fd uintptr) bool {
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rbuf[0])), uintptr(len(c.rbuf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.rn, c.rerrno = int(r), e
		return true
	}
}

// Spinning. Waking a process that sleeps on the poller, and putting it to sleep again, is
// most of what a frame's round trip between processes costs on a virtual machine: the
// writer's system call wakes a halted CPU, the reader's thread is switched out and back in,
// and in a process with idle Ps the scheduler wakes a second thread besides. A reader that
// expects a frame soon (either side, while a run is in progress and few runs share the CPUs:
// Options.SpinRuns) retries the empty pipe instead, for up to spinFor, calling
// runtime.Gosched between attempts so that every other goroutine of its process runs first.
// It does not yield its CPU to other threads (sched_yield there measured slower: it hands
// the CPU to the scheduler's own spinning threads); the kernel preempts it as it would any
// running thread, and the spin is short and rarely repeated when it fails: each spin that
// comes up empty doubles the number of reads that then park at once (up to maxSpinBackoff),
// so that when the answers are slow (a tool that takes milliseconds, a program that
// computes, a CPU the other side must share) spinning costs next to nothing; one that
// catches a frame ends the backoff.
const (
	spinFor        = 50 * time.Microsecond
	maxSpinBackoff = 64
)

// spinOn makes the reads of r, when it is a raw pipe, spin while awaiting reports true, and
// returns the function that clears the backoff, for the reader to call between runs (slow
// answers in one run say nothing of the next). awaiting runs on the reader's goroutine, and
// so must restart.
func spinOn(r io.Reader, awaiting func() bool) (restart func()) {
	c, ok := r.(*rawConn)
	if !ok {
		return func() {}
	}
	c.spin = awaiting
	return func() { c.backoff, c.skip = 0, 0 }
}

// spinRead is one read of an empty pipe that spins before the caller parks, when c.spin
// asks for it and no backoff is due, for as long as c.spin goes on asking for it, up to
// spinFor. It reports whether it read (or failed); false means the caller parks.
func (c *rawConn) spinRead() bool {
	if c.spin == nil || !c.spin() {
		return false
	}
	if c.skip > 0 {
		c.skip--
		return false
	}
	var deadline time.Time
	for tries := 0; ; tries++ {
		if c.rc.Control(c.tryFn) != nil {
			return false // closed: the read reports it
		}
		switch {
		case c.rgot && tries > 0:
			c.spins.caught++
			c.backoff = 0
			return true
		case c.rgot:
			return true // nothing was waited for: the backoff stands
		case !c.spin():
			return false // nothing to wait for any more (the run ended): park
		case tries == 0:
			deadline = time.Now().Add(spinFor)
		case time.Now().After(deadline):
			c.spins.empty++
			c.backoff = min(2*c.backoff+1, maxSpinBackoff)
			c.skip = c.backoff
			return false
		}
		runtime.Gosched()
	}
}

// try is one read attempt that never parks: rgot says whether it read (or failed).
func (c *rawConn) try(fd uintptr) { c.rgot = c.read(fd) }

func (c *rawConn) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.wbuf, c.wn, c.werrno = b, 0, 0
	err := c.rc.Write(c.writeFn)
	n, errno := c.wn, c.werrno
	c.wbuf = nil
	if err == nil && errno != 0 {
		err = &os.PathError{Op: "write", Path: "pipe", Err: errno}
	}
	return n, err
}

// write writes what it can: false parks the writer until the pipe is writable.
func (c *rawConn) write(fd uintptr) bool {
	for c.wn < len(c.wbuf) {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.wbuf[c.wn])), uintptr(len(c.wbuf)-c.wn))
		switch e {
		case 0:
			c.wn += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.werrno = e
			return true
		}
	}
	return true
}

// monitorPeriod bounds how long the Go runtime's monitor thread (sysmon) sleeps during a
// run. The monitor preempts a goroutine that holds the worker's one P too long and polls
// the pipes when nothing else does: that is how a program in a tight loop has its cancel
// frame read, and its timers run. While every P is idle it sleeps until the next timer is
// due, and only a system call, or a stop of the world, wakes it sooner; the pipes' raw
// system calls (rawPipe) do not.
const monitorPeriod = 10 * time.Millisecond

// keepMonitorAwake wakes the monitor (with a system call the scheduler sees) and keeps a
// timer due within monitorPeriod, so that its sleeps stay that short, until stop is called.
func keepMonitorAwake() (stop func()) {
	syscall.Syscall(syscall.SYS_GETPPID, 0, 0, 0)
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	mu.Lock() // t is set before the first tick reads it
	t = time.AfterFunc(monitorPeriod, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			t.Reset(monitorPeriod)
		}
	})
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}
