package manifest

import (
	"fmt"
	"strings"
)

// LevelMetrics describes one level of a version.
type LevelMetrics struct {
	NumFiles       int
	Size           uint64 // bytes
	NumCompacting  int    // files that are inputs of a running compaction
	CompactingSize uint64 // their bytes
	// Score is the level's compaction score (see LevelScores); a level
	// scoring at least 1 wants a compaction.
	Score float64
	// MaxBytes is the level's target size; 0 for L0, which is bounded by
	// file count.
	MaxBytes uint64
}

// Metrics holds the metrics of every level, L0 first.
type Metrics [NumLevels]LevelMetrics

// ComputeMetrics returns the per-level metrics of v under opts. It reads
// Compacting flags, so it needs the engine's mutex for exact counts.
func ComputeMetrics(v *Version, opts PickerOptions) Metrics {
	var m Metrics
	scores := LevelScores(v, opts)
	_, targets := LevelTargets(v, opts)
	for level, files := range v.Levels {
		lm := &m[level]
		lm.NumFiles = len(files)
		for _, f := range files {
			lm.Size += f.Size
			if f.Compacting {
				lm.NumCompacting++
				lm.CompactingSize += f.Size
			}
		}
		lm.Score = scores[level]
		lm.MaxBytes = targets[level]
	}
	return m
}

// Total returns the file count and bytes over all levels.
func (m *Metrics) Total() (files int, size uint64) {
	for _, lm := range m {
		files += lm.NumFiles
		size += lm.Size
	}
	return files, size
}

// String renders the metrics as a table, one line per level and a total.
func (m *Metrics) String() string {
	var b strings.Builder
	b.WriteString("level  files        size  score  compacting\n")
	for level, lm := range m {
		fmt.Fprintf(&b, "L%d    %6d  %10s  %5.2f  %d (%s)\n",
			level, lm.NumFiles, humanBytes(lm.Size), lm.Score, lm.NumCompacting, humanBytes(lm.CompactingSize))
	}
	files, size := m.Total()
	fmt.Fprintf(&b, "total %6d  %10s\n", files, humanBytes(size))
	return b.String()
}

// humanBytes renders n with a binary unit.
func humanBytes(n uint64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%dB", n)
	}
	f := float64(n)
	i := -1
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return fmt.Sprintf("%.1f%ciB", f, units[i])
}
