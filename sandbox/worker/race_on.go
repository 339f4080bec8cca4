//go:build race

package worker

// raceEnabled is set when the race detector is: its shadow memory is mapped as data, so a
// worker built with it cannot have a hard memory cap.
const raceEnabled = true
