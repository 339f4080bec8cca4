package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
)

// peerResult is what a Node peer (cmd/benchtable/peer) prints.
type peerResult struct {
	Node       string                 `json:"node"`
	Engine     string                 `json:"engine"`
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

// The Node peers: the vm one needs only Node; the isolated-vm one needs the
// isolated-vm package installed beside it (npm ci in cmd/benchtable/peer).
const (
	vmPeer  = "peer.mjs"
	ivmPeer = "ivm.mjs"
)

// peerDir is the directory of the peers, found beside this source file when
// the harness runs from a checkout, else relative to the working directory.
func peerDir() string {
	if _, file, _, ok := goruntime.Caller(0); ok {
		return filepath.Join(filepath.Dir(file), "peer")
	}
	return filepath.Join("cmd", "benchtable", "peer")
}

// peerScript is the path of the vm peer.
func peerScript() string { return filepath.Join(peerDir(), vmPeer) }

// errNoNode means the peer cannot run here.
var errNoNode = errors.New("node not found")

// errNoIsolatedVM means the isolated-vm package is not installed.
var errNoIsolatedVM = errors.New("isolated-vm is not installed: run npm ci in cmd/benchtable/peer")

// runPeer runs one round of a peer script: iterations runs of each program.
func runPeer(ctx context.Context, node, script string, iterations int) (peerResult, error) {
	if node == "" {
		return peerResult{}, errNoNode
	}
	path, err := exec.LookPath(node)
	if err != nil {
		return peerResult{}, fmt.Errorf("%w: %v", errNoNode, err)
	}
	if script == ivmPeer {
		if _, err := os.Stat(filepath.Join(peerDir(), "node_modules", "isolated-vm", "package.json")); err != nil {
			return peerResult{}, errNoIsolatedVM
		}
	}
	cmd := exec.CommandContext(ctx, path, filepath.Join(peerDir(), script), strconv.Itoa(iterations), "1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return peerResult{}, fmt.Errorf("peer %s: %v: %s", script, err, bytes.TrimSpace(stderr.Bytes()))
	}
	var res peerResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return peerResult{}, fmt.Errorf("peer %s: unreadable output %q: %v", script, stdout.String(), err)
	}
	for _, name := range []string{"trivial", "calls20"} {
		if res.Programs[name].N == 0 {
			return peerResult{}, fmt.Errorf("peer %s: no timings for %s in %q", script, name, stdout.String())
		}
	}
	return res, nil
}
