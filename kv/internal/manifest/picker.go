package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/strata-db/strata/kv/internal/base"
)

// PickerOptions shape the LSM tree. The zero value means defaults.
type PickerOptions struct {
	// L0CompactionTrigger is the number of L0 files at which L0 compacts
	// (its score reaches 1). Default 4.
	L0CompactionTrigger int
	// L0StopWritesTrigger is the number of L0 files at which the engine
	// stalls writes until compactions catch up (see StallWrites). Default
	// 20; at least L0CompactionTrigger.
	L0StopWritesTrigger int
	// LBaseMaxBytes is the target size of L1, the base level. Default
	// 64 MiB.
	LBaseMaxBytes uint64
	// LevelMultiplier is the ratio of each level's target size to the one
	// above: L2 targets LBaseMaxBytes*LevelMultiplier, and so on. Default
	// 10; at least 1.
	LevelMultiplier float64
	// TargetFileSize is the size of the files a compaction writes into L1.
	// Default 8 MiB.
	TargetFileSize uint64
	// TargetFileSizeMultiplier grows the target file size per level below
	// L1. Default 1 (the same size at every level); at least 1.
	TargetFileSizeMultiplier float64
	// DynamicLevelBytes sizes the levels from the bottom up, as RocksDB's
	// level_compaction_dynamic_level_bytes does: the last level's target is
	// its actual size, each level above it LevelMultiplier times smaller,
	// and L0 compacts straight into the base level, the highest level whose
	// target is at least LBaseMaxBytes/LevelMultiplier; levels above the
	// base stay empty. A small database then has two or three sorted runs
	// instead of one per level, which is what reads pay for.
	DynamicLevelBytes bool
}

// EnsureDefaults fills zero fields with their defaults.
func (o *PickerOptions) EnsureDefaults() {
	if o.L0CompactionTrigger == 0 {
		o.L0CompactionTrigger = 4
	}
	if o.L0StopWritesTrigger == 0 {
		o.L0StopWritesTrigger = max(20, o.L0CompactionTrigger)
	}
	if o.LBaseMaxBytes == 0 {
		o.LBaseMaxBytes = 64 << 20
	}
	if o.LevelMultiplier == 0 {
		o.LevelMultiplier = 10
	}
	if o.TargetFileSize == 0 {
		o.TargetFileSize = 8 << 20
	}
	if o.TargetFileSizeMultiplier == 0 {
		o.TargetFileSizeMultiplier = 1
	}
}

// Validate returns an error listing every invalid field, or nil. Call it
// after EnsureDefaults.
func (o *PickerOptions) Validate() error {
	var errs []error
	if o.L0CompactionTrigger < 1 {
		errs = append(errs, fmt.Errorf("manifest: PickerOptions.L0CompactionTrigger = %d: must be at least 1", o.L0CompactionTrigger))
	}
	if o.L0StopWritesTrigger < o.L0CompactionTrigger {
		errs = append(errs, fmt.Errorf("manifest: PickerOptions.L0StopWritesTrigger = %d: must be at least L0CompactionTrigger (%d)", o.L0StopWritesTrigger, o.L0CompactionTrigger))
	}
	if !(o.LevelMultiplier >= 1) || math.IsInf(o.LevelMultiplier, 0) {
		errs = append(errs, fmt.Errorf("manifest: PickerOptions.LevelMultiplier = %g: must be finite and at least 1", o.LevelMultiplier))
	}
	if !(o.TargetFileSizeMultiplier >= 1) || math.IsInf(o.TargetFileSizeMultiplier, 0) {
		errs = append(errs, fmt.Errorf("manifest: PickerOptions.TargetFileSizeMultiplier = %g: must be finite and at least 1", o.TargetFileSizeMultiplier))
	}
	return errors.Join(errs...)
}

// MaxBytes returns the static target size of level (1 and below); a level
// bigger than its target scores above 1. L0 has no byte target. With
// DynamicLevelBytes the targets depend on the version: see LevelTargets.
func (o PickerOptions) MaxBytes(level int) uint64 {
	o.EnsureDefaults()
	if level < 1 {
		return 0
	}
	return scale(o.LBaseMaxBytes, o.LevelMultiplier, level-1)
}

// LevelTargets returns the base level (the level L0 compacts into) and the
// target size of every level of v. Without DynamicLevelBytes the base level
// is L1 and the targets are MaxBytes. With it, the targets are derived from
// the size of the last level (see DynamicLevelBytes); a level above the
// base level gets target 0: anything there is compacted down.
func LevelTargets(v *Version, opts PickerOptions) (baseLevel int, targets [NumLevels]uint64) {
	opts.EnsureDefaults()
	if !opts.DynamicLevelBytes {
		for level := 1; level < NumLevels; level++ {
			targets[level] = opts.MaxBytes(level)
		}
		return 1, targets
	}
	last := NumLevels - 1
	size := v.LevelSize(last)
	for level := 1; level < last; level++ {
		// Data above the last level that has not reached it yet counts
		// towards its size, so that a database filling up from empty does
		// not keep its base level at the bottom.
		size = max(size, v.LevelSize(level))
	}
	baseLevel = last
	cur := float64(size)
	for baseLevel > 1 && cur > float64(opts.LBaseMaxBytes) {
		cur /= opts.LevelMultiplier
		baseLevel--
	}
	t := float64(max(size, opts.LBaseMaxBytes))
	for level := last; level >= baseLevel; level-- {
		targets[level] = uint64(t)
		t = max(t/opts.LevelMultiplier, float64(opts.LBaseMaxBytes))
	}
	return baseLevel, targets
}

// TargetFileSizeAt returns the target size of output files written into
// level.
func (o PickerOptions) TargetFileSizeAt(level int) uint64 {
	o.EnsureDefaults()
	return scale(o.TargetFileSize, o.TargetFileSizeMultiplier, max(level-1, 0))
}

// scale returns n*mult^exp, saturating at the largest uint64.
func scale(n uint64, mult float64, exp int) uint64 {
	f := float64(n) * math.Pow(mult, float64(exp))
	if f >= math.MaxUint64 || math.IsNaN(f) {
		return math.MaxUint64
	}
	return uint64(f)
}

// StallWrites reports whether L0 holds enough files that the engine should
// stop accepting writes until a compaction shrinks it.
func StallWrites(v *Version, opts PickerOptions) bool {
	opts.EnsureDefaults()
	return len(v.Levels[0]) >= opts.L0StopWritesTrigger
}

// LevelScores returns each level's compaction score: for L0 the number of
// files not being compacted over L0CompactionTrigger, for L1 to L5 the bytes
// not being compacted over MaxBytes. The last level has nowhere to compact
// to and scores 0.
func LevelScores(v *Version, opts PickerOptions) [NumLevels]float64 {
	opts.EnsureDefaults()
	var scores [NumLevels]float64
	n := 0
	for _, f := range v.Levels[0] {
		if !f.Compacting {
			n++
		}
	}
	scores[0] = float64(n) / float64(opts.L0CompactionTrigger)
	baseLevel, targets := LevelTargets(v, opts)
	for level := 1; level < NumLevels-1; level++ {
		var size uint64
		for _, f := range v.Levels[level] {
			if !f.Compacting {
				size += f.Size
			}
		}
		switch {
		case level < baseLevel:
			// Above the base level: whatever is here moves down.
			if size > 0 {
				scores[level] = 1 + float64(size)/float64(opts.LBaseMaxBytes)
			}
		default:
			scores[level] = float64(size) / float64(targets[level])
		}
	}
	return scores
}

// Pick returns the compaction the version needs most, or nil when no level
// scores at least 1 or no level that does can be compacted now.
//
// Levels are tried from the highest score down (on a tie, the smaller level
// number first). L0 compacts into L1: starting from its oldest file not being
// compacted, it takes every L0 file whose range overlaps the set, repeated
// until the set stops growing, so that no L0 file left behind is older
// than a file taken and overlaps it. A level L1 to L5 compacts one file into
// the next level, chosen round-robin after the level's compaction pointer
// (see Compaction.NewEdit) so that successive compactions sweep the key
// space; neighbours sharing a boundary user key come along. The overlapping
// files of the output level join, again with neighbours sharing a boundary
// user key.
//
// A candidate is skipped when any of its inputs is being compacted. That
// alone keeps concurrent compactions apart: the inputs of one compaction
// span one contiguous key range (L0 inputs are closed under overlap, and
// the output-level inputs are everything overlapping them), so the key
// ranges of two compactions into the same level can only meet in a file
// both would take, and that file is marked. Their outputs therefore never
// overlap, and no compaction writes keys below another one's output level
// inside the range that one judged bottommost. Pick reads Compacting flags
// and so needs the engine's mutex; it changes nothing.
func Pick(v *Version, opts PickerOptions) *Compaction {
	opts.EnsureDefaults()
	scores := LevelScores(v, opts)
	order := make([]int, NumLevels)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return scores[order[i]] > scores[order[j]] })
	for _, level := range order {
		if scores[level] < 1 {
			break
		}
		var c *Compaction
		if level == 0 {
			c = pickL0(v, opts)
		} else {
			c = pickLevel(v, level, opts)
		}
		if c != nil {
			c.Score = scores[level]
			return c
		}
	}
	return nil
}

// PickLevel0 returns a compaction of level 0 into the level below it, as
// Pick makes one, whatever level 0's score, or nil when level 0 is empty
// or its files are being compacted: for reads that keep meeting level-0
// tables over the keys they scan (a burst of writes, flushed, then none to
// fill level 0 up to its trigger). Like Pick it needs the engine's mutex.
func PickLevel0(v *Version, opts PickerOptions) *Compaction {
	if len(v.Levels[0]) == 0 {
		return nil
	}
	opts.EnsureDefaults()
	return pickL0(v, opts)
}

func pickL0(v *Version, opts PickerOptions) *Compaction {
	l0 := v.Levels[0]
	base, _ := LevelTargets(v, opts)
	// L0 compacts into the base level, unless a level above it still holds
	// data (the base level moved down): then into the first such level, so
	// that no newer data lands below older data.
	out := base
	for level := 1; level < base; level++ {
		if len(v.Levels[level]) > 0 {
			out = level
			break
		}
	}
	for _, f := range l0 {
		if f.Compacting {
			continue
		}
		inputs := l0Closure(l0, f.Smallest, f.Largest)
		if anyCompacting(inputs) {
			continue
		}
		if c := setup(v, 0, out, inputs, opts); c != nil {
			return c
		}
	}
	return nil
}

func pickLevel(v *Version, level int, opts PickerOptions) *Compaction {
	files := v.Levels[level]
	if len(files) == 0 {
		return nil
	}
	start := 0
	if p := v.compactPointers[level]; p != nil {
		start = sort.Search(len(files), func(i int) bool { return base.Compare(files[i].Largest, p) > 0 })
	}
	for k := range files {
		idx := (start + k) % len(files)
		if files[idx].Compacting {
			continue
		}
		i, j := expandSorted(files, idx, idx+1)
		if anyCompacting(files[i:j]) {
			continue
		}
		if c := setup(v, level, level+1, files[i:j:j], opts); c != nil {
			return c
		}
	}
	return nil
}

// PickManual returns a compaction of the files of level that overlap the
// user keys [lower, upper] (both inclusive; nil is unbounded) into the next
// level, or of the last level into itself (to drop tombstones), for the
// engine's Compact(start, end). Unlike Pick it takes every overlapping file
// of the level, not one. It returns nil when nothing at the level overlaps
// or when an input is being compacted; the engine tells the two apart with
// Version.Overlaps and retries the second after the running compactions
// finish.
func PickManual(v *Version, level int, lower, upper []byte, opts PickerOptions) *Compaction {
	if level < 0 || level >= NumLevels {
		return nil
	}
	if lower != nil && upper != nil && bytes.Compare(lower, upper) > 0 {
		return nil
	}
	opts.EnsureDefaults()
	var inputs []*FileMetadata
	out := level + 1
	if level == 0 {
		overlapping := v.Overlaps(0, lower, upper)
		if len(overlapping) == 0 {
			return nil
		}
		s, l := bounds(overlapping)
		inputs = l0Closure(v.Levels[0], s, l)
	} else {
		files := v.Levels[level]
		i, j := userOverlapIndices(files, lower, upper)
		if i == j {
			return nil
		}
		i, j = expandSorted(files, i, j)
		inputs = files[i:j:j]
		if level == NumLevels-1 {
			out = level
		}
	}
	if anyCompacting(inputs) {
		return nil
	}
	c := setup(v, level, out, inputs, opts)
	if c != nil {
		c.Manual = true
		c.TrivialMove = c.TrivialMove && out != level
	}
	return c
}

// setup completes a compaction of inputs from level into out: output-level
// inputs, grandparents and flags. It returns nil when an output-level input
// is being compacted.
func setup(v *Version, level, out int, inputs []*FileMetadata, opts PickerOptions) *Compaction {
	c := &Compaction{Level: level, OutputLevel: out}
	c.Inputs[0] = inputs
	s, l := bounds(inputs)
	if out != level {
		files := v.Levels[out]
		i, j := overlapIndices(files, s, l)
		if i < j {
			i, j = expandSorted(files, i, j)
			c.Inputs[1] = files[i:j:j]
			if anyCompacting(c.Inputs[1]) {
				return nil
			}
			s1, l1 := bounds(c.Inputs[1])
			s, l = minKey(s, s1), maxKey(l, l1)
		}
	}
	c.Smallest, c.Largest = s, l
	if out+1 < NumLevels {
		i, j := overlapIndices(v.Levels[out+1], s, l)
		if i < j {
			c.Grandparents = v.Levels[out+1][i:j:j]
		}
	}
	c.Bottommost = true
	for below := out + 1; below < NumLevels; below++ {
		if i, j := overlapIndices(v.Levels[below], s, l); i < j {
			c.Bottommost = false
			break
		}
	}
	c.MaxOutputFileSize = opts.TargetFileSizeAt(out)
	c.MaxGrandparentOverlapBytes = 10 * c.MaxOutputFileSize
	c.TrivialMove = out != level && len(c.Inputs[0]) == 1 && len(c.Inputs[1]) == 0 &&
		totalSize(c.Grandparents) <= c.MaxGrandparentOverlapBytes
	return c
}

// l0Closure returns, oldest first, the L0 files reachable from the key
// range [s, l] by repeatedly taking every file that overlaps the range of
// the files taken so far.
func l0Closure(l0 []*FileMetadata, s, l []byte) []*FileMetadata {
	taken := make([]bool, len(l0))
	for grew := true; grew; {
		grew = false
		for i, f := range l0 {
			if !taken[i] && overlapsBounds(f, s, l) {
				taken[i] = true
				grew = true
				s, l = minKey(s, f.Smallest), maxKey(l, f.Largest)
			}
		}
	}
	var out []*FileMetadata
	for i, f := range l0 {
		if taken[i] {
			out = append(out, f)
		}
	}
	return out
}

// expandSorted widens files[i:j] of a sorted level until neither end
// splits a user key: a neighbour whose boundary shares a user key with the
// range's is taken, unless the earlier of the two ends with a range-deletion
// sentinel (it then holds no entry of that user key).
func expandSorted(files []*FileMetadata, i, j int) (int, int) {
	for i > 0 && sharesBoundary(files[i-1], files[i]) {
		i--
	}
	for j < len(files) && sharesBoundary(files[j-1], files[j]) {
		j++
	}
	return i, j
}

func sharesBoundary(a, b *FileMetadata) bool {
	return !base.IsRangeDeleteSentinel(a.Largest) && bytes.Equal(a.LargestUserKey(), b.SmallestUserKey())
}

// overlapIndices returns the range [i, j) of the files of a sorted level
// that overlap the internal-key range [s, l]; i == j when none does.
func overlapIndices(files []*FileMetadata, s, l []byte) (int, int) {
	i := sort.Search(len(files), func(k int) bool { return reaches(files[k].Largest, base.UserKey(s)) })
	j := i
	for j < len(files) && overlapsBounds(files[j], s, l) {
		j++
	}
	return i, j
}

// overlapsBounds reports whether f may hold an entry whose user key lies in
// the user-key span of [s, l], where l excludes its user key when it is a
// range-deletion sentinel.
func overlapsBounds(f *FileMetadata, s, l []byte) bool {
	c := bytes.Compare(f.SmallestUserKey(), base.UserKey(l))
	if c > 0 || (c == 0 && base.IsRangeDeleteSentinel(l)) {
		return false
	}
	return reaches(f.Largest, base.UserKey(s))
}

// bounds returns the smallest and largest keys of files. REQUIRES:
// len(files) > 0.
func bounds(files []*FileMetadata) (s, l []byte) {
	s, l = files[0].Smallest, files[0].Largest
	for _, f := range files[1:] {
		s, l = minKey(s, f.Smallest), maxKey(l, f.Largest)
	}
	return s, l
}

func minKey(a, b []byte) []byte {
	if base.Compare(b, a) < 0 {
		return b
	}
	return a
}

func maxKey(a, b []byte) []byte {
	if base.Compare(b, a) > 0 {
		return b
	}
	return a
}

func anyCompacting(files []*FileMetadata) bool {
	for _, f := range files {
		if f.Compacting {
			return true
		}
	}
	return false
}

func totalSize(files []*FileMetadata) uint64 {
	var n uint64
	for _, f := range files {
		n += f.Size
	}
	return n
}
