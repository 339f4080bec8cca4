//go:build race

package catalog_test

// raceEnabled: the race detector slows the large-catalog test past its use.
const raceEnabled = true
