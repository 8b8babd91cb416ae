package prefetch

import "fmt"

// Readahead sizes.
const (
	// DefaultInitialReadahead is the first window of automatic readahead.
	DefaultInitialReadahead = 8 << 10
	// DefaultMaxReadahead is the largest window of automatic readahead
	// (the size at which RocksDB measured the best long scans).
	DefaultMaxReadahead = 256 << 10
	// MaxReadaheadSize bounds every window, explicit or automatic: larger
	// settings are clamped to it.
	MaxReadaheadSize = 64 << 20
	// sequentialReads is the number of adjacent reads that must precede a
	// read before automatic readahead starts: the third adjacent read is the
	// first to read ahead.
	sequentialReads = 2
)

// Readahead decides how far past a block to read. It is a pure state
// machine over the offsets of block reads; it performs no I/O.
//
// In automatic mode it keeps the previous read (offset and length, block
// trailer included) and a count of adjacent reads: a read is adjacent when
// it starts exactly where the previous one ended (the test RocksDB adopted
// so that the reseeks of a batch of point lookups do not look like a scan).
// A read that is not adjacent resets the count to one and the window to the
// initial size. Once more than two adjacent reads were seen, each read that
// misses (must go to the file) takes the current window, which then doubles
// up to the maximum. Reads that hit (block cache or prefetched bytes) count
// for the pattern but neither take nor grow the window.
//
// In explicit mode every miss takes the same fixed window, from the first
// read, whatever the pattern.
//
// The zero Readahead is disabled: Eligible is always false.
type Readahead struct {
	initial, max int64
	explicit     bool
	numReads     int
	prevOff      int64 // -1 before the first read
	prevLen      int64
	size         int64 // the next window
}

// MakeReadahead returns a Readahead in automatic mode with the given first
// and largest windows; maxSize <= 0 disables it (as RocksDB's
// max_auto_readahead_size = 0 does), and initial is clamped into
// [1, maxSize].
func MakeReadahead(initial, maxSize int64) Readahead {
	maxSize = min(maxSize, MaxReadaheadSize)
	if maxSize <= 0 {
		return Readahead{prevOff: -1}
	}
	initial = min(max(initial, 1), maxSize)
	return Readahead{initial: initial, max: maxSize, prevOff: -1, size: initial}
}

// MakeExplicitReadahead returns a Readahead that reads size bytes past
// every miss (clamped to MaxReadaheadSize); size <= 0 disables it.
func MakeExplicitReadahead(size int64) Readahead {
	size = min(size, MaxReadaheadSize)
	if size <= 0 {
		return Readahead{prevOff: -1}
	}
	return Readahead{initial: size, max: size, explicit: true, prevOff: -1, size: size}
}

// Enabled reports whether r ever reads ahead.
func (r *Readahead) Enabled() bool { return r.max > 0 }

// Explicit reports whether r is in explicit mode.
func (r *Readahead) Explicit() bool { return r.explicit }

// Record notes a block read of [off, off+n), hit or miss, and reports
// whether it was adjacent to the previous one (the first read counts as
// adjacent). A read that is not adjacent resets the count and the window.
func (r *Readahead) Record(off, n int64) bool {
	seq := r.prevOff < 0 || r.prevOff+r.prevLen == off
	r.prevOff, r.prevLen = off, n
	if seq {
		r.numReads++
	} else {
		r.numReads = 1
		r.size = r.initial
	}
	return seq
}

// Eligible reports whether a read that misses now should read ahead.
func (r *Readahead) Eligible() bool {
	return r.max > 0 && (r.explicit || r.numReads > sequentialReads)
}

// Take returns the window for a read ahead that is about to be issued and
// doubles the window for the next one (automatic mode, up to the maximum).
// REQUIRES: Eligible.
func (r *Readahead) Take() int64 {
	s := r.size
	if !r.explicit {
		r.size = min(2*r.size, r.max)
	}
	return s
}

// Observe is Record followed, for a read that must go to the file
// (covered false) and is Eligible, by Take. It returns the number of bytes
// to read past the block: 0 for none.
func (r *Readahead) Observe(off, n int64, covered bool) int64 {
	r.Record(off, n)
	if covered || !r.Eligible() {
		return 0
	}
	return r.Take()
}

// Size returns the window the next Take would return.
func (r *Readahead) Size() int64 { return r.size }

// NumReads returns the number of adjacent reads in the current run.
func (r *Readahead) NumReads() int { return r.numReads }

// String describes the state, for tests and debugging.
func (r *Readahead) String() string {
	mode := "auto"
	switch {
	case !r.Enabled():
		mode = "off"
	case r.explicit:
		mode = "explicit"
	}
	return fmt.Sprintf("mode=%s reads=%d size=%d prev=[%d,+%d)", mode, r.numReads, r.size, r.prevOff, r.prevLen)
}
