package registry

import (
	"context"
	"encoding/json"
)

// Notice is something a running tool reports about itself before its result:
// progress, or a log line. Upstream MCP tools turn their server's
// notifications/progress and notifications/message into notices; any body
// may send its own with Notify.
type Notice struct {
	Tool   string // the reporting tool's name
	CallID string // its call's id (Exec.CallID)
	Kind   NoticeKind

	// Progress: Progress increases with every notice of a call; Total is 0
	// when unknown.
	Progress, Total float64
	Message         string // progress message ("" when none)

	// Log: Level is one of MCP's (syslog) levels: debug, info, notice,
	// warning, error, critical, alert, emergency. Logger names the source
	// ("" when none); Data is the JSON the source logged.
	Level  string
	Logger string
	Data   json.RawMessage
}

// NoticeKind says what a Notice reports.
type NoticeKind string

// The kinds of notices.
const (
	NoticeProgress NoticeKind = "progress"
	NoticeLog      NoticeKind = "log"
)

// Notifier receives the notices of the calls run under a context. Notify is
// called from the goroutine of the reporting call (several at once for
// concurrent calls) and must not block for long.
type Notifier interface {
	Notify(ctx context.Context, n Notice)
}

// NotifierFunc adapts a function to a Notifier.
type NotifierFunc func(ctx context.Context, n Notice)

// Notify implements Notifier.
func (f NotifierFunc) Notify(ctx context.Context, n Notice) { f(ctx, n) }

type notifierKey struct{}

// WithNotifier returns a context whose calls' notices also reach n, after
// the notifiers ctx already has: every layer that started a call (a run, an
// MCP request) sees the notices of the calls below it.
func WithNotifier(ctx context.Context, n Notifier) context.Context {
	if n == nil {
		return ctx
	}
	prev, _ := ctx.Value(notifierKey{}).([]Notifier)
	chain := make([]Notifier, 0, len(prev)+1)
	chain = append(append(chain, prev...), n)
	return context.WithValue(ctx, notifierKey{}, chain)
}

// Notify delivers a notice to every notifier of ctx, in the order they were
// added; without one it does nothing. A notifier's panic is contained: it
// cannot fail the call that reported.
func Notify(ctx context.Context, n Notice) {
	chain, _ := ctx.Value(notifierKey{}).([]Notifier)
	for _, x := range chain {
		func() {
			defer func() { _ = recover() }()
			x.Notify(ctx, n)
		}()
	}
}

// HasNotifier reports whether notices sent under ctx reach anyone.
func HasNotifier(ctx context.Context) bool {
	chain, _ := ctx.Value(notifierKey{}).([]Notifier)
	return len(chain) > 0
}
