package kv

import (
	"fmt"
	"strings"

	"github.com/strata-db/strata/kv/internal/manifest"
	"github.com/strata-db/strata/kv/stats"
)

// NumLevels is the number of levels of the LSM tree.
const NumLevels = manifest.NumLevels

// LevelMetrics describe one level of the tree.
type LevelMetrics struct {
	NumFiles int
	Size     uint64  // bytes
	Score    float64 // compaction score: at least 1 wants a compaction
	MaxBytes uint64  // target size; 0 for level 0, bounded by file count
}

// Metrics describe the shape and work of a database at one moment.
type Metrics struct {
	Levels          [NumLevels]LevelMetrics
	MemtableSize    int // bytes in use in the mutable memtable
	NumImmutable    int // memtables waiting for a flush
	NumSnapshots    int
	BlockCacheUsage int64
	BlockCacheSize  int64
	Counters        stats.Snapshot
}

// WriteAmp is the write amplification: bytes written to tables by flushes
// and compactions, plus the log, per byte of user data committed.
func (m *Metrics) WriteAmp() float64 {
	user := m.Counters.Get(stats.BytesWritten)
	if user == 0 {
		return 0
	}
	written := m.Counters.Get(stats.FlushBytes) + m.Counters.Get(stats.CompactionWritten) + m.Counters.Get(stats.WALBytes)
	return float64(written) / float64(user)
}

// Metrics returns the current metrics.
func (d *DB) Metrics() *Metrics {
	m := &Metrics{Counters: d.stats.Snapshot()}
	d.mu.Lock()
	lm := manifest.ComputeMetrics(d.mu.versions.Current(), d.pickerOptions())
	for i := range lm {
		m.Levels[i] = LevelMetrics{NumFiles: lm[i].NumFiles, Size: lm[i].Size, Score: lm[i].Score, MaxBytes: lm[i].MaxBytes}
	}
	if d.mu.mem != nil {
		m.MemtableSize = d.mu.mem.Size()
	}
	m.NumImmutable = len(d.mu.imms)
	m.NumSnapshots = d.mu.snapshots.n
	d.mu.Unlock()
	m.BlockCacheUsage = d.cache.Usage()
	m.BlockCacheSize = d.cache.Capacity()
	return m
}

// String renders the metrics as a table, one line per level.
func (m *Metrics) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "level  files        size   score\n")
	var files int
	var size uint64
	for i, l := range m.Levels {
		fmt.Fprintf(&b, "%5d  %5d  %10s  %6.2f\n", i, l.NumFiles, humanBytes(l.Size), l.Score)
		files += l.NumFiles
		size += l.Size
	}
	fmt.Fprintf(&b, "total  %5d  %10s\n", files, humanBytes(size))
	fmt.Fprintf(&b, "memtable %s, %d immutable; %d snapshots; block cache %s of %s\n",
		humanBytes(uint64(m.MemtableSize)), m.NumImmutable, m.NumSnapshots,
		humanBytes(uint64(m.BlockCacheUsage)), humanBytes(uint64(m.BlockCacheSize)))
	fmt.Fprintf(&b, "flushes %d, compactions %d, write amplification %.2f\n",
		m.Counters.Get(stats.Flushes), m.Counters.Get(stats.Compactions), m.WriteAmp())
	return b.String()
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
