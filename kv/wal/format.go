package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// The chunk format. Every constant in this file is part of the durable format
// of write-ahead logs and manifests: changing one makes existing files
// unreadable. Never change them; a new format needs new constants and a way
// to tell the formats apart.
//
// A log is a sequence of blocks of blockSize bytes; the last block may be
// short. A block holds whole chunks back to back. When fewer than headerSize
// bytes remain in a block, the writer fills them with zeros and starts the
// next chunk at the next block; those bytes are padding, and the reader never
// looks at them. A record is cut into chunks so that no chunk crosses a block
// boundary: one full chunk, or a first chunk, any number of middle chunks and
// a last chunk, written back to back.
//
// A chunk is a headerSize-byte header followed by its payload. All integers
// are little-endian:
//
//	offset  size  field
//	0       4     checksum: masked CRC-32C (see chunkChecksum)
//	4       2     length of the payload in bytes
//	6       1     chunk type: full, first, middle or last
//	7       4     log ID: the same in every chunk of one log
//	11      4     sync distance: bytes between the end of the durable part
//	              of the log and this chunk when it was written, or
//	              syncUnknown
//	15      n     payload
const (
	// blockSize is the size of a block. Chunks never cross a multiple of it.
	blockSize = 32 << 10

	// headerSize is the size of a chunk header.
	headerSize = 15

	// maxPayload is the largest payload of one chunk: a chunk that fills a
	// block.
	maxPayload = blockSize - headerSize

	// syncUnknown in the sync-distance field says that the distance did not
	// fit in 32 bits: the chunk proves nothing about which bytes before it
	// were durable.
	syncUnknown = 0xffffffff

	// crcMaskDelta is added to the rotated CRC when masking (see mask).
	crcMaskDelta = 0xa282ead8
)

// Offsets of the header fields. Part of the durable format.
const (
	offChecksum = 0
	offLength   = 4
	offType     = 6
	offLogID    = 7
	offSyncDist = 11
)

// chunkType says which part of a record a chunk holds. The values are part
// of the durable format.
type chunkType uint8

const (
	// typeZero is never written. Zero-filled space (preallocated or never
	// written before a crash) reads as this type.
	typeZero chunkType = 0
	// typeFull holds a whole record.
	typeFull chunkType = 1
	// typeFirst holds the beginning of a record that continues in the next
	// block.
	typeFirst chunkType = 2
	// typeMiddle holds a part of a record that began in an earlier block and
	// continues in the next one; it fills its block.
	typeMiddle chunkType = 3
	// typeLast holds the end of a record that began in an earlier block.
	typeLast chunkType = 4
)

// String returns the chunk type's name.
func (t chunkType) String() string {
	switch t {
	case typeZero:
		return "zero"
	case typeFull:
		return "full"
	case typeFirst:
		return "first"
	case typeMiddle:
		return "middle"
	case typeLast:
		return "last"
	}
	return "unknown"
}

// castagnoli is the CRC-32C table. hash/crc32 uses the CPU's CRC-32C
// instruction for this table where there is one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// mask turns a CRC into the value stored on disk: rotated right by 15 bits,
// plus crcMaskDelta. The CRC of a byte string that embeds its own CRC is
// badly distributed; masking keeps a log stored inside a record (or a record
// holding checksummed data) from weakening the outer checksum. Part of the
// durable format.
func mask(c uint32) uint32 {
	return (c>>15 | c<<17) + crcMaskDelta
}

// chunkChecksum returns the masked checksum of the chunk at file offset off,
// where b is the chunk from its length field to the end of its payload
// (header bytes 4 through 15+n). Part of the durable format.
//
// The checksum covers every header field after itself (length, type, log ID,
// sync distance) and the payload, and it starts from a value derived from the
// chunk's offset in the file rather than from zero. Covering the length means
// a damaged length is caught by the checksum rather than by luck; seeding
// with the offset means a chunk copied to a different offset (a misdirected
// write, a block of the same log read at the wrong place) fails verification
// as surely as random damage. The offset is not stored: the reader knows it.
func chunkChecksum(off int64, b []byte) uint32 {
	seed := uint32(off) ^ uint32(off>>32)
	return mask(crc32.Update(seed, castagnoli, b))
}

// syncDistance returns the sync-distance field of a chunk at off when the
// first synced bytes of the log are durable.
func syncDistance(off, synced int64) uint32 {
	if d := off - synced; d < syncUnknown {
		return uint32(d)
	}
	return syncUnknown
}

// putHeader fills the header of a chunk whose payload is already in place
// after it: h is the header followed by the n payload bytes, off is the
// chunk's file offset.
func putHeader(h []byte, off int64, t chunkType, id, syncDist uint32) {
	n := len(h) - headerSize
	binary.LittleEndian.PutUint16(h[offLength:], uint16(n))
	h[offType] = byte(t)
	binary.LittleEndian.PutUint32(h[offLogID:], id)
	binary.LittleEndian.PutUint32(h[offSyncDist:], syncDist)
	binary.LittleEndian.PutUint32(h[offChecksum:], chunkChecksum(off, h[offLength:]))
}
