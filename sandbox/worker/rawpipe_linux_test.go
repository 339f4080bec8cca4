package worker

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
