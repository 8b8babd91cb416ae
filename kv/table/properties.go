package table

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-db/strata/kv/internal/base"
)

// Properties describe a table: counts, sizes, key bounds and the options it
// was written with. The writer computes them and stores them in the
// properties block; a reader loads them at open.
type Properties struct {
	// NumEntries counts point entries (sets and deletes), NumDeletions the
	// point deletes among them, NumRangeDeletions the range tombstones.
	NumEntries        uint64
	NumDeletions      uint64
	NumRangeDeletions uint64
	// RawKeySize and RawValueSize sum the internal keys and values of the
	// point entries, before prefix sharing and compression.
	RawKeySize   uint64
	RawValueSize uint64
	// DataSize is the bytes of data blocks with their trailers: the offset
	// where the data blocks end. IndexSize and FilterSize are the stored
	// sizes of the index and filter blocks with their trailers (FilterSize
	// is 0 without a filter).
	DataSize   uint64
	IndexSize  uint64
	FilterSize uint64
	// NumDataBlocks counts the data blocks.
	NumDataBlocks uint64
	// SmallestPoint and LargestPoint are the first and last point entries'
	// internal keys; nil when the table has no point entry.
	SmallestPoint []byte
	LargestPoint  []byte
	// Smallest and Largest bound every key of the table, range tombstones
	// included: a tombstone [start, end) at seq contributes start#seq,RANGEDEL
	// and the sentinel base.MakeRangeDeleteSentinel(end). nil when the table
	// is empty.
	Smallest []byte
	Largest  []byte
	// SmallestSeq and LargestSeq bound the sequence numbers of every entry
	// and tombstone (both 0 when the table is empty).
	SmallestSeq base.SeqNum
	LargestSeq  base.SeqNum
	// Compression is the algorithm blocks were compressed with (a block that
	// would not shrink enough is stored raw).
	Compression Compression
	// FilterPolicy names the filter, e.g. "bloom(bits=10)", or "none".
	FilterPolicy string
	// FormatVersion is the table format version.
	FormatVersion uint32
	// FileNum is the number the engine gave the table's file when it wrote
	// it (WriterOptions.FileNum), or 0 when none was given. A reader opened
	// for another file number fails, so that a file copied or renamed over
	// another table's name is found when it is opened, not by the wrong
	// answers it would give.
	FileNum uint64
}

// Property names. They are stored sorted; the list below is in that order.
// Durable.
const (
	propCompression       = "strata.compression"
	propDataBlocks        = "strata.data.blocks"
	propDataSize          = "strata.data.size"
	propFileNumber        = "strata.file.number"
	propFilterPolicy      = "strata.filter.policy"
	propFilterSize        = "strata.filter.size"
	propFormatVersion     = "strata.format.version"
	propIndexSize         = "strata.index.size"
	propLargest           = "strata.largest"
	propLargestPoint      = "strata.largest.point"
	propNumDeletions      = "strata.num.deletions"
	propNumEntries        = "strata.num.entries"
	propNumRangeDeletions = "strata.num.range.deletions"
	propRawKeySize        = "strata.raw.key.size"
	propRawValueSize      = "strata.raw.value.size"
	propSeqLargest        = "strata.seq.largest"
	propSeqSmallest       = "strata.seq.smallest"
	propSmallest          = "strata.smallest"
	propSmallestPoint     = "strata.smallest.point"
)

// propKind says how a property's value is encoded and whether version 1
// files must have it.
type propKind uint8

const (
	propUvarint         propKind = iota // uvarint64, required
	propString                          // raw bytes, required
	propOptional                        // raw bytes (an internal key), present when the table has such keys
	propOptionalUvarint                 // uvarint64, present when set
)

// propSpecs lists every known property, sorted by name.
var propSpecs = []struct {
	name string
	kind propKind
}{
	{propCompression, propString},
	{propDataBlocks, propUvarint},
	{propDataSize, propUvarint},
	{propFileNumber, propOptionalUvarint},
	{propFilterPolicy, propString},
	{propFilterSize, propUvarint},
	{propFormatVersion, propUvarint},
	{propIndexSize, propUvarint},
	{propLargest, propOptional},
	{propLargestPoint, propOptional},
	{propNumDeletions, propUvarint},
	{propNumEntries, propUvarint},
	{propNumRangeDeletions, propUvarint},
	{propRawKeySize, propUvarint},
	{propRawValueSize, propUvarint},
	{propSeqLargest, propUvarint},
	{propSeqSmallest, propUvarint},
	{propSmallest, propOptional},
	{propSmallestPoint, propOptional},
}

// numberField returns the field of a plain number property, nil for the
// others.
func (p *Properties) numberField(name string) *uint64 {
	switch name {
	case propDataBlocks:
		return &p.NumDataBlocks
	case propDataSize:
		return &p.DataSize
	case propFilterSize:
		return &p.FilterSize
	case propIndexSize:
		return &p.IndexSize
	case propNumDeletions:
		return &p.NumDeletions
	case propNumEntries:
		return &p.NumEntries
	case propNumRangeDeletions:
		return &p.NumRangeDeletions
	case propRawKeySize:
		return &p.RawKeySize
	case propRawValueSize:
		return &p.RawValueSize
	}
	return nil
}

// keyField returns the field of a key property, nil for the others.
func (p *Properties) keyField(name string) *[]byte {
	switch name {
	case propLargest:
		return &p.Largest
	case propLargestPoint:
		return &p.LargestPoint
	case propSmallest:
		return &p.Smallest
	case propSmallestPoint:
		return &p.SmallestPoint
	}
	return nil
}

// encode builds the properties block in b (reset first) and returns it.
func (p *Properties) encode(b *blockWriter) []byte {
	b.reset()
	var num [binary.MaxVarintLen64]byte
	for _, s := range propSpecs {
		var v []byte
		switch s.name {
		case propCompression:
			v = []byte(p.Compression.String())
		case propFilterPolicy:
			v = []byte(p.FilterPolicy)
		case propFormatVersion:
			v = binary.AppendUvarint(num[:0], uint64(p.FormatVersion))
		case propFileNumber:
			if p.FileNum == 0 {
				continue
			}
			v = binary.AppendUvarint(num[:0], p.FileNum)
		case propSeqLargest:
			v = binary.AppendUvarint(num[:0], uint64(p.LargestSeq))
		case propSeqSmallest:
			v = binary.AppendUvarint(num[:0], uint64(p.SmallestSeq))
		default:
			if f := p.numberField(s.name); f != nil {
				v = binary.AppendUvarint(num[:0], *f)
			} else if k := p.keyField(s.name); *k != nil {
				v = *k
			} else {
				continue
			}
		}
		b.add([]byte(s.name), v)
	}
	return b.finish()
}

// decodeProperties decodes a properties block read from off. Unknown names
// are skipped; a missing required property, a malformed value or names out
// of order are corruption.
func decodeProperties(block []byte, file string, off uint64) (*Properties, error) {
	p := &Properties{}
	var seen [32]bool
	var prev []byte
	first := true
	err := walkBlock(block, file, off, func(name, v []byte) error {
		if !first && bytes.Compare(prev, name) >= 0 {
			return base.Corruptf(file, int64(off), "properties out of order: %q after %q", name, prev)
		}
		first = false
		prev = append(prev[:0], name...)
		i, ok := slices.BinarySearchFunc(propSpecs, name, func(s struct {
			name string
			kind propKind
		}, n []byte) int {
			return strings.Compare(s.name, string(n))
		})
		if !ok {
			return nil // a property from a later writer
		}
		seen[i] = true
		s := propSpecs[i]
		var n uint64
		if s.kind == propUvarint || s.kind == propOptionalUvarint {
			var k int
			if n, k = binary.Uvarint(v); k <= 0 || k != len(v) {
				return base.Corruptf(file, int64(off), "property %s: malformed number %x", s.name, v)
			}
		}
		switch s.name {
		case propCompression:
			c, err := ParseCompression(string(v))
			if err != nil || len(v) == 0 {
				return base.Corruptf(file, int64(off), "property %s: unknown compression %q", s.name, v)
			}
			p.Compression = c
		case propFilterPolicy:
			p.FilterPolicy = string(v)
		case propFileNumber:
			if n == 0 {
				return base.Corruptf(file, int64(off), "property %s is 0", s.name)
			}
			p.FileNum = n
		case propFormatVersion:
			if n > 1<<32-1 {
				return base.Corruptf(file, int64(off), "property %s: %d does not fit 32 bits", s.name, n)
			}
			p.FormatVersion = uint32(n)
		case propSeqLargest, propSeqSmallest:
			if n > uint64(base.SeqNumMax) {
				return base.Corruptf(file, int64(off), "property %s: sequence number %d exceeds the maximum", s.name, n)
			}
			if s.name == propSeqLargest {
				p.LargestSeq = base.SeqNum(n)
			} else {
				p.SmallestSeq = base.SeqNum(n)
			}
		default:
			if f := p.numberField(s.name); f != nil {
				*f = n
			} else if k := p.keyField(s.name); k != nil {
				if !base.Valid(v) {
					return base.Corruptf(file, int64(off), "property %s: %q is not an internal key", s.name, v)
				}
				*k = slices.Clone(v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, s := range propSpecs {
		if (s.kind == propUvarint || s.kind == propString) && !seen[i] {
			return nil, base.Corruptf(file, int64(off), "property %s is missing", s.name)
		}
	}
	if err := p.check(); err != nil {
		return nil, base.Corruptf(file, int64(off), "properties: %v", err)
	}
	return p, nil
}

// check verifies what the properties say about themselves.
func (p *Properties) check() error {
	hasPoints := p.NumEntries > 0
	if (p.SmallestPoint != nil) != hasPoints || (p.LargestPoint != nil) != hasPoints {
		return fmt.Errorf("%d entries but smallest point %q, largest point %q", p.NumEntries, p.SmallestPoint, p.LargestPoint)
	}
	hasAny := hasPoints || p.NumRangeDeletions > 0
	if (p.Smallest != nil) != hasAny || (p.Largest != nil) != hasAny {
		return fmt.Errorf("%d entries and %d range deletions but bounds %q, %q", p.NumEntries, p.NumRangeDeletions, p.Smallest, p.Largest)
	}
	if p.NumDeletions > p.NumEntries {
		return fmt.Errorf("%d deletions among %d entries", p.NumDeletions, p.NumEntries)
	}
	if hasPoints && base.Compare(p.SmallestPoint, p.LargestPoint) > 0 {
		return fmt.Errorf("smallest point %s above largest %s", base.FormatKey(p.SmallestPoint), base.FormatKey(p.LargestPoint))
	}
	if hasAny && base.Compare(p.Smallest, p.Largest) > 0 {
		return fmt.Errorf("smallest bound %s above largest %s", base.FormatKey(p.Smallest), base.FormatKey(p.Largest))
	}
	if p.SmallestSeq > p.LargestSeq {
		return fmt.Errorf("smallest seq %d above largest %d", p.SmallestSeq, p.LargestSeq)
	}
	return nil
}
