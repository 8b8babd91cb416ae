package table

import (
	"encoding/binary"
	"fmt"
	"math"
)

// File layout
//
// A table file is written front to back in one pass and never modified:
//
//	+---------------------------------------------+ offset 0
//	| data block 0               | trailer (5 B)  |
//	| data block 1               | trailer        |
//	| ...                                         |
//	| data block n-1             | trailer        |
//	+---------------------------------------------+ DataEnd
//	| filter block (optional)    | trailer        |
//	| index block                | trailer        |
//	| range-deletion block (opt) | trailer        |
//	| properties block           | trailer        |
//	| metaindex block            | trailer        |
//	+---------------------------------------------+ size - FooterLen
//	| footer (53 B)                               |
//	+---------------------------------------------+ size
//
// Every block is followed by a trailer of TrailerLen bytes: one compression
// byte (see Compression) and a little-endian uint32 checksum. The checksum
// is CRC-32C over the block's stored bytes and the compression byte, masked
// (rotated right by 15 bits, plus maskDelta) and then shifted by the file's
// context modifier: the footer holds a random non-zero 32-bit base, and the
// modifier of a block at offset off is base XOR (low32(off) + high32(off)).
// A block copied to another offset, or into another file, therefore fails
// verification like any other corruption. The footer is protected the same
// way, with the footer's own offset.
//
// A BlockHandle (offset, length) locates a block; the length excludes the
// trailer. Data blocks sit back to back from offset 0, so block n+1 starts at
// offset(n) + length(n) + TrailerLen; the reader checks this when it opens a
// file. Meta blocks follow the last data block, in the order above.
//
// The metaindex block maps the names metaFilterName, metaRangeDelName and
// metaPropertiesName to handles (entries sorted by name, absent when the
// block is absent); the index handle is in the footer. Unknown names are
// ignored by readers, which leaves room for new meta blocks.
//
// Everything in this comment and every constant marked "durable" is part of
// the on-disk format of version 1: never change it. A change of layout needs
// a new FormatVersion.

const (
	// FormatVersion is the version this package writes and the only one it
	// reads. Durable.
	FormatVersion uint32 = 1

	// TrailerLen is the length of the trailer after every block: the
	// compression byte and the masked checksum. Durable.
	TrailerLen = 5

	// tableMagic ends every table file. Little-endian, its bytes read
	// "\xf7STRATA\x01". Durable.
	tableMagic uint64 = 0x01415441525453f7

	// Metaindex names. Durable.
	metaFilterName     = "strata.filter"
	metaRangeDelName   = "strata.range_del"
	metaPropertiesName = "strata.properties"
)

// ChecksumType says how block checksums are computed. Stored in the footer.
type ChecksumType uint8

const (
	// ChecksumCRC32C is masked CRC-32C with the per-file context modifier,
	// the only type version 1 writes. Durable.
	ChecksumCRC32C ChecksumType = 1
	// Value 2 is reserved for XXH3 (low 32 bits), which would not need a new
	// format version. Durable.
)

// String returns the checksum type's name.
func (t ChecksumType) String() string {
	switch t {
	case ChecksumCRC32C:
		return "crc32c"
	}
	return fmt.Sprintf("checksum(%d)", uint8(t))
}

// maxBlockLen bounds the uncompressed length of any block. The writer refuses
// entries that could not fit in a block of this size, and decoders refuse
// blocks (and compressed payloads claiming an uncompressed length) above it,
// so that corrupt bytes cannot make the reader allocate without bound.
const maxBlockLen = 1 << 28

// BlockHandle locates a block in a file: its offset and its length without
// the trailer.
type BlockHandle struct {
	Offset uint64
	Length uint64
}

// End returns the offset just past the block's trailer: where the next block
// starts.
func (h BlockHandle) End() uint64 { return h.Offset + h.Length + TrailerLen }

// String renders the handle as "(offset, length)".
func (h BlockHandle) String() string { return fmt.Sprintf("(%d, %d)", h.Offset, h.Length) }

// maxHandleVarintLen is the largest encoding of a handle: two uvarint64s.
const maxHandleVarintLen = 2 * binary.MaxVarintLen64

// AppendHandle appends the encoding of h to dst: offset and length as two
// uvarints. Durable.
func AppendHandle(dst []byte, h BlockHandle) []byte {
	dst = binary.AppendUvarint(dst, h.Offset)
	return binary.AppendUvarint(dst, h.Length)
}

// decodeHandle decodes a handle from the front of src and returns it with
// the number of bytes read; n is 0 if src does not start with a handle whose
// end fits in a uint64.
func decodeHandle(src []byte) (h BlockHandle, n int) {
	off, n1 := binary.Uvarint(src)
	if n1 <= 0 {
		return BlockHandle{}, 0
	}
	length, n2 := binary.Uvarint(src[n1:])
	if n2 <= 0 {
		return BlockHandle{}, 0
	}
	if off > math.MaxUint64-TrailerLen || length > math.MaxUint64-TrailerLen-off {
		return BlockHandle{}, 0
	}
	return BlockHandle{Offset: off, Length: length}, n1 + n2
}
