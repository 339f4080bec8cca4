package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// gate is a commit function that records its batches and blocks each one
// until released.
type gate struct {
	mu      sync.Mutex
	batches [][]*Pending
	fail    error         // the next batch fails with it
	entered chan struct{} // a batch began
	release chan struct{} // lets one batch finish
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 100), release: make(chan struct{}, 100)}
}

func (g *gate) commit(batch []*Pending) error {
	g.entered <- struct{}{}
	<-g.release
	g.mu.Lock()
	defer g.mu.Unlock()
	g.batches = append(g.batches, batch)
	for i, q := range batch {
		q.Base = int64(i) // the gate numbers each batch from 1
	}
	err := g.fail
	g.fail = nil
	return err
}

func (g *gate) sizes() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []int
	for _, b := range g.batches {
		out = append(out, len(b))
	}
	return out
}

func event(text string) Event {
	data, _ := json.Marshal(UserContext{Source: "t", Text: text})
	return Event{Type: TypeUserContext, Data: data}
}

// write is a write of one event carrying text to session id.
func write(id, text string) Write {
	return Write{SessionID: id, Events: []Event{event(text)}}
}

// gated returns a committer on a new gate, its limits set by limit (when
// not nil), with a first write submitted and held by the gate.
func gated(limit func(*Committer)) (*gate, *Committer, *Ticket) {
	g := newGate()
	c := NewCommitter(g.commit, func([]*Pending) {})
	if limit != nil {
		c.mu.Lock()
		limit(c)
		c.mu.Unlock()
	}
	first := c.Submit(context.Background(), write("s", "first"))
	<-g.entered // the writer holds the first write alone
	return g, c, first
}

// held returns a committer on commit, with done its observer, whose first
// batch (a write to session "first") commit enters and is held in until
// release is called.
func held(commit func([]*Pending) error, done func([]*Pending)) (c *Committer, first *Ticket, release func()) {
	hold, entered := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c = NewCommitter(func(batch []*Pending) error {
		once.Do(func() { close(entered); <-hold })
		return commit(batch)
	}, done)
	first = c.Submit(context.Background(), write("first", "x"))
	<-entered
	return c, first, func() { close(hold) }
}

// submitEach submits a write to each of ids in turn.
func submitEach(c *Committer, ids []string) []*Ticket {
	var tickets []*Ticket
	for _, id := range ids {
		tickets = append(tickets, c.Submit(context.Background(), write(id, "x")))
	}
	return tickets
}

// waitAll waits for each ticket, failing the test on an error.
func waitAll(t *testing.T, tickets ...*Ticket) {
	t.Helper()
	for _, tk := range tickets {
		if _, err := tk.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCommitterBatches(t *testing.T) {
	g, c, first := gated(nil)
	ctx := context.Background()
	var burst []*Ticket
	for i := 0; i < maxBatchWrites+10; i++ {
		burst = append(burst, c.Submit(ctx, write("s", "x")))
	}
	for i := 0; i < 3; i++ {
		g.release <- struct{}{}
	}
	waitAll(t, append([]*Ticket{first}, burst...)...)
	if got := g.sizes(); len(got) != 3 || got[0] != 1 || got[1] != maxBatchWrites || got[2] != 10 {
		t.Fatalf("batch sizes %v, want [1 %d 10]", got, maxBatchWrites)
	}
	c.Close()
}

func TestCommitterBatchBytes(t *testing.T) {
	const bound = 30000
	g, c, first := gated(func(c *Committer) { c.maxBatch = bound })
	ctx := context.Background()
	big := func() Write {
		return write("s", strings.Repeat("x", bound/3))
	}
	huge := write("s", strings.Repeat("y", bound+1))
	tickets := []*Ticket{first, c.Submit(ctx, big()), c.Submit(ctx, big()), c.Submit(ctx, big()), c.Submit(ctx, huge), c.Submit(ctx, big())}
	for i := 0; i < 5; i++ {
		g.release <- struct{}{}
	}
	waitAll(t, tickets...)
	// Two thirds of the bound fit together; a write beyond it commits alone.
	if got := g.sizes(); len(got) != 5 || got[0] != 1 || got[1] != 2 || got[2] != 1 || got[3] != 1 || got[4] != 1 {
		t.Fatalf("batch sizes %v, want [1 2 1 1 1]", got)
	}
	c.Close()
}

// A batch whose transaction fails for the store (ErrUnavailable) fails
// every write in it, with its error; the next batch commits.
func TestCommitterBatchFailure(t *testing.T) {
	g, c, first := gated(nil)
	ctx := context.Background()
	var failing []*Ticket
	for i := 0; i < 5; i++ {
		failing = append(failing, c.Submit(ctx, write("s", "x")))
	}
	g.release <- struct{}{} // the first commits
	<-g.entered
	g.mu.Lock()
	g.fail = Unavailable(errors.New("disk full"))
	g.mu.Unlock()
	g.release <- struct{}{}
	for _, tk := range failing {
		if _, err := tk.Wait(ctx); err == nil || err.Error() != "disk full" || !errors.Is(err, ErrUnavailable) {
			t.Fatalf("a write of a failed batch: err = %v", err)
		}
	}
	if got, err := first.Wait(ctx); err != nil || got[0].Seq != 1 {
		t.Fatalf("first = %+v, %v", got, err)
	}
	if err := c.WriteErr(); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("after a failed batch, writeErr = %v", err)
	}
	c.failMu.Lock()
	c.failureAt = c.failureAt.Add(-writeFailureWindow)
	c.failMu.Unlock()
	if err := c.WriteErr(); err != nil {
		t.Fatalf("a failure older than the window still reported: %v", err)
	}
	c.setFailure(Unavailable(errors.New("disk full")))
	after := c.Submit(ctx, write("s", "after"))
	g.release <- struct{}{}
	if _, err := after.Wait(ctx); err != nil {
		t.Fatalf("the batch after a failed one: %v", err)
	}
	if err := c.WriteErr(); err != nil {
		t.Fatalf("a batch committed after the failure, yet writeErr = %v", err)
	}
	if st := c.Stats(); st.Commits != 2 || st.Failed != 1 || st.Writes != 7 || st.Events != 2 || st.Busy <= 0 || st.Queued != 0 {
		t.Fatalf("stats %+v", st)
	}
	c.Close()
}

// A batch the database refuses for one write's data is committed write by
// write: only that write fails, with ErrRefused and its session named; its
// neighbours commit, in order.
func TestCommitterRefusedBatch(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	commit := func(batch []*Pending) error {
		mu.Lock()
		sizes = append(sizes, len(batch))
		mu.Unlock()
		for i, q := range batch {
			if q.SessionID == "bad" {
				return errors.New("invalid byte sequence")
			}
			q.Base = int64(i)
		}
		return nil
	}
	var committed []string
	c, first, release := held(commit, func(b []*Pending) {
		for _, q := range b {
			committed = append(committed, q.SessionID)
		}
	})
	ids := []string{"a", "b", "bad", "c", "d"}
	tickets := submitEach(c, ids)
	release()
	waitAll(t, first)
	for i, tk := range tickets {
		_, err := tk.Wait(context.Background())
		if ids[i] == "bad" {
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `"bad"`) || !strings.Contains(err.Error(), "invalid byte sequence") {
				t.Fatalf("the refused write: err = %v", err)
			}
		} else if err != nil {
			t.Fatalf("write to %s, a neighbour of the refused one: %v", ids[i], err)
		}
	}
	c.Close()
	// The first alone, the five refused together, then each alone.
	if got := fmt.Sprint(sizes); got != "[1 5 1 1 1 1 1]" {
		t.Fatalf("batch sizes %s", got)
	}
	if got := strings.Join(committed, ","); got != "first,a,b,c,d" {
		t.Fatalf("committed %s", got)
	}
	if st := c.Stats(); st.Commits != 5 || st.Failed != 2 || st.Writes != 6 {
		t.Fatalf("stats %+v", st)
	}
}

// When the store fails while a refused batch is committed write by write,
// the writes left fail with that failure, untried.
func TestCommitterRefusedBatchThenStoreDown(t *testing.T) {
	var tried []string
	down := Unavailable(errors.New("connection refused"))
	commit := func(batch []*Pending) error {
		if len(batch) > 1 {
			return errors.New("invalid byte sequence")
		}
		tried = append(tried, batch[0].SessionID)
		if batch[0].SessionID == "b" {
			return down
		}
		return nil
	}
	c, first, release := held(commit, func([]*Pending) {})
	ids := []string{"a", "b", "c", "d"}
	tickets := submitEach(c, ids)
	release()
	waitAll(t, first)
	for i, tk := range tickets {
		_, err := tk.Wait(context.Background())
		if (ids[i] == "a") != (err == nil) || err != nil && !errors.Is(err, ErrUnavailable) {
			t.Fatalf("write to %s: %v", ids[i], err)
		}
	}
	c.Close()
	if got := strings.Join(tried, ","); got != "first,a,b" {
		t.Fatalf("committed alone: %s, want first,a,b", got)
	}
	if c.WriteErr() == nil {
		t.Fatal("the store failed last, yet writeErr is nil")
	}
}

// Submit waits for room when too much is queued, bounded by its context.
func TestCommitterBackpressure(t *testing.T) {
	g, c, _ := gated(func(c *Committer) { c.maxQueued = 1000 })
	ctx := context.Background()
	queued := c.Submit(ctx, write("s", strings.Repeat("x", 900)))
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := c.Submit(short, write("s", strings.Repeat("y", 900))).Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Submit into a full queue: err = %v, want DeadlineExceeded", err)
	}
	waiting := make(chan *Ticket)
	go func() {
		waiting <- c.Submit(ctx, write("s", strings.Repeat("z", 900)))
	}()
	g.release <- struct{}{} // the writer takes the queued write: room again
	tk := <-waiting
	g.release <- struct{}{}
	g.release <- struct{}{}
	waitAll(t, queued, tk)
	c.Close()
}

// Close commits what is queued; later submits fail with ErrClosed.
func TestCommitterClose(t *testing.T) {
	g, c, first := gated(nil)
	ctx := context.Background()
	second := c.Submit(ctx, write("s", "second"))
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	g.release <- struct{}{}
	g.release <- struct{}{}
	<-closed
	waitAll(t, first, second)
	if _, err := c.Submit(ctx, write("s", "late")).Wait(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("submit after close: %v", err)
	}
}
