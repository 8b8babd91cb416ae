package manifest

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/strata-db/strata/kv/internal/base"
)

// NumLevels is the number of levels of the LSM tree, L0 to L6. Level numbers
// are recorded in the MANIFEST; the value is part of the on-disk format.
const NumLevels = 7

// FileMetadata describes one SST file. Everything but Compacting and the
// reference count is recorded in the MANIFEST and never changes after the
// file is added to a version; versions share the same *FileMetadata for as
// long as the file lives, including when it moves between levels.
type FileMetadata struct {
	// FileNum names the file (see the engine's file naming); unique among
	// every file the database ever created.
	FileNum uint64
	// Size is the file's length in bytes.
	Size uint64
	// Smallest and Largest are internal keys bounding every point key and
	// range tombstone in the file, both inclusive. Largest may be the
	// exclusive-end sentinel of a range tombstone
	// (base.MakeRangeDeleteSentinel), in which case the file holds no entry
	// of Largest's user key.
	Smallest, Largest []byte
	// SmallestSeq and LargestSeq bound the sequence numbers of the file's
	// entries.
	SmallestSeq, LargestSeq base.SeqNum
	// NumEntries counts point entries (sets and point tombstones),
	// NumDeletions the point tombstones among them, and NumRangeDeletes the
	// range tombstones.
	NumEntries, NumDeletions, NumRangeDeletes uint64

	// Compacting is set while the file is an input of a running compaction
	// (see Compaction.MarkCompacting); the picker skips such files. Runtime
	// only, never encoded. Guarded by the engine's mutex.
	Compacting bool

	// refs counts the versions that contain the file. It reaches zero only
	// when no version that a reader or the VersionSet holds contains the
	// file; the file is then obsolete.
	refs atomic.Int32
}

// Refs returns the number of versions that contain the file.
func (m *FileMetadata) Refs() int32 { return m.refs.Load() }

// SmallestUserKey returns the user key of Smallest.
func (m *FileMetadata) SmallestUserKey() []byte { return base.UserKey(m.Smallest) }

// LargestUserKey returns the user key of Largest.
func (m *FileMetadata) LargestUserKey() []byte { return base.UserKey(m.Largest) }

// Overlaps reports whether the file may hold an entry with a user key in
// [lower, upper], both inclusive; nil means unbounded. A Largest that is a
// range-deletion sentinel excludes its own user key.
func (m *FileMetadata) Overlaps(lower, upper []byte) bool {
	if upper != nil && bytes.Compare(base.UserKey(m.Smallest), upper) > 0 {
		return false
	}
	return lower == nil || reaches(m.Largest, lower)
}

// reaches reports whether a file whose largest bound is largest may hold an
// entry of user key ukey or of a larger one.
func reaches(largest, ukey []byte) bool {
	c := bytes.Compare(base.UserKey(largest), ukey)
	return c > 0 || (c == 0 && !base.IsRangeDeleteSentinel(largest))
}

// String renders the file as "000005:[a#5,SET-c#3,SET]".
func (m *FileMetadata) String() string {
	return fmt.Sprintf("%06d:[%s-%s]", m.FileNum, formatKey(m.Smallest), formatKey(m.Largest))
}

// formatKey renders an internal key compactly for errors and test output:
// printable user keys unquoted, the sentinel sequence number as "max".
func formatKey(ik []byte) string {
	if !base.Valid(ik) {
		return fmt.Sprintf("invalid(%q)", ik)
	}
	uk := base.UserKey(ik)
	var b strings.Builder
	printable := true
	for _, c := range uk {
		if c < 0x21 || c > 0x7e || c == '#' || c == '-' || c == '[' || c == ']' {
			printable = false
			break
		}
	}
	if printable {
		b.Write(uk)
	} else {
		fmt.Fprintf(&b, "%q", uk)
	}
	t := base.Trailer(ik)
	if seq := base.SeqOf(t); seq == base.SeqNumMax {
		b.WriteString("#max,")
	} else {
		fmt.Fprintf(&b, "#%d,", seq)
	}
	b.WriteString(base.KindOf(t).String())
	return b.String()
}

// validate checks what a single file's metadata must satisfy on its own.
func (m *FileMetadata) validate() error {
	switch {
	case m.FileNum == 0:
		return fmt.Errorf("file number 0 is never allocated")
	case !base.Valid(m.Smallest):
		return fmt.Errorf("file %06d: smallest key %q is not an internal key", m.FileNum, m.Smallest)
	case !base.Valid(m.Largest):
		return fmt.Errorf("file %06d: largest key %q is not an internal key", m.FileNum, m.Largest)
	case base.Compare(m.Smallest, m.Largest) > 0:
		return fmt.Errorf("file %06d: smallest key %s sorts after largest key %s", m.FileNum, formatKey(m.Smallest), formatKey(m.Largest))
	case m.SmallestSeq > m.LargestSeq:
		return fmt.Errorf("file %06d: smallest sequence number %d exceeds largest %d", m.FileNum, m.SmallestSeq, m.LargestSeq)
	}
	return nil
}

// sameDurable reports whether a and b agree on every recorded field.
func sameDurable(a, b *FileMetadata) bool {
	return a.FileNum == b.FileNum && a.Size == b.Size &&
		bytes.Equal(a.Smallest, b.Smallest) && bytes.Equal(a.Largest, b.Largest) &&
		a.SmallestSeq == b.SmallestSeq && a.LargestSeq == b.LargestSeq &&
		a.NumEntries == b.NumEntries && a.NumDeletions == b.NumDeletions &&
		a.NumRangeDeletes == b.NumRangeDeletes
}
