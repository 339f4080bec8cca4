// Package golden compares test output with files under testdata, the way the
// codebase's text outputs (SDK text, timelines, messages a model reads) are
// pinned. `go test ./pkg -update` rewrites the files from the current output;
// review the diff before committing it.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/ from the current output")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check fails t unless got equals the content of path (relative to the test's
// package). With -update it writes got to path instead, creating directories.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking the change):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
