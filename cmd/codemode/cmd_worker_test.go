package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/codemode/codemode/sandbox/sandboxtest"
)

func TestWorkerCommandIsHidden(t *testing.T) {
	var out bytes.Buffer
	run(t.Context(), []string{"help"}, strings.NewReader(""), io.Discard, &out)
	if strings.Contains(out.String(), "worker") {
		t.Fatalf("the usage lists the worker command:\n%s", out.String())
	}
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"worker", "extra"}, strings.NewReader(""), io.Discard, &stderr); code != 2 {
		t.Fatalf("worker with an argument: exit %d (%s), want 2", code, stderr.String())
	}
}

// TestServeSurvivesTheHostileSuite sends the whole hostile suite to a running `codemode
// serve` with its default settings, which run programs in worker processes (the workers are
// this test binary, which becomes one when the pool starts it). Every program ends as a run
// result of the expected kind in time, the server stays healthy, and its own heap is back
// near where it started.
func TestServeSurvivesTheHostileSuite(t *testing.T) {
	programs := sandboxtest.Load(t)
	checker := sandboxtest.Checker(t, programs)
	baseline := heapAfterGC()
	addr, _ := startServe(t, "--addr", "127.0.0.1:0", "--store", "memory://")
	post := func(t *testing.T, p sandboxtest.Program) sandboxtest.Outcome {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"code": p.Source, "description": "hostile " + p.Name, "timeout_ms": p.Timeout.Milliseconds()})
		start := time.Now()
		resp, err := http.Post("http://"+addr+"/v1/run", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		defer resp.Body.Close()
		var res struct {
			IsError bool            `json:"is_error"`
			Value   json.RawMessage `json:"value"`
			Error   *struct {
				Code, Kind, Message string
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v", p.Name, resp.StatusCode, err)
		}
		out := sandboxtest.Outcome{Value: string(res.Value), Elapsed: time.Since(start)}
		if res.IsError {
			if res.Error == nil || res.Error.Code != "CODE_RUN_FAILED" {
				t.Fatalf("%s: a failed run without CODE_RUN_FAILED: %+v", p.Name, res.Error)
			}
			out.Kind, out.Message = res.Error.Kind, res.Error.Message
		}
		return out
	}
	t.Run("suite", func(t *testing.T) {
		for _, p := range programs {
			if p.Memory != sandboxtest.Memory && sandboxtest.RaceEnabled {
				// Such a program needs the memory limit it names to end in time; the server
				// runs with its default, and without a hard memory cap in a race build.
				continue
			}
			t.Run(p.Name, func(t *testing.T) {
				t.Parallel()
				sandboxtest.Check(t, p, post(t, p))
			})
		}
	})
	for _, p := range programs {
		if p.CheckClean {
			t.Run("then-clean/"+p.Name, func(t *testing.T) {
				sandboxtest.Check(t, p, post(t, p))
				sandboxtest.Check(t, checker, post(t, checker))
			})
		}
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz after the suite: %v %v", resp, err)
	}
	resp.Body.Close()
	ok := checker
	ok.Name, ok.Source = "after the suite", `return (await tools.math_add({a: 20, b: 22})).sum`
	if out := post(t, ok); out.Kind != "" || out.Value == "" {
		t.Fatalf("a run after the suite: %+v", out)
	}
	if grown := int64(heapAfterGC()) - int64(baseline); grown > 64<<20 {
		t.Errorf("the server's heap grew by %d MiB over the suite", grown>>20)
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
