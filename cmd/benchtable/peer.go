package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
)

// peerResult is what bench/peer/peer.mjs prints.
type peerResult struct {
	Node       string                 `json:"node"`
	Iterations int                    `json:"iterations"`
	Rounds     int                    `json:"rounds"`
	Programs   map[string]peerSummary `json:"programs"`
}

// peerSummary is one program's per-run times in µs. MeanUS is total time ÷
// runs (the collection of discarded contexts included, like Go's ns/op);
// MedianUS is the median single run.
type peerSummary struct {
	MeanUS   float64 `json:"mean_us"`
	MedianUS float64 `json:"median_us"`
	P10US    float64 `json:"p10_us"`
	P90US    float64 `json:"p90_us"`
	N        int     `json:"n"`
}

// peerScript is the path of peer.mjs, found beside this source file when
// the harness runs from a checkout, else relative to the working directory.
func peerScript() string {
	if _, file, _, ok := goruntime.Caller(0); ok {
		return filepath.Join(filepath.Dir(file), "peer", "peer.mjs")
	}
	return filepath.Join("bench", "peer", "peer.mjs")
}

// errNoNode means the peer cannot run here.
var errNoNode = errors.New("node not found")

// runPeer runs one round of the peer: iterations runs of each program.
func runPeer(ctx context.Context, node string, iterations int) (peerResult, error) {
	if node == "" {
		return peerResult{}, errNoNode
	}
	path, err := exec.LookPath(node)
	if err != nil {
		return peerResult{}, fmt.Errorf("%w: %v", errNoNode, err)
	}
	cmd := exec.CommandContext(ctx, path, peerScript(), strconv.Itoa(iterations), "1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return peerResult{}, fmt.Errorf("peer: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var res peerResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return peerResult{}, fmt.Errorf("peer: unreadable output %q: %v", stdout.String(), err)
	}
	for _, name := range []string{"trivial", "calls20"} {
		if res.Programs[name].N == 0 {
			return peerResult{}, fmt.Errorf("peer: no timings for %s in %q", name, stdout.String())
		}
	}
	return res, nil
}
