package worker

import (
	"sync"

	"github.com/codemode/codemode/sandbox"
)

// pendingCalls is one run's tool calls awaiting their settlement, by sequence number, on
// either end of the protocol: the pool's (a settle frame to send) and the worker's (a settle
// frame to deliver). Each call settles at most once; the zero value is ready to use.
type pendingCalls struct {
	mu     sync.Mutex
	settle map[int]func(sandbox.Settlement) // guarded by mu
}

// add records seq's settle function.
func (p *pendingCalls) add(seq int, settle func(sandbox.Settlement)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.settle == nil {
		p.settle = make(map[int]func(sandbox.Settlement))
	}
	p.settle[seq] = settle
}

// resolve settles seq with s, outside the lock; a call settled already, or never added, is
// left alone.
func (p *pendingCalls) resolve(seq int, s sandbox.Settlement) {
	p.mu.Lock()
	settle := p.settle[seq]
	delete(p.settle, seq)
	p.mu.Unlock()
	if settle != nil {
		settle(s)
	}
}

// count is how many calls are pending.
func (p *pendingCalls) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.settle)
}
