package sandbox

import (
	"time"

	"github.com/dlclark/regexp2/v2"
)

// RegexpMatchTimeout bounds one regular-expression match in a program. goja runs patterns that
// Go's linear-time regexp cannot express (backreferences, lookaround) on regexp2, a
// backtracking engine whose matches ignore Runtime.Interrupt, so a catastrophic pattern would
// otherwise hold the VM goroutine for minutes past the run's timeout. A match that times out
// behaves, in goja, as "no match"; the run's own wall-clock limit still applies around it.
//
// regexp2 reads the timeout from a process-wide default when a pattern is compiled; this
// package sets it once at init and never changes it.
const RegexpMatchTimeout = time.Second

func init() {
	regexp2.DefaultMatchTimeout = RegexpMatchTimeout
}
