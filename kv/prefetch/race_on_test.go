//go:build race

package prefetch

// raceEnabled is set in race builds, which run every step far slower.
const raceEnabled = true
