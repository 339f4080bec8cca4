package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/codemode/codemode/config"
)

// This file watches each upstream connection while calls to it wait
// (mcp_servers[].liveness). An upstream is other people's code: one that
// stops reading or answering must cost its callers a bounded wait and a
// line in the log that names it, not each run its own timeout in silence.
//
// "Silent" is measured from the last message received on the connection,
// or from when the oldest outstanding call began if that is later (an
// upstream idle for an hour is not silent the moment a call starts). Silent
// for Idle: it is pinged (one ping at a time, again whenever one ends
// unanswered; any write to a stalled stdio server may already wake it).
// Silent for Idle+PingTimeout: it is unresponsive (the state, one log line,
// a count), until anything arrives from it. Silent for FailAfter: the calls
// waiting on it fail with "upstream NAME is not answering", and it is
// restarted. An unresponsive upstream whose callers all gave up is still
// restarted at FailAfter.
//
// Apart from that, a call with no reply and no progress notification for
// StallAfter is logged once, naming its upstream, tool and call id: what a
// stalled run waits on.

// errNotAnswering is the cause of the calls failed by the liveness check.
var errNotAnswering = errors.New("not answering")

// heard is when a message last arrived on a connection (unix nanoseconds);
// watchConn.Read stamps it.
type heard struct{ at atomic.Int64 }

func (h *heard) stamp() { h.at.Store(time.Now().UnixNano()) }

func (h *heard) last() time.Time { return time.Unix(0, h.at.Load()) }

// liveness is the watch over one connection. Only the serve goroutine
// touches it, except pinging.
type liveness struct {
	cfg     config.Liveness // resolved
	pinging atomic.Bool     // a ping is in flight
	// silentSince is when the silence that made the upstream unresponsive
	// began; zero while it is not.
	silentSince time.Time
}

// tick is how often the liveness of a connection is checked: often enough
// to act within a quarter of the shortest bound, at most once a second.
func (l *liveness) tick() time.Duration {
	d := min(l.cfg.Idle, l.cfg.PingTimeout, l.cfg.StallAfter).Std() / 4
	return min(max(d, 10*time.Millisecond), time.Second)
}

// checkLiveness runs on every tick of serve. It returns an error wrapping
// errNotAnswering when the connection must end: its calls have been failed
// with that error already.
func (u *upstream) checkLiveness(c *connection, now time.Time) error {
	l := c.live
	busy, waiting := u.watchCalls(c, now, l.cfg.StallAfter.Std())
	last := c.heard.last()
	var since time.Time
	switch {
	case !l.silentSince.IsZero() && !last.After(l.silentSince):
		since = l.silentSince // still unresponsive, with or without callers
	case waiting > 0:
		since = last
		if busy.After(since) {
			since = busy
		}
	}
	if !l.silentSince.IsZero() && last.After(l.silentSince) {
		l.silentSince = time.Time{}
		u.update(func(st *UpstreamState) {
			if st.State == StateUnresponsive {
				st.State, st.LastError = StateReady, ""
			}
		})
	}
	if since.IsZero() {
		return nil
	}
	silent := now.Sub(since)
	cfg := l.cfg
	switch {
	case silent >= cfg.FailAfter.Std():
		err := fmt.Errorf("upstream %s is %w: nothing received from it for %v while calls waited (liveness.fail_after); restarting it",
			u.cfg.Name, errNotAnswering, silent.Round(time.Millisecond))
		u.failCalls(c, err)
		return err
	case silent >= (cfg.Idle+cfg.PingTimeout).Std() && l.silentSince.IsZero():
		l.silentSince = since
		why := fmt.Sprintf("nothing received for %v while %d calls waited; a ping went unanswered for %v", silent.Round(time.Millisecond), waiting, cfg.PingTimeout.Std())
		u.update(func(st *UpstreamState) {
			if st.State == StateReady { // not one a failed call just set
				st.State, st.LastError = StateUnresponsive, why
				st.Unresponsive++
			}
		})
	}
	if silent >= cfg.Idle.Std() && l.pinging.CompareAndSwap(false, true) {
		go func() {
			defer l.pinging.Store(false)
			ctx, cancel := context.WithTimeout(u.life, cfg.PingTimeout.Std())
			defer cancel()
			// The answer stamps heard; a ping that fails is the silence
			// the next tick measures.
			_ = c.cs.Ping(ctx, nil)
		}()
	}
	return nil
}

// watchCalls reports, of the calls waiting on c, when the oldest began and
// how many there are, and logs once those that have had no reply and no
// progress for stallAfter.
func (u *upstream) watchCalls(c *connection, now time.Time, stallAfter time.Duration) (oldest time.Time, n int) {
	var stalled []string
	u.mu.Lock()
	for _, call := range u.calls {
		if call.conn != c {
			continue
		}
		n++
		if oldest.IsZero() || call.started.Before(oldest) {
			oldest = call.started
		}
		if !call.stalled && now.Sub(call.progressed) >= stallAfter {
			call.stalled = true
			stalled = append(stalled, call.tool+" (call "+call.callID+")")
		}
	}
	u.st.StalledCalls += len(stalled)
	u.mu.Unlock()
	if len(stalled) > 0 {
		u.log.Warn("upstream calls stalled: no reply and no progress", "stall_after", stallAfter, "calls", strings.Join(stalled, ", "),
			"waiting", n, "last_heard", now.Sub(c.heard.last()).Round(time.Millisecond))
	}
	return oldest, n
}

// failCalls ends the calls waiting on c with cause.
func (u *upstream) failCalls(c *connection, cause error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, call := range u.calls {
		if call.conn == c {
			call.cancel(cause)
		}
	}
}
