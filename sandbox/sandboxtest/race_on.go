//go:build race

package sandboxtest

import "time"

// RaceEnabled reports a build with the race detector, whose workers have no hard memory cap
// and run several times slower.
const RaceEnabled = true

// CorpusTimeout is the time a corpus program gets: the corpus runs all its programs at once,
// and the race detector runs each several times slower.
const CorpusTimeout = 60 * time.Second
