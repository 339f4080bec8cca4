package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), c.in...)
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Errorf("median reordered its input: %v, was %v", c.in, in)
			}
		}
	}
}

func TestQuantile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100 … 1, unsorted
	}
	for _, c := range []struct {
		in   []float64
		q    float64
		want float64
	}{
		{nil, 0.99, 0},
		{[]float64{7}, 0.99, 7},
		{hundred, 0.99, 99},
		{hundred, 0.999, 100},
		{hundred, 0.5, 50},
		{hundred, 0, 1},
		{hundred, 1, 100},
	} {
		if got := quantile(c.in, c.q); got != c.want {
			t.Errorf("quantile(%d values, %v) = %v, want %v", len(c.in), c.q, got, c.want)
		}
	}
	if hundred[0] != 100 {
		t.Error("quantile reordered its input")
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{2.345, "µs", "2.35 µs"},
		{12.34, "µs", "12.3 µs"},
		{123.4, "µs", "123 µs"},
		{5518.2, "µs", "5,518 µs"},
		{1234567, "µs", "1,234,567 µs"},
		{83.4, "/s", "83/s"},
		{6395, "/s", "6,395/s"},
		{1983162, "tokens", "1,983,162 tokens"},
		{0.8736, "recall", "0.874"},
		{3.214, "s", "3.21 s"},
		{150.4, "MB", "150 MB"},
	} {
		if got := formatValue(c.v, c.unit); got != c.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	for _, c := range []struct {
		r    float64
		want string
	}{{0, "—"}, {0.00048, "0.00048×"}, {0.0912, "0.09×"}, {1.2, "1.20×"}, {57.43, "57.4×"}, {196.4, "196×"}} {
		if got := formatRatio(c.r); got != c.want {
			t.Errorf("formatRatio(%v) = %q, want %q", c.r, got, c.want)
		}
	}
}

func TestRowJudge(t *testing.T) {
	r := Row{Value: 150, Floor: 100}.withRatio()
	if r.Ratio != 1.5 {
		t.Fatalf("ratio = %v, want 1.5", r.Ratio)
	}
	if got := r.judge(r.Ratio <= 1.2).Result; got != "missed" {
		t.Errorf("1.5 ≤ 1.2 judged %q", got)
	}
	if got := r.judge(r.Ratio <= 2).Result; got != "met" {
		t.Errorf("1.5 ≤ 2 judged %q", got)
	}
	if got := (Row{Value: 3}).withRatio().Ratio; got != 0 {
		t.Errorf("a row without a floor has ratio %v", got)
	}
}

func TestWriteTable(t *testing.T) {
	rep := Report{
		Machine: Machine{CPUs: 2, CPUModel: "Test CPU", GoVersion: "go1.x", OS: "linux/amd64", LoadBefore: "0.1 0.2 0.3", LoadAfter: "0.4 0.5 0.6"},
		Rows: []Row{
			Row{Figure: "trivial", Value: 150, Floor: 3, FloorName: "goja", Unit: "µs", Target: "≤ 100 µs"}.withRatio().judge(false),
			skipped("isolation", "not in this build"),
			Row{Figure: "http", Value: 100, Floor: 1000, FloorName: "healthz", Unit: "/s", Target: "≥ 0.25×"}.withRatio().judge(false),
		},
	}
	for _, markdown := range []bool{false, true} {
		var buf bytes.Buffer
		if err := writeTable(&buf, rep, markdown); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, want := range []string{"150 µs", "3.00 µs (goja)", "50.0×", "≤ 100 µs", "missed", "skipped: not in this build",
			"100/s", "1,000/s (healthz)", "0.10×", "2 CPUs, Test CPU, go1.x", "load average 0.1 0.2 0.3 before, 0.4 0.5 0.6 after"} {
			if !strings.Contains(out, want) {
				t.Errorf("markdown=%v: table lacks %q:\n%s", markdown, want, out)
			}
		}
		if markdown && !strings.HasPrefix(out, "| figure | codemode |") {
			t.Errorf("markdown table starts %q", out[:min(len(out), 40)])
		}
	}
}

func TestWriteJSON(t *testing.T) {
	rep := Report{Rows: []Row{Row{Figure: "f", Value: 2, Floor: 1, Unit: "µs"}.withRatio().judge(true)}}
	var buf bytes.Buffer
	if err := writeJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != 1 || back.Rows[0].Ratio != 2 || back.Rows[0].Result != "met" {
		t.Errorf("round trip: %+v", back.Rows)
	}
}

func TestMeasureRound(t *testing.T) {
	calls := 0
	s, err := measureRound(func() error { calls++; return nil }, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || s.nsPerOp <= 0 {
		t.Errorf("calls = %d, sample %+v", calls, s)
	}
	boom := errors.New("boom")
	if _, err := measureRound(func() error { return boom }, time.Millisecond); !errors.Is(err, boom) {
		t.Errorf("error = %v, want boom", err)
	}
}

func TestPeer(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	res, err := runPeer(context.Background(), "node", vmPeer, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"trivial", "calls20"} {
		p := res.Programs[name]
		if p.N != 3 || p.MeanUS <= 0 || p.MedianUS <= 0 {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if res.Engine != "vm" {
		t.Errorf("engine %q", res.Engine)
	}
	if _, err := runPeer(context.Background(), "", vmPeer, 3); !errors.Is(err, errNoNode) {
		t.Errorf("no node: error %v", err)
	}
	if _, err := runPeer(context.Background(), "no-such-node-binary", vmPeer, 3); !errors.Is(err, errNoNode) {
		t.Errorf("missing node: error %v", err)
	}
}

// The isolated-vm peer runs the same programs with the same output; CI
// installs it (.ci/node-deps).
func TestIsolatedVMPeer(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	res, err := runPeer(context.Background(), "node", ivmPeer, 3)
	if errors.Is(err, errNoIsolatedVM) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"trivial", "calls20"} {
		if p := res.Programs[name]; p.N != 3 || p.MeanUS <= 0 {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if res.Engine != "isolated-vm 5.0.4" {
		t.Errorf("engine %q, want isolated-vm 5.0.4 (package.json pins it)", res.Engine)
	}
}

func TestPeerRejectsBadArguments(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	out, err := exec.Command(node, peerScript(), "zero").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "usage") {
		t.Errorf("peer.mjs zero: %v %s", err, out)
	}
}
