//go:build race

package filter

// raceEnabled is true under the race detector, whose instrumentation
// allocates where a normal build does not.
const raceEnabled = true
