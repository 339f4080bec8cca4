package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/codemode/codemode/registry"
)

var errDeadline = errors.New("tool timeout")

// Timeout returns the around wrapper that enforces each tool's timeout
// (def for tools that declare none; def <= 0 means no limit for them; a
// run_code call whose caller set RunOptions.Timeout gets that plus
// RunBackstop). A
// body that fails after its deadline passed fails as TOOL_TIMEOUT. The
// wrapper waits for the body: bodies must honour their context.
func Timeout(def time.Duration) Around {
	return func(ctx context.Context, c Call, next Next) Outcome {
		d := c.Tool.Timeout()
		if d <= 0 {
			d = def
		}
		if run := c.runTimeout(); run > 0 && c.Name == registry.RunCode {
			// The caller chose the run's own limit (RunOptions.Timeout): the
			// backstop follows it, past it by RunBackstop as the tool's own is.
			d = run + RunBackstop
		}
		if d <= 0 {
			return next(ctx)
		}
		tctx, cancel := context.WithTimeoutCause(ctx, d, errDeadline)
		defer cancel()
		out := next(derive(c, ctx, tctx))
		if out.Err != nil && ctx.Err() == nil && errors.Is(context.Cause(tctx), errDeadline) {
			return Outcome{
				Err:      &registry.Error{Code: registry.CodeToolTimeout, Message: fmt.Sprintf("%s timed out after %s", c.Name, d)},
				Contexts: out.Contexts,
			}
		}
		return out
	}
}

// RunBackstop is how far past a run's own wall-clock limit the timeout
// wrapper ends a nesting call (run_code): the sandbox ends the program at
// its limit and reports it with its logs; the wrapper only catches a run
// that did not end.
const RunBackstop = 10 * time.Second

// runTimeout is the caller's RunOptions.Timeout of the call (0 when none).
func (c Call) runTimeout() time.Duration {
	if c.Token.p == nil || c.Token.p.e == nil {
		return 0
	}
	return c.Token.p.e.run.Timeout
}

// RetryOptions configure Retry.
type RetryOptions struct {
	Attempts int           // total attempts, at least 1 (default 3)
	Backoff  time.Duration // wait before the second attempt, doubled each time (default 50ms)
	// Retryable decides whether a failure is worth another attempt. The
	// default retries only errors marked with Transient.
	Retryable func(c Call, err error) bool
}

// Retry returns an around wrapper that runs the body again after a
// retryable failure, while the context lives.
func Retry(o RetryOptions) Around {
	if o.Attempts < 1 {
		o.Attempts = 3
	}
	if o.Backoff <= 0 {
		o.Backoff = 50 * time.Millisecond
	}
	if o.Retryable == nil {
		o.Retryable = func(_ Call, err error) bool { return IsTransient(err) }
	}
	return func(ctx context.Context, c Call, next Next) Outcome {
		wait := o.Backoff
		for attempt := 1; ; attempt++ {
			out := next(ctx)
			if out.Err == nil || attempt >= o.Attempts || !o.Retryable(c, out.Err) {
				return out
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return out
			case <-t.C:
			}
			wait *= 2
		}
	}
}

type transient struct{ err error }

func (t transient) Error() string { return t.err.Error() }
func (t transient) Unwrap() error { return t.err }

// Transient marks an error as worth retrying.
func Transient(err error) error { return transient{err} }

// IsTransient reports whether err was marked with Transient.
func IsTransient(err error) bool {
	_, ok := registry.ErrorAs[transient](err)
	return ok
}

// ConcurrencySafe reports whether a call may overlap others: only an exact
// true from the tool's classifier on valid arguments. Unknown tools,
// unparsable or invalid arguments, no classifier and panics mean exclusive.
// Schedulers use Prepared.ConcurrencySafe instead, which decides once per
// call from the definition the call runs with.
func (rt *Runtime) ConcurrencySafe(scope, name, rawArgs string) bool {
	return rt.Prepare(context.Background(), Request{Scope: scope, Name: name, Arguments: rawArgs}).ConcurrencySafe()
}
