package manifest

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/strata-db/strata/kv/internal/base"
)

// VersionEdit is one change to the set of files, plus the counters recorded
// with it. It is the unit the MANIFEST records: one record, one edit.
type VersionEdit struct {
	// LogNum: every WAL with a number below it has been flushed and is
	// obsolete. 0 means unchanged.
	LogNum uint64
	// NextFileNum is the smallest file number never allocated. 0 means
	// unchanged.
	NextFileNum uint64
	// LastSeq is the sequence number of the last write whose effects the
	// files and WALs hold. 0 means unchanged.
	LastSeq base.SeqNum
	// CompactPointers records, per level, the largest key of the last
	// compaction out of it (see Compaction.NewEdit).
	CompactPointers []CompactPointer
	// DeletedFiles removes files from levels.
	DeletedFiles map[DeletedFile]bool
	// NewFiles adds files to levels. Deletions apply before additions, so an
	// edit that deletes a file at one level and adds it at another moves it.
	NewFiles []NewFile
}

// DeletedFile names a file to remove from a level.
type DeletedFile struct {
	Level   int
	FileNum uint64
}

// NewFile is a file to add to a level.
type NewFile struct {
	Level int
	Meta  *FileMetadata
}

// CompactPointer is the largest internal key of the last compaction out of
// Level.
type CompactPointer struct {
	Level int
	Key   []byte
}

// The encoding of a version edit, part of the on-disk format of the
// MANIFEST; never change a tag's number or payload.
//
// An edit is a sequence of fields. Each field is a tag (uvarint) followed by
// its payload. Integers are uvarints; "bytes" is a uvarint length followed by
// that many bytes.
//
//	tag  field           payload
//	  1  LogNum          uvarint
//	  2  NextFileNum     uvarint
//	  3  LastSeq         uvarint
//	  4  CompactPointer  uvarint level, bytes internal key
//	  5  DeletedFile     uvarint level, uvarint file number
//	  6  NewFile         bytes body, the body being:
//	                       uvarint level, file number, size,
//	                       bytes smallest, bytes largest (internal keys),
//	                       uvarint smallest seq, largest seq,
//	                       uvarint entries, deletions, range deletions
//
// Encode writes LogNum, NextFileNum and LastSeq only when non-zero, then the
// compaction pointers by level, the deleted files by level and number, and
// the new files in the order given. Decoding does not depend on the order.
//
// Compatibility: a tag with bit 0x40 set is optional. Its payload is always
// "bytes", and a reader that does not know the tag skips it: later versions
// may add such fields for hints a reader can do without. Any other unknown
// tag is an error, as is a NewFile body with bytes left over: a field that
// changes which files exist must never be silently dropped. A scalar field
// or compaction pointer level given twice, a file deleted or added twice, a
// level at or above NumLevels, file number 0, a key too short to be an
// internal key, bounds out of order or sequence numbers out of order are
// errors too.
const (
	tagLogNum         = 1
	tagNextFileNum    = 2
	tagLastSeq        = 3
	tagCompactPointer = 4
	tagDeletedFile    = 5
	tagNewFile        = 6

	// tagOptionalBit marks a field a reader may skip.
	tagOptionalBit = 0x40
)

// Encode appends the encoding of ve to dst and returns the result.
func (ve *VersionEdit) Encode(dst []byte) []byte {
	if ve.LogNum != 0 {
		dst = binary.AppendUvarint(dst, tagLogNum)
		dst = binary.AppendUvarint(dst, ve.LogNum)
	}
	if ve.NextFileNum != 0 {
		dst = binary.AppendUvarint(dst, tagNextFileNum)
		dst = binary.AppendUvarint(dst, ve.NextFileNum)
	}
	if ve.LastSeq != 0 {
		dst = binary.AppendUvarint(dst, tagLastSeq)
		dst = binary.AppendUvarint(dst, uint64(ve.LastSeq))
	}
	cps := slices.Clone(ve.CompactPointers)
	slices.SortStableFunc(cps, func(a, b CompactPointer) int { return cmp.Compare(a.Level, b.Level) })
	for _, cp := range cps {
		dst = binary.AppendUvarint(dst, tagCompactPointer)
		dst = binary.AppendUvarint(dst, uint64(cp.Level))
		dst = appendBytes(dst, cp.Key)
	}
	for _, df := range ve.sortedDeleted() {
		dst = binary.AppendUvarint(dst, tagDeletedFile)
		dst = binary.AppendUvarint(dst, uint64(df.Level))
		dst = binary.AppendUvarint(dst, df.FileNum)
	}
	var body []byte
	for _, nf := range ve.NewFiles {
		m := nf.Meta
		body = binary.AppendUvarint(body[:0], uint64(nf.Level))
		body = binary.AppendUvarint(body, m.FileNum)
		body = binary.AppendUvarint(body, m.Size)
		body = appendBytes(body, m.Smallest)
		body = appendBytes(body, m.Largest)
		body = binary.AppendUvarint(body, uint64(m.SmallestSeq))
		body = binary.AppendUvarint(body, uint64(m.LargestSeq))
		body = binary.AppendUvarint(body, m.NumEntries)
		body = binary.AppendUvarint(body, m.NumDeletions)
		body = binary.AppendUvarint(body, m.NumRangeDeletes)
		dst = binary.AppendUvarint(dst, tagNewFile)
		dst = appendBytes(dst, body)
	}
	return dst
}

// sortedDeleted returns the deleted files by level, then file number.
func (ve *VersionEdit) sortedDeleted() []DeletedFile {
	out := make([]DeletedFile, 0, len(ve.DeletedFiles))
	for df, ok := range ve.DeletedFiles {
		if ok {
			out = append(out, df)
		}
	}
	slices.SortFunc(out, func(a, b DeletedFile) int {
		if c := cmp.Compare(a.Level, b.Level); c != 0 {
			return c
		}
		return cmp.Compare(a.FileNum, b.FileNum)
	})
	return out
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// Decode replaces ve with the edit encoded in b, compaction pointers sorted
// by level. The decoded keys are copies: b may be reused afterwards. Errors are corruption errors
// (base.IsCorruption) naming the byte offset within b; the caller that
// knows the file re-homes them.
func (ve *VersionEdit) Decode(b []byte) error {
	*ve = VersionEdit{}
	if err := ve.decode(b); err != nil {
		*ve = VersionEdit{}
		return base.Corruptf("", -1, "version edit: %v", err)
	}
	slices.SortFunc(ve.CompactPointers, func(a, b CompactPointer) int { return cmp.Compare(a.Level, b.Level) })
	return nil
}

func (ve *VersionEdit) decode(b []byte) error {
	d := decoder{b: b}
	var seen [tagNewFile + 1]bool
	newNums := make(map[uint64]bool)
	for !d.done() {
		tagOff := d.off
		tag := d.uvarint("field tag")
		if d.err != nil {
			return d.err
		}
		switch tag {
		case tagLogNum, tagNextFileNum, tagLastSeq:
			if seen[tag] {
				return d.errorf(tagOff, "expected each of LogNum, NextFileNum, LastSeq at most once, found tag %d again", tag)
			}
			seen[tag] = true
			v := d.uvarint("field value")
			switch tag {
			case tagLogNum:
				ve.LogNum = v
			case tagNextFileNum:
				ve.NextFileNum = v
			case tagLastSeq:
				if v > uint64(base.SeqNumMax) {
					return d.errorf(tagOff, "expected LastSeq at most %d, found %d", base.SeqNumMax, v)
				}
				ve.LastSeq = base.SeqNum(v)
			}
		case tagCompactPointer:
			level := d.level()
			key := d.bytes("compaction pointer key")
			if d.err != nil {
				return d.err
			}
			if !base.Valid(key) {
				return d.errorf(tagOff, "expected an internal key as compaction pointer, found %q", key)
			}
			for _, cp := range ve.CompactPointers {
				if cp.Level == level {
					return d.errorf(tagOff, "expected one compaction pointer per level, found a second for L%d", level)
				}
			}
			ve.CompactPointers = append(ve.CompactPointers, CompactPointer{Level: level, Key: clone(key)})
		case tagDeletedFile:
			df := DeletedFile{Level: d.level(), FileNum: d.uvarint("deleted file number")}
			if d.err != nil {
				return d.err
			}
			if df.FileNum == 0 {
				return d.errorf(tagOff, "expected a deleted file number above 0, found 0")
			}
			if ve.DeletedFiles[df] {
				return d.errorf(tagOff, "expected each deleted file once, found L%d %06d again", df.Level, df.FileNum)
			}
			if ve.DeletedFiles == nil {
				ve.DeletedFiles = make(map[DeletedFile]bool)
			}
			ve.DeletedFiles[df] = true
		case tagNewFile:
			body := d.bytes("new file")
			if d.err != nil {
				return d.err
			}
			nf, err := decodeNewFile(body)
			if err != nil {
				return fmt.Errorf("byte %d: new file: %w", tagOff, err)
			}
			if newNums[nf.Meta.FileNum] {
				return d.errorf(tagOff, "expected each new file once, found %06d again", nf.Meta.FileNum)
			}
			newNums[nf.Meta.FileNum] = true
			ve.NewFiles = append(ve.NewFiles, nf)
		default:
			if tag&tagOptionalBit == 0 {
				return d.errorf(tagOff, "expected a known field tag, found %d (written by a newer version?)", tag)
			}
			d.bytes("optional field")
		}
		if d.err != nil {
			return d.err
		}
	}
	return nil
}

// decodeNewFile decodes the body of a NewFile field.
func decodeNewFile(b []byte) (NewFile, error) {
	d := decoder{b: b}
	nf := NewFile{Level: d.level(), Meta: &FileMetadata{}}
	m := nf.Meta
	m.FileNum = d.uvarint("file number")
	m.Size = d.uvarint("size")
	m.Smallest = clone(d.bytes("smallest key"))
	m.Largest = clone(d.bytes("largest key"))
	m.SmallestSeq = base.SeqNum(d.uvarint("smallest seq"))
	m.LargestSeq = base.SeqNum(d.uvarint("largest seq"))
	m.NumEntries = d.uvarint("entries")
	m.NumDeletions = d.uvarint("deletions")
	m.NumRangeDeletes = d.uvarint("range deletions")
	if d.err != nil {
		return NewFile{}, d.err
	}
	if !d.done() {
		return NewFile{}, fmt.Errorf("expected the body to end after %d bytes, found %d more", d.off, len(b)-d.off)
	}
	if m.SmallestSeq > base.SeqNumMax || m.LargestSeq > base.SeqNumMax {
		return NewFile{}, fmt.Errorf("expected sequence numbers at most %d, found %d-%d", base.SeqNumMax, m.SmallestSeq, m.LargestSeq)
	}
	if err := m.validate(); err != nil {
		return NewFile{}, err
	}
	return nf, nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// decoder reads fields from b, remembering the first error; after an
// error every read returns zero. Its errors are plain; Decode marks them as
// corruption once.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) done() bool { return d.err != nil || d.off >= len(d.b) }

func (d *decoder) errorf(off int, format string, args ...any) error {
	return fmt.Errorf("byte %d: %s", off, fmt.Sprintf(format, args...))
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		if n == 0 {
			d.err = d.errorf(d.off, "expected %s, found the end of the edit", what)
		} else {
			d.err = d.errorf(d.off, "expected %s, found a uvarint overflowing 64 bits", what)
		}
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) level() int {
	off := d.off
	v := d.uvarint("level")
	if d.err == nil && v >= NumLevels {
		d.err = d.errorf(off, "expected a level below %d, found %d", NumLevels, v)
	}
	return int(v)
}

func (d *decoder) bytes(what string) []byte {
	off := d.off
	n := d.uvarint(what + " length")
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.err = d.errorf(off, "expected %s of %d bytes, found %d bytes left", what, n, len(d.b)-d.off)
		return nil
	}
	b := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return b
}
