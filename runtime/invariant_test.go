package runtime

import (
	"fmt"
	"sync"
	"testing"
)

// checker is the runtime's invariant, mounted on every runtime the
// tests build: per execution, stages begin in pipeline order (the body may
// repeat under a retry wrapper), and every stage sees the same token and the
// same frozen arguments.
type checker struct {
	t  testing.TB
	mu sync.Mutex
	// per token
	last map[Token]Stage
	args map[Token]string
	seen map[Token]map[Stage]int
}

func newChecker(t testing.TB) *checker {
	return &checker{t: t, last: map[Token]Stage{}, args: map[Token]string{}, seen: map[Token]map[Stage]int{}}
}

func (c *checker) trace(s Stage, call Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if call.Token.IsZero() {
		c.t.Errorf("stage %s ran with a zero token", s)
		return
	}
	seen := c.seen[call.Token]
	if seen == nil {
		seen = map[Stage]int{}
		c.seen[call.Token] = seen
		if s != StageIdentity {
			c.t.Errorf("first stage of %s is %s, want identity", call.CallID, s)
		}
	} else {
		prev := c.last[call.Token]
		if s < prev || (s == prev && s != StageBody) {
			c.t.Errorf("call %s: stage %s after %s", call.CallID, s, prev)
		}
		if s > StageIdentity {
			if a, ok := c.args[call.Token]; ok && a != call.Args.String() {
				c.t.Errorf("call %s: arguments changed at %s: %s -> %s", call.CallID, s, a, call.Args)
			} else if !ok && !call.Args.IsZero() {
				c.args[call.Token] = call.Args.String()
			}
		}
	}
	seen[s]++
	c.last[call.Token] = s
}

// done checks that every execution reached the observers exactly once and
// ran finalize exactly once.
func (c *checker) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for tok, seen := range c.seen {
		if seen[StageFinalize] != 1 || seen[StageObservers] != 1 {
			c.t.Errorf("execution %p: finalize ran %d times, observers %d times", tok.p, seen[StageFinalize], seen[StageObservers])
		}
	}
}

func TestCheckerCatchesViolations(t *testing.T) {
	ft := &fakeT{}
	c := newChecker(ft)
	tok := Token{p: &tokenState{}}
	c.trace(StageIdentity, Call{Token: tok})
	c.trace(StageGuards, Call{Token: tok})
	c.trace(StagePrePolicy, Call{Token: tok}) // out of order
	if len(ft.errs) == 0 {
		t.Fatal("checker accepted a stage running backwards")
	}
	ft.errs = nil
	c.done() // never finalized
	if len(ft.errs) == 0 {
		t.Fatal("checker accepted an execution that was never finalized")
	}
}

type fakeT struct {
	testing.TB
	errs []string
}

func (f *fakeT) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
