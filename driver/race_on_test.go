//go:build race

package driver_test

// raceEnabled is set in race builds, whose sync.Pool drops some of what it
// is given, so that allocation counts do not hold.
const raceEnabled = true
