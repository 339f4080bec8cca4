package worker

import (
	"testing"

	"github.com/codemode/codemode/sandbox"
	"github.com/codemode/codemode/sandbox/sandboxtest"
)

// TestCorpusInWorkers runs the conformance corpus through worker processes: the platform a
// program sees is the same there as in process.
func TestCorpusInWorkers(t *testing.T) {
	programs, expected := sandboxtest.LoadCorpus(t)
	pool := newTestPool(t, Options{Memory: sandboxtest.Memory})
	for _, p := range programs {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			want, ok := expected[p.Name]
			res := pool.Run(t.Context(), p.Source, nil, sandbox.Options{Timeout: sandboxtest.CorpusTimeout})
			sandboxtest.CheckCorpus(t, p, want, ok, res)
		})
	}
}
