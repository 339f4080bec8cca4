package main

import (
	"bufio"
	"os"
	goruntime "runtime"
	"strings"
)

// Machine describes where a table was measured.
type Machine struct {
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Node       string `json:"node,omitempty"`
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
}

func machine() Machine {
	return Machine{
		CPUs:       goruntime.NumCPU(),
		CPUModel:   cpuModel(),
		GoVersion:  goruntime.Version(),
		OS:         goruntime.GOOS + "/" + goruntime.GOARCH,
		LoadBefore: loadAverage(),
	}
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// loadAverage is the 1, 5 and 15 minute load averages of /proc/loadavg, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
