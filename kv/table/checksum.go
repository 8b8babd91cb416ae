package table

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/strata-db/strata/kv/internal/base"
)

// castagnoli is the CRC-32C table; hash/crc32 uses the CPU's CRC
// instructions for it on amd64 and arm64.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskDelta is added to a rotated CRC to mask it, so that checksums of bytes
// that themselves embed checksums stay well distributed. Durable.
const maskDelta = 0xa282ead8

// maskCRC masks a CRC-32C: rotate right by 15 bits and add maskDelta.
// Durable.
func maskCRC(c uint32) uint32 { return (c>>15 | c<<17) + maskDelta }

// contextModifier returns what is added to the masked checksum of the bytes
// stored at off in a file whose base context is baseCtx: baseCtx XOR
// (low32(off) + high32(off)). Durable.
func contextModifier(baseCtx uint32, off uint64) uint32 {
	return baseCtx ^ (uint32(off) + uint32(off>>32))
}

// crc32Castagnoli returns the CRC-32C of b.
func crc32Castagnoli(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// blockChecksum computes the stored checksum of a block at off whose payload
// and compression byte are b (the trailer's checksum excluded).
func blockChecksum(b []byte, baseCtx uint32, off uint64) uint32 {
	return maskCRC(crc32.Checksum(b, castagnoli)) + contextModifier(baseCtx, off)
}

// verifyBlock checks the trailer of raw, which holds a block's payload and
// its trailer as read from off, and returns the payload and the compression
// byte. The error names file and offset.
func verifyBlock(raw []byte, file string, baseCtx uint32, off uint64) ([]byte, Compression, error) {
	if len(raw) < TrailerLen {
		return nil, 0, base.Corruptf(file, int64(off), "block shorter than its %d-byte trailer: %d bytes", TrailerLen, len(raw))
	}
	n := len(raw) - TrailerLen
	want := binary.LittleEndian.Uint32(raw[n+1:])
	if got := blockChecksum(raw[:n+1], baseCtx, off); got != want {
		return nil, 0, base.Corruptf(file, int64(off), "block checksum mismatch (length %d): trailer says %#08x, contents give %#08x", n, want, got)
	}
	return raw[:n], Compression(raw[n]), nil
}

// appendTrailer appends the trailer of a block whose payload is b[:n] and
// whose compression byte is c, to be written at off. b must have room to
// grow or it is reallocated; the result holds payload and trailer.
func appendTrailer(b []byte, c Compression, baseCtx uint32, off uint64) []byte {
	b = append(b, byte(c))
	sum := blockChecksum(b, baseCtx, off)
	return binary.LittleEndian.AppendUint32(b, sum)
}
