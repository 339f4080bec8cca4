package worker

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A pipe crosses whole, in both directions past its kernel buffer (so both sides park on
// the poller), ends in io.EOF, and a write to a pipe nobody reads fails with EPIPE; a file
// the poller does not serve is used as it is.
func TestRawPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rr, rw := rawPipe(r), rawPipe(w)
	if _, ok := rr.(*rawConn); !ok {
		t.Fatalf("rawPipe of a pipe is a %T", rr)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: sixteen pipe buffers
	done := make(chan error, 1)
	go func() {
		_, err := rw.Write(want)
		w.Close()
		done <- err
	}()
	got, err := io.ReadAll(rr)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want %d", len(got), err, len(want))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, err := rr.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("read after the end = %d, %v; want io.EOF", n, err)
	}

	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r2.Close()
	defer w2.Close()
	if _, err := rawPipe(w2).Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("write to a closed pipe: %v, want EPIPE", err)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p := rawPipe(f); p != io.ReadWriter(f) {
		t.Fatalf("rawPipe of a regular file is a %T, want the file", p)
	}
}

// A frame costs no allocation in rawPipe itself.
func TestRawPipeDoesNotAllocate(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rr, rw := rawPipe(r), rawPipe(w)
	msg, buf := []byte("frame"), make([]byte, 16)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := rw.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := rr.Read(buf); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per write and read", n)
	}
}

// A reader that awaits a frame spins for it, yielding to the goroutines of its process: with
// one P, the writer runs only if the spin lets it, and the spin then catches the frame.
// Without the writer the spin gives up after spinFor and the read parks, still getting what
// comes later; the reads after an empty spin park at once, and one spin that catches a frame
// (or spinAfresh) ends that backoff. A reader not awaiting anything never spins, and stops
// spinning when it no longer is.
func TestRawPipeSpins(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rr := rawPipe(r).(*rawConn)
	var awaiting atomic.Bool
	awaiting.Store(true)
	afresh := spinOn(rr, awaiting.Load)
	buf := make([]byte, 8)
	read := func(want string) {
		t.Helper()
		if n, err := rr.Read(buf); err != nil || string(buf[:n]) != want {
			t.Fatalf("read %q, %v; want %q", buf[:n], err, want)
		}
	}
	writeSoon := func(s string) { go w.Write([]byte(s)) }
	writeLater := func(s string) { time.AfterFunc(20*time.Millisecond, func() { w.Write([]byte(s)) }) }
	want := func(caught, empty, skip int) {
		t.Helper()
		if rr.spins.caught != caught || rr.spins.empty != empty || rr.skip != skip {
			t.Fatalf("spins caught %d, empty %d, skip %d; want %d, %d, %d", rr.spins.caught, rr.spins.empty, rr.skip, caught, empty, skip)
		}
	}

	writeSoon("a")
	read("a")
	want(1, 0, 0)

	writeLater("b") // the spin gives up; the read parks and gets it
	read("b")
	want(1, 1, 1)
	writeLater("c") // parks at once
	read("c")
	want(1, 1, 0)
	writeLater("d") // spins again, in vain: the backoff doubles
	read("d")
	want(1, 2, 3)
	writeSoon("e") // parks at once
	read("e")
	want(1, 2, 2)
	afresh()
	want(1, 2, 0)
	writeSoon("f")
	read("f")
	want(2, 2, 0)

	awaiting.Store(false)
	writeLater("g")
	read("g")
	want(2, 2, 0)

	awaiting.Store(true) // a spin ends, in no backoff, when there is nothing more to await
	go awaiting.Store(false)
	writeLater("h")
	read("h")
	want(2, 2, 0)

	awaiting.Store(true) // the end of the pipe ends a spinning read
	go w.Close()
	if n, err := rr.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("read of a closed pipe = %d, %v; want io.EOF", n, err)
	}
	want(3, 2, 0)
}
