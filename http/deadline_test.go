package httpapi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codemode/codemode/internal/testkit"
	"github.com/codemode/codemode/session"
)

// A client that reads nothing of a large /events page has its connection
// closed once a write has waited server.write_timeout, and the server does
// not keep the page: several stalled readers cost a bounded amount of
// memory, and nothing once they are cut off.
func TestStalledReaderIsCutOffAndHoldsNoReply(t *testing.T) {
	const timeout = time.Second
	ts := newTestServer(t, "server: {write_timeout: 1s}")
	id := ts.newSession("", "")
	big := strings.Repeat("x", 256<<10)
	var events []session.Event
	for i := range 40 { // about 10 MB of log: the page stops at maxEventsPageBytes
		e, err := session.NewEvent(session.TypeUserContext, session.UserContext{Source: "t", Text: fmt.Sprint(i, big)})
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	if _, err := ts.app.Store.Append(context.Background(), id, events...); err != nil {
		t.Fatal(err)
	}
	events = nil
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // and the pools' victims
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()

	// Readers with a small receive buffer, so that the page cannot hide in
	// the sockets' buffers.
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	const readers = 8
	addr := strings.TrimPrefix(ts.url, "http://")
	start := time.Now()
	var conns []net.Conn
	for range readers {
		c, err := dialer.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /v1/sessions/%s/events HTTP/1.1\r\nHost: %s\r\n\r\n", id, addr)
		conns = append(conns, c)
	}
	// While they stall, each holds about a store page (1 MiB), an event
	// being encoded and a chunk, not its reply (8 MiB, and its events:
	// about 17 MiB each when the reply was encoded whole).
	time.Sleep(timeout / 2)
	if during := int64(heap()) - int64(before); during > readers*(5<<20) {
		t.Errorf("%d stalled readers hold %d MiB of heap", readers, during>>20)
	}
	// The server gives up on each once a write has waited the timeout.
	testkit.Eventually(t, "the stalled replies to end", func() bool {
		return strings.Count(ts.logs.String(), "route=/v1/sessions/{id}/events") >= readers
	})
	// (Generous: the machine may be busy; without a deadline they never end.)
	if elapsed := time.Since(start); elapsed > timeout+8*time.Second {
		t.Errorf("the stalled replies ended after %v, with write_timeout %v", elapsed, timeout)
	}
	if after := int64(heap()) - int64(before); after > 4<<20 {
		t.Errorf("after the stalled readers were cut off, the heap holds %d MiB more", after>>20)
	}
	// Each client finds its connection closed before the page's end.
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("reader %d: read %d bytes, then %v; want the connection cut", i, n, err)
		}
	}
}
