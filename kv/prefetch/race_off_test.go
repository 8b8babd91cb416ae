//go:build !race

package prefetch

const raceEnabled = false
