package manifest

import (
	"fmt"
	"strings"
)

// Compaction is a compaction chosen by Pick or PickManual: which files to
// merge, where the output goes, and the limits the engine applies while
// writing it.
//
// The file slices may alias the version's; never modify them.
type Compaction struct {
	// Level is the level compacted out of; OutputLevel receives the output:
	// Level+1, or Level itself when a manual compaction rewrites the last
	// level in place.
	Level, OutputLevel int
	// Inputs[0] are the files taken from Level, Inputs[1] those from
	// OutputLevel (empty when OutputLevel == Level). L0 inputs are oldest
	// first, the others in key order. No user key is split between an input
	// and a file left behind at either level.
	Inputs [2][]*FileMetadata
	// Grandparents are the files of OutputLevel+1 that overlap the
	// compaction's key range. The engine ends an output file early once it
	// overlaps more than MaxGrandparentOverlapBytes of them, so that a later
	// compaction of that file into OutputLevel+1 stays small.
	Grandparents []*FileMetadata
	// Smallest and Largest bound the keys of every input (internal keys).
	Smallest, Largest []byte
	// Bottommost is set when no file below OutputLevel overlaps the key
	// range: the output holds the oldest versions of its keys, so tombstones
	// no snapshot needs can be dropped.
	Bottommost bool
	// TrivialMove is set when the compaction is one file with nothing to
	// merge at OutputLevel and few grandparent bytes: the engine moves the
	// file (NewEdit records the move) instead of rewriting it.
	TrivialMove bool
	// Manual is set for a compaction from PickManual.
	Manual bool
	// MaxOutputFileSize is the target size of each output file.
	MaxOutputFileSize uint64
	// MaxGrandparentOverlapBytes bounds the grandparent bytes one output
	// file may overlap.
	MaxGrandparentOverlapBytes uint64
	// Score is the score of Level that won the pick (at least 1); 0 for a
	// manual compaction.
	Score float64
}

// MarkCompacting sets or clears Compacting on every input file. The engine
// marks a compaction when it starts and clears the mark when the compaction
// ends, whether it succeeded or not. REQUIRES: the engine's mutex held.
func (c *Compaction) MarkCompacting(compacting bool) {
	for _, files := range c.Inputs {
		for _, f := range files {
			f.Compacting = compacting
		}
	}
}

// NewEdit returns the edit that retires the compaction's inputs: every input
// is deleted, and for Level >= 1 the level's compaction pointer advances to
// the largest input key there. For a trivial move the edit also adds the
// file at OutputLevel and is complete; otherwise the engine appends the
// output files to NewFiles before LogAndApply.
func (c *Compaction) NewEdit() *VersionEdit {
	ve := &VersionEdit{DeletedFiles: make(map[DeletedFile]bool)}
	levels := [2]int{c.Level, c.OutputLevel}
	for i, files := range c.Inputs {
		for _, f := range files {
			ve.DeletedFiles[DeletedFile{Level: levels[i], FileNum: f.FileNum}] = true
		}
	}
	if c.Level > 0 && len(c.Inputs[0]) > 0 {
		_, largest := bounds(c.Inputs[0])
		ve.CompactPointers = []CompactPointer{{Level: c.Level, Key: clone(largest)}}
	}
	if c.TrivialMove {
		ve.NewFiles = []NewFile{{Level: c.OutputLevel, Meta: c.Inputs[0][0]}}
	}
	return ve
}

// InputSize returns the total size of the input files.
func (c *Compaction) InputSize() uint64 {
	var n uint64
	for _, files := range c.Inputs {
		n += totalSize(files)
	}
	return n
}

// String describes the compaction over several lines, for tests and
// debugging.
func (c *Compaction) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "L%d -> L%d", c.Level, c.OutputLevel)
	if c.Manual {
		b.WriteString(" manual")
	} else {
		fmt.Fprintf(&b, " score=%.2f", c.Score)
	}
	b.WriteByte('\n')
	writeFiles := func(label string, files []*FileMetadata) {
		fmt.Fprintf(&b, "  %s:", label)
		for _, f := range files {
			fmt.Fprintf(&b, " %s", f)
		}
		b.WriteByte('\n')
	}
	writeFiles(fmt.Sprintf("L%d", c.Level), c.Inputs[0])
	if c.OutputLevel != c.Level {
		writeFiles(fmt.Sprintf("L%d", c.OutputLevel), c.Inputs[1])
	}
	if len(c.Grandparents) > 0 {
		writeFiles("grandparents", c.Grandparents)
	}
	fmt.Fprintf(&b, "  range: %s-%s max-output=%d", formatKey(c.Smallest), formatKey(c.Largest), c.MaxOutputFileSize)
	if c.Bottommost {
		b.WriteString(" bottommost")
	}
	if c.TrivialMove {
		b.WriteString(" trivial-move")
	}
	b.WriteByte('\n')
	return b.String()
}
