package admission

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestBudgetAdmitsWhatFits(t *testing.T) {
	b := NewBudget(100)
	r1, err := b.Reserve(60)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.Reserve(40)
	if err != nil || b.InUse() != 100 {
		t.Fatalf("a reservation that fits exactly: %v, in use %d", err, b.InUse())
	}
	_, err = b.Reserve(1)
	var ex *ExhaustedError
	if !errors.As(err, &ex) || ex.Want != 1 || ex.InUse != 100 || ex.Limit != 100 {
		t.Fatalf("over the budget: %v", err)
	}
	if err.Error() != "admission: 1 bytes do not fit the memory budget: 100 bytes of 100 bytes are reserved" {
		t.Fatalf("message %q", err)
	}
	r1()
	r1() // a second release does nothing
	if b.InUse() != 40 {
		t.Fatalf("in use %d after one release twice", b.InUse())
	}
	if _, err := b.Reserve(60); err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
	if _, err := b.Reserve(1 << 62); err == nil || !errors.As(err, &ex) || ex.Want != 1<<62 {
		t.Fatalf("a reservation larger than the budget: %v", err)
	}
	if _, err := NewBudget(1 << 30).Reserve(2 << 30); err == nil || err.Error() != "admission: 2 GiB do not fit a memory budget of 1 GiB at all" {
		t.Fatalf("message %v", err)
	}
	free, err := b.Reserve(0)
	if err != nil || b.InUse() != 60 {
		t.Fatalf("an empty reservation: %v", err)
	}
	free()
	if b.Limit() != 100 || NewBudget(0).Limit() != 1 {
		t.Fatal("limits")
	}
}

// TestBudgetIsShared: concurrent reservations never take more than the
// budget, and every release returns its bytes.
func TestBudgetIsShared(t *testing.T) {
	b := NewBudget(10)
	var wg sync.WaitGroup
	var mu sync.Mutex
	peak := int64(0)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				release, err := b.Reserve(3)
				if err != nil {
					continue
				}
				mu.Lock()
				peak = max(peak, b.InUse())
				mu.Unlock()
				release()
			}
		}()
	}
	wg.Wait()
	if peak > 10 || b.InUse() != 0 {
		t.Fatalf("peak %d, in use at the end %d", peak, b.InUse())
	}
}

func TestMachineMemory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for content, want := range map[string]int64{"max\n": 0, "9223372036854771712\n": 0, "2147483648\n": 2 << 30, "junk": 0, "-1": 0} {
		n, ok := cgroupLimit(write("limit", content))
		if (want == 0) == ok || n != want {
			t.Errorf("cgroup limit %q: %d %v", content, n, ok)
		}
	}
	if _, ok := cgroupLimit(filepath.Join(dir, "missing")); ok {
		t.Error("a missing file has a limit")
	}
	if n, ok := memTotal(write("meminfo", "MemFree: 1 kB\nMemTotal:       24683584 kB\n")); !ok || n != 24683584<<10 {
		t.Errorf("MemTotal: %d %v", n, ok)
	}
	for _, bad := range []string{"MemTotal: 12 MB\n", "MemTotal: x kB\n", "Other: 1 kB\n"} {
		if _, ok := memTotal(write("meminfo", bad)); ok {
			t.Errorf("meminfo %q accepted", bad)
		}
	}
	if m := MachineMemory(); m <= 0 || DefaultLimit() != m/4*3 {
		t.Fatalf("machine memory %d, default limit %d", m, DefaultLimit())
	}
}
