package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"time"
)

// gatingFigures measures the HTTP figures of durable-at-memory-speed against
// the real service in its default configuration (SQLite log, durability
// full): at one connection, the trivial run's latency over GET /healthz's,
// and one nested call of a read-only tool as a 1-call run's latency over the
// same run without the call (the median over alternating pairs of the two,
// and, as rates, per call of an 11-call run), in-process and with process
// isolation, with the trivial run's 99th percentile over its median from the
// same pairs; and at 16 connections, 2-call runs/s over /healthz's
// requests/s.
func gatingFigures(e *env) ([]Row, error) {
	const (
		none = `return 1`
		one  = `return (await tools.math_add({a: 1, b: 2})).sum`
		two  = `const a = (await tools.math_add({a: 1, b: 2})).sum; return (await tools.math_add({a, b: 3})).sum`
	)
	inSrv, err := serve(e.ctx, "sqlite://"+filepath.Join(e.dir, "gating.db"), inproc)
	if err != nil {
		return nil, err
	}
	defer inSrv.stop()
	h := newHTTPLoad(e, inSrv)
	defer h.close()
	// One connection: per-request latency is the inverse of the rate.
	r, err := h.rates(1, h.healthz, runRequest(inSrv, none), runRequest(inSrv, one), runRequest(inSrv, elevenCalls))
	if err != nil {
		return nil, err
	}
	us := func(rate float64) float64 { return 1e6 / rate }
	health, trivial, oneCall, eleven := us(r[0]), us(r[1]), us(r[2]), us(r[3])
	call, trivials, err := pairedDelta(e.ctx, h.client, pairTime(e), runRequest(inSrv, none), runRequest(inSrv, one))
	if err != nil {
		return nil, err
	}
	rows := []Row{
		Row{Figure: "trivial run over HTTP, over GET /healthz (1 conn)", Value: trivial - health, Unit: "µs",
			Target: "≤ 600 µs", Note: fmt.Sprintf("%.0f µs − %.0f µs", trivial, health)}.judge(trivial-health <= 600),
		tailRow("  same, 99th percentile over the median (in-process)", trivials),
		Row{Figure: "nested call over HTTP, in-process (1-call run − trivial run)", Value: call, Unit: "µs",
			Target: "≤ 30 µs", Note: pairedNote(len(trivials), oneCall-trivial)}.judge(call <= 30),
		// The same marginal cost, with a tenth of the noise of two latencies.
		{Figure: "  same, per call of an 11-call run ((11-call − 1-call) ÷ 10)", Value: (eleven - oneCall) / 10, Unit: "µs"},
	}

	const isoFigure = "nested call over HTTP, process isolation (1-call run − trivial run)"
	procSrv, err := serve(e.ctx, "sqlite://"+filepath.Join(e.dir, "gating-process.db"), process)
	if err != nil {
		rows = append(rows, skipped(isoFigure, err.Error()))
	} else {
		defer procSrv.stop()
		r, err := h.rates(1, runRequest(procSrv, none), runRequest(procSrv, one), runRequest(procSrv, elevenCalls))
		if err != nil {
			return nil, err
		}
		call, trivials, err := pairedDelta(e.ctx, h.client, pairTime(e), runRequest(procSrv, none), runRequest(procSrv, one))
		if err != nil {
			return nil, err
		}
		rows = append(rows, Row{Figure: isoFigure, Value: call, Unit: "µs", Target: "≤ 100 µs",
			Note: pairedNote(len(trivials), us(r[1])-us(r[0]))}.judge(call <= 100),
			Row{Figure: "  same, per call of an 11-call run ((11-call − 1-call) ÷ 10)", Value: (us(r[2]) - us(r[1])) / 10, Unit: "µs"},
			tailRow("trivial run over HTTP, process isolation, 99th percentile over the median", trivials))
	}

	// 16 connections, with a client that keeps as many.
	const conns = 16
	wide := &httpLoad{e: e, healthz: h.healthz, client: &http.Client{Transport: &http.Transport{
		MaxIdleConns: 4 * conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true,
	}}}
	defer wide.close()
	r, err = wide.rates(conns, wide.healthz, runRequest(inSrv, two))
	if err != nil {
		return nil, err
	}
	row := Row{Figure: fmt.Sprintf("HTTP 2-call runs/s, %d conns (SQLite log)", conns), Value: r[1], Floor: r[0],
		FloorName: "GET /healthz", Unit: "/s", Target: "≥ 0.25×"}.withRatio()
	return append(rows, row.judge(row.Ratio >= 0.25)), nil
}

// tailRow is the 99th percentile of a run's latencies over their median,
// client included: what one run in a hundred waits beyond the usual.
func tailRow(figure string, latencies []float64) Row {
	return Row{Figure: figure, Value: quantile(latencies, 0.99), Floor: median(latencies), FloorName: "median",
		Unit: "µs", Note: fmt.Sprintf("%d runs; 99.9th percentile %.0f µs", len(latencies), quantile(latencies, 0.999))}.withRatio()
}

// pairTime is how long a paired figure alternates its two requests: as long
// as the rounds of a rate figure take together.
func pairTime(e *env) time.Duration { return time.Duration(max(e.o.rounds-2, 1)) * 2 * e.o.httpTime }

// pairedNote says how a nested call's figure was taken, beside the difference
// of the two runs' mean latencies, which the host's drift makes noisier.
func pairedNote(pairs int, meanDelta float64) string {
	return fmt.Sprintf("median of %d alternating pairs; difference of means %.0f µs", pairs, meanDelta)
}
