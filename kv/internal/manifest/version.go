package manifest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/strata-db/strata/kv/internal/base"
)

// Version is an immutable snapshot of which files form each level.
//
// Versions are made by a [Builder] (and installed by a [VersionSet]); a
// Version literal may be used with the pure functions of this package
// (Overlaps, Pick, CheckOrdering) but not with Ref and Unref.
//
// A Version is safe for concurrent use: nothing in it changes after it is
// built, apart from the atomic reference counts. Callers must not modify
// Levels or the files' recorded fields.
type Version struct {
	// Levels holds the files of each level. L0 is ordered oldest first (by
	// LargestSeq, then SmallestSeq, then FileNum); L1 and below are sorted by
	// Smallest and do not overlap. See the package documentation.
	Levels [NumLevels][]*FileMetadata

	// compactPointers[l] is the largest key of the last compaction out of
	// level l; the picker starts its next search at level l after it, so
	// that successive compactions sweep the key space. nil starts at the
	// beginning.
	compactPointers [NumLevels][]byte

	// refs counts the holders of the version: the VersionSet while the
	// version is current, and every reader.
	refs atomic.Int32
	// list is the VersionSet's list of live versions; nil for versions no
	// VersionSet tracks.
	list       *versionList
	prev, next *Version // neighbours in list; guarded by list.mu
}

// Ref adds a reference to v. A reader that keeps a version beyond the
// engine's mutex (an iterator, a compaction) refs it and unrefs it when done.
// Ref panics if v has no references: such a version is already released
// (or was never built by a Builder), and using it would read deleted files.
func (v *Version) Ref() {
	if v.refs.Add(1) <= 1 {
		panic("manifest: Ref of a released version")
	}
}

// Unref drops a reference to v. When the last one goes, every file that no
// other live version contains becomes obsolete and is queued on the
// VersionSet for TakeObsolete. Unref may be called from any goroutine,
// without the engine's mutex. It panics if v has no references left: the
// reference counts are broken and continuing could delete live files.
func (v *Version) Unref() {
	switch n := v.refs.Add(-1); {
	case n == 0:
		v.release(true)
	case n < 0:
		panic("manifest: Unref of a released version")
	}
}

// Refs returns the number of references to v.
func (v *Version) Refs() int32 { return v.refs.Load() }

// release removes v from its list and drops its references to its files.
// With report, files no other version contains are queued as obsolete;
// without, they are forgotten (a version that was built but never
// installed: its new files may yet be named by a MANIFEST record whose fate
// is unknown, so they must not be deleted).
func (v *Version) release(report bool) {
	l := v.list
	if l != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.removeLocked(v)
	}
	for level := range v.Levels {
		for _, f := range v.Levels[level] {
			if f.refs.Add(-1) == 0 && report && l != nil {
				l.obsolete = append(l.obsolete, f)
			}
		}
	}
}

// refFiles adds v's reference to each of its files.
func (v *Version) refFiles() {
	for level := range v.Levels {
		for _, f := range v.Levels[level] {
			f.refs.Add(1)
		}
	}
}

// CompactPointer returns the key after which the picker next looks for a
// file to compact out of level, or nil.
func (v *Version) CompactPointer(level int) []byte {
	if level < 0 || level >= NumLevels {
		return nil
	}
	return v.compactPointers[level]
}

// Overlaps returns the files of level that may hold an entry with a user key
// in [lower, upper], both inclusive; nil bounds are unbounded. In L0 every
// file whose range overlaps is returned, oldest first; L1 and below are
// searched by binary search and the result is in key order. The returned
// slice aliases the version's for L1 and below and must not be modified.
func (v *Version) Overlaps(level int, lower, upper []byte) []*FileMetadata {
	if level < 0 || level >= NumLevels {
		return nil
	}
	if lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
		return nil
	}
	if level == 0 {
		return v.AppendOverlaps(nil, 0, lower, upper)
	}
	return overlapsSorted(v.Levels[level], lower, upper)
}

// AppendOverlaps appends the files Overlaps returns to dst and returns the
// extended slice: a reader that gathers L0's overlapping files for every
// iterator it opens reuses one slice instead of allocating one.
func (v *Version) AppendOverlaps(dst []*FileMetadata, level int, lower, upper []byte) []*FileMetadata {
	if level != 0 {
		return append(dst, v.Overlaps(level, lower, upper)...)
	}
	if lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
		return dst
	}
	for _, f := range v.Levels[0] {
		if f.Overlaps(lower, upper) {
			dst = append(dst, f)
		}
	}
	return dst
}

// OverlapIndices is Overlaps for L1 and below as indices: the files of
// level that may hold a user key in [lower, upper] are Levels[level][i:j].
func (v *Version) OverlapIndices(level int, lower, upper []byte) (i, j int) {
	if level <= 0 || level >= NumLevels || (lower != nil && upper != nil && bytes.Compare(lower, upper) > 0) {
		return 0, 0
	}
	return userOverlapIndices(v.Levels[level], lower, upper)
}

// overlapsSorted is Overlaps over one sorted, non-overlapping level.
func overlapsSorted(files []*FileMetadata, lower, upper []byte) []*FileMetadata {
	i, j := userOverlapIndices(files, lower, upper)
	if i == j {
		return nil
	}
	return files[i:j:j]
}

// userOverlapIndices returns the range [i, j) of the files of a sorted
// level that overlap the user keys [lower, upper] (nil is unbounded).
func userOverlapIndices(files []*FileMetadata, lower, upper []byte) (int, int) {
	i := 0
	if lower != nil {
		// Largest bounds ascend with Smallest in a sorted level, so the
		// first file reaching lower is found by binary search.
		i = sort.Search(len(files), func(j int) bool { return reaches(files[j].Largest, lower) })
	}
	j := i
	for j < len(files) && (upper == nil || bytes.Compare(files[j].SmallestUserKey(), upper) <= 0) {
		j++
	}
	return i, j
}

// LevelSize returns the total size in bytes of the files of level.
func (v *Version) LevelSize(level int) uint64 {
	if level < 0 || level >= NumLevels {
		return 0
	}
	var n uint64
	for _, f := range v.Levels[level] {
		n += f.Size
	}
	return n
}

// NumFiles returns the number of files of level.
func (v *Version) NumFiles(level int) int {
	if level < 0 || level >= NumLevels {
		return 0
	}
	return len(v.Levels[level])
}

// l0Less is the order of L0: oldest first.
func l0Less(a, b *FileMetadata) bool {
	if a.LargestSeq != b.LargestSeq {
		return a.LargestSeq < b.LargestSeq
	}
	if a.SmallestSeq != b.SmallestSeq {
		return a.SmallestSeq < b.SmallestSeq
	}
	return a.FileNum < b.FileNum
}

// CheckOrdering verifies the level invariants (see the package
// documentation) and every file's own metadata. It returns an error naming
// the first offending files; a version built by a Builder always passes.
func (v *Version) CheckOrdering() error {
	if err := v.checkOrdering(); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return nil
}

func (v *Version) checkOrdering() error {
	seen := make(map[uint64]int)
	for level, files := range v.Levels {
		for i, f := range files {
			if f == nil {
				return fmt.Errorf("L%d: nil file at position %d", level, i)
			}
			if err := f.validate(); err != nil {
				return fmt.Errorf("L%d: %v", level, err)
			}
			if l, ok := seen[f.FileNum]; ok {
				return fmt.Errorf("file %06d is in both L%d and L%d", f.FileNum, l, level)
			}
			seen[f.FileNum] = level
			if i == 0 {
				continue
			}
			prev := files[i-1]
			if level == 0 {
				if !l0Less(prev, f) {
					return fmt.Errorf("L0 out of order: %s (seqs %d-%d) before %s (seqs %d-%d)",
						prev, prev.SmallestSeq, prev.LargestSeq, f, f.SmallestSeq, f.LargestSeq)
				}
				continue
			}
			if base.Compare(prev.Largest, f.Smallest) >= 0 {
				return fmt.Errorf("L%d files overlap or are out of order: %s then %s", level, prev, f)
			}
		}
	}
	return nil
}

// String renders v one level per line, for tests and debugging.
func (v *Version) String() string {
	var b strings.Builder
	for level, files := range v.Levels {
		if len(files) == 0 {
			continue
		}
		fmt.Fprintf(&b, "L%d:\n", level)
		for _, f := range files {
			fmt.Fprintf(&b, "  %s size=%d", f, f.Size)
			if level == 0 {
				fmt.Fprintf(&b, " seqs=%d-%d", f.SmallestSeq, f.LargestSeq)
			}
			if f.Compacting {
				b.WriteString(" compacting")
			}
			b.WriteByte('\n')
		}
	}
	for level, p := range v.compactPointers {
		if p != nil {
			fmt.Fprintf(&b, "compact-pointer L%d: %s\n", level, formatKey(p))
		}
	}
	if b.Len() == 0 {
		return "(empty)\n"
	}
	return b.String()
}
