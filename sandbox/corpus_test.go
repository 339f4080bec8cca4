package sandbox_test

import (
	"testing"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// TestCorpus runs the conformance corpus (testdata/corpus) in process: every program gives
// the value and console output Node gave, and every program marked unsupported fails with a
// message naming the alternative.
func TestCorpus(t *testing.T) {
	programs, expected := sandboxtest.LoadCorpus(t)
	if len(programs) < 300 {
		t.Fatalf("the corpus has %d programs, want at least 300", len(programs))
	}
	for _, p := range programs {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			want, ok := expected[p.Name]
			res := sandbox.InProcess{}.Run(t.Context(), p.Source, nil, sandbox.Options{Timeout: sandboxtest.CorpusTimeout})
			sandboxtest.CheckCorpus(t, p, want, ok, res)
		})
	}
}
