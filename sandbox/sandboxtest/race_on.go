//go:build race

package sandboxtest

// RaceEnabled reports a build with the race detector, whose workers have no hard memory cap
// and run several times slower.
const RaceEnabled = true
