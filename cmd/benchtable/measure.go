package main

import (
	"math"
	goruntime "runtime"
	"slices"
	"time"
)

// op is one operation of a figure; an error stops the harness, since a
// figure that fails is not a figure.
type op func() error

// sample is one round of an op: its mean time and allocations per op.
type sample struct {
	nsPerOp     float64
	allocsPerOp float64
	bytesPerOp  float64
}

// measureRound runs fn in batches of doubling size until d has passed and
// reports the mean per op, like testing.B's ns/op and allocs/op: garbage
// collection caused by the op is paid within the round. One warm-up call
// runs first, untimed, and then a collection, so that no round pays for
// the garbage of the one before (testing.B does the same).
func measureRound(fn op, d time.Duration) (sample, error) {
	if err := fn(); err != nil {
		return sample{}, err
	}
	goruntime.GC()
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	start := time.Now()
	n, batch := 0, 1
	for {
		for range batch {
			if err := fn(); err != nil {
				return sample{}, err
			}
		}
		n += batch
		if time.Since(start) >= d {
			break
		}
		batch = min(batch*2, 1<<14)
	}
	elapsed := time.Since(start)
	goruntime.ReadMemStats(&after)
	return sample{
		nsPerOp:     float64(elapsed.Nanoseconds()) / float64(n),
		allocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
		bytesPerOp:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
	}, nil
}

// measured is the median over rounds of one op.
type measured struct {
	us          float64 // median µs per op
	allocsPerOp float64 // median allocations per op
	rounds      []float64
}

// measureAlternating runs rounds of each op in turn (a, b, c, a, b, c, …)
// and returns each op's medians, in the order of ops.
func measureAlternating(rounds int, d time.Duration, ops ...op) ([]measured, error) {
	samples := make([][]sample, len(ops))
	for range rounds {
		for i, fn := range ops {
			s, err := measureRound(fn, d)
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], s)
		}
	}
	out := make([]measured, len(ops))
	for i, ss := range samples {
		ns := make([]float64, len(ss))
		allocs := make([]float64, len(ss))
		for j, s := range ss {
			ns[j] = s.nsPerOp / 1e3
			allocs[j] = s.allocsPerOp
		}
		out[i] = measured{us: median(ns), allocsPerOp: median(allocs), rounds: ns}
	}
	return out, nil
}

// quantile is the q-quantile of xs (0 ≤ q ≤ 1), the nearest rank; 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(max(int(math.Ceil(q*float64(len(s))))-1, 0), len(s)-1)]
}

// median of xs (the mean of the middle two for an even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
