// Command benchtable is codemode's benchmark harness: it measures each figure of
// the performance targets beside its floor, in the same process and the same
// run, and prints one table of ratios (or JSON with -json).
//
//	go run ./cmd/benchtable                  # every figure, about 70 s
//	go run ./cmd/benchtable -json            # the same as JSON
//	go run ./cmd/benchtable -only 'runs|sdk' -cpuprofile cpu.out
//
// The figures, their floors and the targets are described in BENCHMARKS.md.
// Each figure is a median over rounds; the rounds of a figure and of its
// floor alternate, so that a machine shared with other work slows both
// alike. The Node.js vm peer (cmd/benchtable/peer/peer.mjs) runs when node is on
// PATH, and the isolated-vm peer (ivm.mjs) when npm ci has installed isolated-vm
// in cmd/benchtable/peer (.ci/node-deps does); the PostgreSQL log figure runs when -postgres (default
// $CODEMODE_TEST_POSTGRES_URL) names a database. Process isolation is
// measured end to end when app.New accepts isolation "process", and at the
// sandbox level with a sandbox/worker pool (this executable is its worker).
//
// The harness sits outside the pipeline: it drives the public API of app,
// runtime, sandbox, session and the HTTP service, as a user would.
package main
