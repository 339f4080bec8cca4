package admission

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestPoolShares: a tenant alone may take the whole pool; a second tenant
// then takes the first's idle slots, oldest first, up to half the pool;
// past its share each is refused; a slot in use is never evicted.
func TestPoolShares(t *testing.T) {
	p := NewPool("server.max_things", 8)
	var evicted atomic.Int32
	gone := make(chan *Slot, 8)
	var a []*Slot
	for range 8 {
		var s *Slot
		s, err := p.Take("a", func() { evicted.Add(1); gone <- s })
		if err != nil {
			t.Fatal(err)
		}
		a = append(a, s)
	}
	if _, err := p.Take("a", nil); err == nil {
		t.Fatal("a ninth slot of eight")
	}
	busy := a[0].Busy() // the oldest is in use: not evicted
	for i := range 4 {
		if _, err := p.Take("b", nil); err != nil {
			t.Fatalf("b's slot %d: %v", i, err)
		}
	}
	var fe *FullError
	if _, err := p.Take("b", nil); !errors.As(err, &fe) || fe.Held != 4 || fe.Share != 4 {
		t.Fatalf("b past its share: %v", err)
	}
	if _, err := p.Take("a", nil); err == nil {
		t.Fatal("a took a slot back while at its share")
	}
	for range 4 {
		s := <-gone
		if s == a[0] {
			t.Fatal("a slot in use was evicted")
		}
	}
	busy()
	st := p.Stats()
	if st.Held["a"] != 4 || st.Held["b"] != 4 || st.Share != 4 || st.Evictions != 4 || st.Refusals != 3 {
		t.Fatalf("stats %+v", st)
	}
	// A third tenant's share is 8/3 = 2: it takes two, from the first two.
	for range 2 {
		if !p.Admissible("c") {
			t.Fatal("c not admissible")
		}
		if _, err := p.Take("c", nil); err != nil {
			t.Fatal(err)
		}
	}
	if p.Admissible("c") {
		t.Fatal("c admissible past its share")
	}
	// A slot without an evict func is never taken: b's are all such.
	for _, s := range a[1:] {
		s.Release()
	}
	a[0].Release()
	a[0].Release() // twice: nothing
	if st := p.Stats(); st.Held["a"] != 0 || st.Held["b"]+st.Held["c"] != p.total {
		t.Fatalf("after releases %+v", st)
	}
}

// TestPoolConcurrent: tenants racing for a pool never hold more than its
// size between them, and every slot comes back.
func TestPoolConcurrent(t *testing.T) {
	const size = 16
	p := NewPool("server.max_things", size)
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			tenant := fmt.Sprint("t", g%4)
			for range 200 {
				s, err := p.Take(tenant, func() {})
				if err != nil {
					continue
				}
				done := s.Busy()
				held := 0
				for _, n := range p.Stats().Held {
					held += n
				}
				if held > size {
					t.Errorf("%d slots held of %d", held, size)
				}
				done()
				s.Release()
			}
		})
	}
	wg.Wait()
	if st := p.Stats(); len(st.Held) != 0 {
		t.Fatalf("after every release: %+v", st)
	}
}
