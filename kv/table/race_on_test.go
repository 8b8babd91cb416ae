//go:build race

package table

// raceEnabled is set in race builds, where sync.Pool drops items at random
// and allocation counts of pooled paths are not meaningful.
const raceEnabled = true
