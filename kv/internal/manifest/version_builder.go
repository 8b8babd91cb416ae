package manifest

import (
	"fmt"
	"slices"

	"github.com/strata-db/strata/kv/internal/base"
)

// Builder accumulates version edits over a base version and produces the
// next version. Replaying a MANIFEST applies every edit to one Builder over
// an empty version; LogAndApply uses one Builder per edit.
//
// Files the base version holds keep their *FileMetadata in the result, and
// so does a file deleted from one level and added to another (a move), even
// when the edit carries a fresh copy of its metadata: reference counts are
// kept per *FileMetadata, and a moved file must never look obsolete.
//
// A Builder is not safe for concurrent use. After Apply or Finish returns an
// error, discard the Builder.
type Builder struct {
	base   *Version
	levels [NumLevels]levelChanges
	// cp[l] replaces the base version's compaction pointer for level l
	// when cpSet[l].
	cp    [NumLevels][]byte
	cpSet [NumLevels]bool

	// baseLevel and known are built on the first Apply. baseLevel maps each
	// file number of the base version to its level; known maps every file
	// number the builder has seen (in the base or added) to its metadata.
	baseLevel map[uint64]int
	known     map[uint64]*FileMetadata
}

// levelChanges is what the applied edits did to one level.
type levelChanges struct {
	deleted map[uint64]*FileMetadata // base files removed from the level
	added   map[uint64]*FileMetadata // files added to the level, not in the base there
}

// NewBuilder returns a Builder over base; nil means an empty version.
func NewBuilder(base *Version) *Builder {
	if base == nil {
		base = &Version{}
	}
	return &Builder{base: base}
}

func (b *Builder) init() {
	if b.known != nil {
		return
	}
	b.baseLevel = make(map[uint64]int)
	b.known = make(map[uint64]*FileMetadata)
	for level, files := range b.base.Levels {
		for _, f := range files {
			b.baseLevel[f.FileNum] = level
			b.known[f.FileNum] = f
		}
	}
}

// levelOf returns the level that holds file num after the edits applied so
// far, and whether any does.
func (b *Builder) levelOf(num uint64) (int, bool) {
	for level := range b.levels {
		if _, ok := b.levels[level].added[num]; ok {
			return level, true
		}
	}
	if level, ok := b.baseLevel[num]; ok {
		if _, gone := b.levels[level].deleted[num]; !gone {
			return level, true
		}
	}
	return 0, false
}

// Apply adds ve's changes: deletions first, then additions, then the
// compaction pointers. It checks that every deleted file is where the edit
// says and that no added file is already present; errors wrap
// ErrInvalidEdit. LogNum, NextFileNum and LastSeq are the VersionSet's
// business and are ignored here.
func (b *Builder) Apply(ve *VersionEdit) error {
	b.init()
	for _, df := range ve.sortedDeleted() {
		if df.Level < 0 || df.Level >= NumLevels {
			return fmt.Errorf("%w: deleted file %06d: level %d out of range", ErrInvalidEdit, df.FileNum, df.Level)
		}
		lc := &b.levels[df.Level]
		if _, ok := lc.added[df.FileNum]; ok {
			delete(lc.added, df.FileNum)
			continue
		}
		_, gone := lc.deleted[df.FileNum]
		if level, ok := b.baseLevel[df.FileNum]; ok && level == df.Level && !gone {
			if lc.deleted == nil {
				lc.deleted = make(map[uint64]*FileMetadata)
			}
			lc.deleted[df.FileNum] = b.known[df.FileNum]
			continue
		}
		return fmt.Errorf("%w: deletes file %06d from L%d, which does not hold it", ErrInvalidEdit, df.FileNum, df.Level)
	}
	for _, nf := range ve.NewFiles {
		if nf.Meta == nil {
			return fmt.Errorf("%w: new file with nil metadata", ErrInvalidEdit)
		}
		num := nf.Meta.FileNum
		if nf.Level < 0 || nf.Level >= NumLevels {
			return fmt.Errorf("%w: new file %06d: level %d out of range", ErrInvalidEdit, num, nf.Level)
		}
		if err := nf.Meta.validate(); err != nil {
			return fmt.Errorf("%w: new file: %v", ErrInvalidEdit, err)
		}
		if level, ok := b.levelOf(num); ok {
			return fmt.Errorf("%w: adds file %06d to L%d, but L%d already holds it", ErrInvalidEdit, num, nf.Level, level)
		}
		m := nf.Meta
		if old, ok := b.known[num]; ok {
			if !sameDurable(old, m) {
				return fmt.Errorf("%w: re-adds file %06d as %s, but it was %s", ErrInvalidEdit, num, m, old)
			}
			m = old
		}
		b.known[num] = m
		lc := &b.levels[nf.Level]
		if level, ok := b.baseLevel[num]; ok && level == nf.Level {
			// Deleted and re-added at the same level: no change.
			delete(lc.deleted, num)
			continue
		}
		if lc.added == nil {
			lc.added = make(map[uint64]*FileMetadata)
		}
		lc.added[num] = m
	}
	for _, cp := range ve.CompactPointers {
		if cp.Level < 0 || cp.Level >= NumLevels {
			return fmt.Errorf("%w: compaction pointer level %d out of range", ErrInvalidEdit, cp.Level)
		}
		if !base.Valid(cp.Key) {
			return fmt.Errorf("%w: compaction pointer %q for L%d is not an internal key", ErrInvalidEdit, cp.Key, cp.Level)
		}
		b.cp[cp.Level] = clone(cp.Key)
		b.cpSet[cp.Level] = true
	}
	return nil
}

// Finish returns the version the applied edits produce. It holds one
// reference, owned by the caller, and references its files. Levels without
// changes share the base version's slices. Finish fails, wrapping
// ErrInvalidEdit, when the result breaks the level invariants
// (Version.CheckOrdering); nothing is referenced then.
func (b *Builder) Finish() (*Version, error) {
	v := &Version{compactPointers: b.base.compactPointers}
	for level := range v.Levels {
		if b.cpSet[level] {
			v.compactPointers[level] = b.cp[level]
		}
		lc := &b.levels[level]
		baseFiles := b.base.Levels[level]
		if len(lc.deleted) == 0 && len(lc.added) == 0 {
			v.Levels[level] = baseFiles
			continue
		}
		files := make([]*FileMetadata, 0, len(baseFiles)-len(lc.deleted)+len(lc.added))
		for _, f := range baseFiles {
			if _, gone := lc.deleted[f.FileNum]; !gone {
				files = append(files, f)
			}
		}
		for _, f := range lc.added {
			files = append(files, f)
		}
		if level == 0 {
			slices.SortFunc(files, func(x, y *FileMetadata) int {
				switch {
				case l0Less(x, y):
					return -1
				case l0Less(y, x):
					return 1
				}
				return 0
			})
		} else {
			slices.SortFunc(files, func(x, y *FileMetadata) int { return base.Compare(x.Smallest, y.Smallest) })
		}
		if len(files) == 0 {
			files = nil
		}
		v.Levels[level] = files
	}
	if err := v.checkOrdering(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidEdit, err)
	}
	v.refs.Store(1)
	v.refFiles()
	return v, nil
}
