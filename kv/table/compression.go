package table

import (
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/strata-db/strata/kv/internal/base"
)

// Compression is a block compression algorithm. Its value is the
// compression byte of a block trailer.
//
// Payload formats:
//
//	NoCompression      the block's bytes as they are
//	SnappyCompression  a Snappy block: uvarint(uncompressed length), then
//	                   Snappy tags (written by S2 in Snappy-compatible mode)
//	ZstdCompression    uvarint(uncompressed length), then one zstd frame
//	                   (no frame checksum: the trailer's CRC covers it)
//
// The values and formats are durable.
type Compression uint8

const (
	// NoCompression stores blocks as they are. Durable.
	NoCompression Compression = 0
	// SnappyCompression compresses blocks with Snappy. Durable.
	SnappyCompression Compression = 1
	// ZstdCompression compresses blocks with zstd. Durable.
	ZstdCompression Compression = 2

	numCompressions = 3
)

// String returns the name ParseCompression accepts.
func (c Compression) String() string {
	switch c {
	case NoCompression:
		return "none"
	case SnappyCompression:
		return "snappy"
	case ZstdCompression:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

// ParseCompression parses "none", "snappy" or "zstd" (case-insensitive).
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return NoCompression, nil
	case "snappy":
		return SnappyCompression, nil
	case "zstd":
		return ZstdCompression, nil
	}
	return 0, fmt.Errorf("table: unknown compression %q (want none, snappy or zstd)", s)
}

// Shared zstd coders. EncodeAll and DecodeAll are safe for concurrent use.
var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
	zstdErr  error
)

func zstdCoders() (*zstd.Encoder, *zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdEnc, zstdErr = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderCRC(false),
			zstd.WithLowerEncoderMem(true))
		if zstdErr != nil {
			return
		}
		// DecodeAllCapLimit stops decoding at cap(dst): the output can never
		// exceed the length the payload declared.
		zstdDec, zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(maxBlockLen),
			zstd.WithDecodeAllCapLimit(true))
	})
	return zstdEnc, zstdDec, zstdErr
}

// compressBlock compresses raw with c into dst (reusing its capacity) and
// reports whether the result is worth keeping: it must save at least an
// eighth of raw. When it is not, the block is stored uncompressed.
func compressBlock(c Compression, raw, dst []byte) ([]byte, bool, error) {
	var out []byte
	switch c {
	case NoCompression:
		return dst, false, nil
	case SnappyCompression:
		out = s2.EncodeSnappy(dst[:cap(dst)], raw)
	case ZstdCompression:
		enc, _, err := zstdCoders()
		if err != nil {
			return dst, false, fmt.Errorf("table: zstd: %w", err)
		}
		out = binary.AppendUvarint(dst[:0], uint64(len(raw)))
		out = enc.EncodeAll(raw, out)
	default:
		return dst, false, fmt.Errorf("table: unknown compression %d", uint8(c))
	}
	return out, len(out) <= len(raw)-len(raw)/8, nil
}

// snappyMaxRatio bounds the expansion of a Snappy payload: the densest tag
// (a 3-byte copy of 64 bytes) expands about 21 times. A payload that claims
// more is corrupt, whatever its checksum says.
const snappyMaxRatio = 24

// decompressBlock decodes payload, stored at off with compression c, into
// dst (reusing its capacity when large enough) and returns the block. The
// declared uncompressed length is checked before anything is allocated.
func decompressBlock(c Compression, payload, dst []byte, file string, off uint64) ([]byte, error) {
	switch c {
	case SnappyCompression:
		n, err := s2.DecodedLen(payload)
		if err != nil {
			return nil, base.Corruptf(file, int64(off), "snappy block: unreadable length header: %v", err)
		}
		if n > maxBlockLen || n > snappyMaxRatio*len(payload)+64 {
			return nil, base.Corruptf(file, int64(off), "snappy block of %d bytes claims %d bytes uncompressed", len(payload), n)
		}
		out, err := s2.Decode(dst[:cap(dst)], payload)
		if err != nil {
			return nil, base.Corruptf(file, int64(off), "snappy block of %d bytes: %v", len(payload), err)
		}
		return out, nil
	case ZstdCompression:
		n, k := binary.Uvarint(payload)
		if k <= 0 {
			return nil, base.Corruptf(file, int64(off), "zstd block: unreadable length header")
		}
		if n > maxBlockLen {
			return nil, base.Corruptf(file, int64(off), "zstd block of %d bytes claims %d bytes uncompressed (limit %d)", len(payload), n, maxBlockLen)
		}
		_, dec, err := zstdCoders()
		if err != nil {
			return nil, fmt.Errorf("table: zstd: %w", err)
		}
		if uint64(cap(dst)) < n {
			dst = make([]byte, 0, n)
		}
		out, err := dec.DecodeAll(payload[k:], dst[:0:n])
		if err != nil {
			return nil, base.Corruptf(file, int64(off), "zstd block of %d bytes: %v", len(payload), err)
		}
		if uint64(len(out)) != n {
			return nil, base.Corruptf(file, int64(off), "zstd block: expected %d bytes uncompressed, found %d", n, len(out))
		}
		return out, nil
	}
	return nil, base.Corruptf(file, int64(off), "unknown block compression byte %d", uint8(c))
}
