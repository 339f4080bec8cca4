package sandboxtest

import (
	"context"
	"sync"
	"time"

	"github.com/codemode/codemode/sandbox"
)

// HoldingHost is a sandbox.Holder with one tool, t. It keeps every call until
// Release, then runs each with Handle: the one released alone on the
// releasing goroutine, with the stop context Release was given; the others on
// goroutines of their own. It records whether each call ran inline and when
// it started. A call before Hold panics: the runner must hold first.
type HoldingHost struct {
	Handle func(ctx context.Context, c sandbox.Call, settle func(sandbox.Settlement))

	mu      sync.Mutex
	holding bool
	held    []func(context.Context)
	inline  []bool      // whether each call ran inline
	started []time.Time // when each call started
}

var _ sandbox.Holder = (*HoldingHost)(nil)

func (h *HoldingHost) Has(string) bool { return true }
func (h *HoldingHost) Names() []string { return []string{"t"} }
func (h *HoldingHost) Hold()           { h.mu.Lock(); h.holding = true; h.mu.Unlock() }

func (h *HoldingHost) Call(c sandbox.Call, settle func(sandbox.Settlement)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		panic("a call before Hold")
	}
	h.held = append(h.held, func(ctx context.Context) { h.Handle(ctx, c, settle) })
}

func (h *HoldingHost) Release(alone bool, stop context.Context) bool {
	h.mu.Lock()
	held := h.held
	h.held = nil
	inline := alone && len(held) == 1
	for range held {
		h.inline = append(h.inline, inline)
		h.started = append(h.started, time.Now())
	}
	h.mu.Unlock()
	if inline {
		held[0](stop)
		return true
	}
	for _, run := range held {
		go run(context.Background())
	}
	return false
}

// Record returns whether each call released so far ran inline, and when it
// started.
func (h *HoldingHost) Record() (inline []bool, started []time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bool(nil), h.inline...), append([]time.Time(nil), h.started...)
}

// Echo settles a call with its arguments.
func Echo(_ context.Context, c sandbox.Call, settle func(sandbox.Settlement)) {
	settle(sandbox.Settlement{Value: c.Args})
}
