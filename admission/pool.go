package admission

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Pool is a number of slots (MCP sessions, event streams) shared among
// tenants (API keys), so that no tenant can lock the others out.
//
// While slots are free anyone takes one: a tenant alone may use the whole
// pool. When the pool is full, a tenant's share is the pool divided evenly
// among the tenants holding slots, counting the one asking (at least one
// slot): a tenant holding less than its share takes the slot of the tenant
// most over its share (the longest unused of its idle slots, which is
// evicted), and a tenant holding its share or more is refused. So a tenant
// can never hold more than its share while another waits, and a newcomer is
// never refused while some tenant holds more than its share in idle slots.
// A slot in use (Busy) is never evicted.
//
// It is safe for concurrent use.
type Pool struct {
	name string // for messages: "server.max_mcp_sessions"
	max  int    // immutable; <= 0: no bound

	mu        sync.Mutex
	total     int                           // slots held; guarded by mu
	byTenant  map[string]map[*Slot]struct{} // guarded by mu
	evictions uint64                        // guarded by mu
	refusals  uint64                        // guarded by mu
}

// Slot is a tenant's hold on one slot of a Pool, until Release (or until
// the pool evicts it).
type Slot struct {
	pool   *Pool
	tenant string
	evict  func() // ends the holder; nil: never evicted

	// guarded by pool.mu
	busy     int
	last     time.Time
	released bool
}

// NewPool returns a pool of max slots (<= 0: no bound), named by the
// setting that bounds it.
func NewPool(name string, max int) *Pool {
	return &Pool{name: name, max: max, byTenant: map[string]map[*Slot]struct{}{}}
}

// FullError is a slot refused.
type FullError struct {
	Setting string // the setting of the pool's size
	Max     int    // the pool's size
	Held    int    // slots the tenant held
	Share   int    // the tenant's share when it asked
}

func (e *FullError) Error() string {
	if e.Held >= e.Share {
		return fmt.Sprintf("all %d are taken (%s), and this key holds %d, its share while others wait", e.Max, e.Setting, e.Held)
	}
	return fmt.Sprintf("all %d are taken (%s) and in use", e.Max, e.Setting)
}

// Take takes a slot for tenant, or fails with a *FullError. evict, when
// not nil, ends the holder: the pool calls it (in a goroutine of its own)
// when it gives the slot to another tenant, and the slot is then released.
func (p *Pool) Take(tenant string, evict func()) (*Slot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.max > 0 && p.total >= p.max {
		if err := p.makeRoom(tenant); err != nil {
			p.refusals++
			return nil, err
		}
	}
	s := &Slot{pool: p, tenant: tenant, evict: evict, last: time.Now()}
	held := p.byTenant[tenant]
	if held == nil {
		held = map[*Slot]struct{}{}
		p.byTenant[tenant] = held
	}
	held[s] = struct{}{}
	p.total++
	return s, nil
}

// Admissible reports whether Take would succeed for tenant now.
func (p *Pool) Admissible(tenant string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.max <= 0 || p.total < p.max {
		return true
	}
	return p.victim(tenant) != nil
}

// share is a tenant's share of a full pool: the pool divided among the
// tenants holding slots and tenant.
func (p *Pool) share(tenant string) int {
	n := len(p.byTenant)
	if _, ok := p.byTenant[tenant]; !ok {
		n++
	}
	return max(1, p.max/n)
}

// victim is the slot a full pool gives tenant: the longest unused idle
// slot of the tenant most over its share; nil when tenant holds its share
// or no tenant over its share has an idle slot.
func (p *Pool) victim(tenant string) *Slot {
	share := p.share(tenant)
	if len(p.byTenant[tenant]) >= share {
		return nil
	}
	tenants := make([]string, 0, len(p.byTenant))
	for t, held := range p.byTenant {
		if len(held) > share {
			tenants = append(tenants, t)
		}
	}
	// The most over its share first; ties by name, for a stable choice.
	sort.Slice(tenants, func(i, j int) bool {
		a, b := len(p.byTenant[tenants[i]]), len(p.byTenant[tenants[j]])
		return a > b || a == b && tenants[i] < tenants[j]
	})
	for _, t := range tenants {
		var oldest *Slot
		for s := range p.byTenant[t] {
			if s.busy == 0 && s.evict != nil && (oldest == nil || s.last.Before(oldest.last)) {
				oldest = s
			}
		}
		if oldest != nil {
			return oldest
		}
	}
	return nil
}

// makeRoom evicts the victim for tenant, or says why there is none.
func (p *Pool) makeRoom(tenant string) error {
	v := p.victim(tenant)
	if v == nil {
		return &FullError{Setting: p.name, Max: p.max, Held: len(p.byTenant[tenant]), Share: p.share(tenant)}
	}
	p.release(v)
	p.evictions++
	go v.evict()
	return nil
}

// Release gives the slot back. Later calls, and calls after the pool
// evicted it, do nothing.
func (s *Slot) Release() {
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	s.pool.release(s)
}

func (p *Pool) release(s *Slot) {
	if s.released {
		return
	}
	s.released = true
	p.total--
	held := p.byTenant[s.tenant]
	delete(held, s)
	if len(held) == 0 {
		delete(p.byTenant, s.tenant)
	}
}

// Busy marks the slot in use, so that it is not evicted, until done is
// called (once; later calls do nothing).
func (s *Slot) Busy() (done func()) {
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	s.busy++
	s.last = time.Now()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.pool.mu.Lock()
			defer s.pool.mu.Unlock()
			s.busy--
			s.last = time.Now()
		})
	}
}

// PoolStats is what a pool holds.
type PoolStats struct {
	Max       int            // the pool's size; <= 0: no bound
	Held      map[string]int // slots held, by tenant
	Share     int            // each holding tenant's share of the pool when it is full
	Evictions uint64         // slots given from one tenant to another
	Refusals  uint64         // slots refused
}

// Stats reports what the pool holds now.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := PoolStats{Max: p.max, Held: make(map[string]int, len(p.byTenant)), Evictions: p.evictions, Refusals: p.refusals}
	for t, held := range p.byTenant {
		st.Held[t] = len(held)
	}
	if p.max > 0 {
		st.Share = max(1, p.max/max(1, len(p.byTenant)))
	}
	return st
}
