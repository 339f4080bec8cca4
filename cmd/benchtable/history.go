package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"time"

	"github.com/codemode/codemode/app"
	httpapi "github.com/codemode/codemode/http"
)

// historyEvents is the length of the long session's log.
const historyEvents = 100_000

// historyFigures measures whether a run's cost grows with its session: a
// 1-call run in a session of historyEvents events against the same run in a
// new session (both SQLite, default durability), and the first run in the
// long session after a restart (a new App over the same file) against the
// first run of a new App in a new session; and GET /messages of the long
// session. The long log is written beforehand by runs of the same
// program with durability process, so that it has the checkpoints a real
// session has.
func historyFigures(e *env) ([]Row, error) {
	url := "sqlite://" + filepath.Join(e.dir, "history.db")
	fill := appConfig(url, inproc, true)
	fill.Durability = "process"
	a, err := newApp(e.ctx, fill)
	if err != nil {
		return nil, err
	}
	first, err := a.Run(e.ctx, app.RunRequest{Code: oneCall, Description: "bench"})
	if err != nil {
		a.Close()
		return nil, err
	}
	id := first.SessionID
	seq := func(a *app.App) (int64, error) {
		s, err := a.Store.GetSession(e.ctx, id)
		return s.LastSeq, err
	}
	for {
		n, err := seq(a)
		if err != nil {
			a.Close()
			return nil, err
		}
		if n >= historyEvents {
			break
		}
		for range 200 {
			if _, err := a.Run(e.ctx, app.RunRequest{Code: oneCall, Description: "bench", SessionID: id}); err != nil {
				a.Close()
				return nil, err
			}
		}
	}
	a.Close()

	// A restart: the first run of a new App, timed alone, in the long session
	// and (the floor: what any first run of a new App pays) in a new one.
	firstRun := func(sessionID string) (float64, error) {
		a, err := newApp(e.ctx, appConfig(url, inproc, true))
		if err != nil {
			return 0, err
		}
		defer a.Close()
		start := time.Now()
		_, err = a.Run(e.ctx, app.RunRequest{Code: oneCall, Description: "bench", SessionID: sessionID})
		return float64(time.Since(start).Microseconds()), err
	}
	var firstsLong, firstsNew []float64
	for range 3 * e.o.rounds { // single runs: three times the rounds for a steadier median
		l, err := firstRun(id)
		if err != nil {
			return nil, err
		}
		n, err := firstRun("")
		if err != nil {
			return nil, err
		}
		firstsLong, firstsNew = append(firstsLong, l), append(firstsNew, n)
	}

	a, err = newApp(e.ctx, appConfig(url, inproc, true))
	if err != nil {
		return nil, err
	}
	defer a.Close()
	inLong := func() error {
		_, err := a.Run(e.ctx, app.RunRequest{Code: oneCall, Description: "bench", SessionID: id})
		return err
	}
	m, err := measureAlternating(e.o.rounds, e.o.roundTime, runOp(e.ctx, a, oneCall, wantOne), inLong)
	if err != nil {
		return nil, err
	}
	n, _ := seq(a)
	long := Row{Figure: fmt.Sprintf("1-call run in a session of %d events (SQLite log)", n), Value: m[1].us, Floor: m[0].us,
		FloorName: "in a new session", Unit: "µs", Target: "≤ 1.20×", AllocsPerOp: m[1].allocsPerOp}.withRatio()
	restart := Row{Figure: "  same, the first run after a restart", Value: median(firstsLong), Floor: median(firstsNew),
		FloorName: "first run in a new session", Unit: "µs", Target: "≤ 1.20×"}.withRatio()
	msgs, err := messagesTime(a, id, e.o.rounds)
	if err != nil {
		return nil, err
	}
	return []Row{long.judge(long.Ratio <= 1.2), restart.judge(restart.Ratio <= 1.2), msgs}, nil
}

// messagesTime is the median time of GET /v1/sessions/{id}/messages over
// rounds requests, through the HTTP handler without a network: reading the
// whole log and rebuilding the conversation.
func messagesTime(a *app.App, id string, rounds int) (Row, error) {
	srv, err := httpapi.New(a, httpapi.Options{Logger: discard})
	if err != nil {
		return Row{}, err
	}
	var times []float64
	size := 0
	for range max(rounds, 1) {
		rec := httptest.NewRecorder()
		start := time.Now()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/sessions/"+id+"/messages", nil))
		times = append(times, float64(time.Since(start).Microseconds()))
		if rec.Code != http.StatusOK {
			return Row{}, fmt.Errorf("GET /messages: %d %s", rec.Code, rec.Body.Bytes())
		}
		size = rec.Body.Len()
	}
	return Row{Figure: "  same, GET /messages of that session", Value: median(times), Unit: "µs",
		Note: fmt.Sprintf("%d KiB of messages", size>>10)}, nil
}
