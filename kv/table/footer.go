package table

import (
	"encoding/binary"

	"github.com/strata-db/strata/kv/internal/base"
)

// Footer format
//
// The last FooterLen bytes of a file, all integers little-endian:
//
//	 0     1              5                  9
//	+-----+--------------+------------------+---------------------------+
//	| cks | format (u32) | base ctx (u32)   | metaindex off, len (u64s) |
//	+-----+--------------+------------------+---------------------------+
//	  25                          41              45             53
//	+---------------------------+---------------+----------------+
//	| index off, len (u64s)     | checksum (u32)| magic (u64)    |
//	+---------------------------+---------------+----------------+
//
// cks is the ChecksumType of every block of the file; base ctx is the
// file's random non-zero base context (see the file layout comment); the
// checksum covers bytes [0, 41) and is computed like a block checksum, at
// the footer's own offset. The magic number comes last so that a reader
// can tell a table from anything else before trusting the rest.
//
// The layout is durable.

// FooterLen is the length of the footer. Durable.
const FooterLen = 53

// Footer field offsets. Durable.
const (
	footerChecksumTypeOff = 0
	footerVersionOff      = 1
	footerBaseCtxOff      = 5
	footerMetaindexOff    = 9
	footerIndexOff        = 25
	footerChecksumOff     = 41
	footerMagicOff        = 45
)

// footer is the decoded footer.
type footer struct {
	checksumType ChecksumType
	version      uint32
	baseCtx      uint32
	metaindex    BlockHandle
	index        BlockHandle
}

// encode appends the footer, to be written at off, to dst.
func (f *footer) encode(dst []byte, off uint64) []byte {
	start := len(dst)
	dst = append(dst, byte(f.checksumType))
	dst = binary.LittleEndian.AppendUint32(dst, f.version)
	dst = binary.LittleEndian.AppendUint32(dst, f.baseCtx)
	dst = binary.LittleEndian.AppendUint64(dst, f.metaindex.Offset)
	dst = binary.LittleEndian.AppendUint64(dst, f.metaindex.Length)
	dst = binary.LittleEndian.AppendUint64(dst, f.index.Offset)
	dst = binary.LittleEndian.AppendUint64(dst, f.index.Length)
	sum := maskCRC(crc32Castagnoli(dst[start:])) + contextModifier(f.baseCtx, off)
	dst = binary.LittleEndian.AppendUint32(dst, sum)
	return binary.LittleEndian.AppendUint64(dst, tableMagic)
}

// decodeFooter decodes the footer of a file of fileSize bytes from b, its
// last FooterLen bytes, and checks everything the footer alone can check:
// magic, checksum type, format version, checksum, base context, and that
// both handles lie inside the file before the footer.
func decodeFooter(b []byte, file string, fileSize uint64) (footer, error) {
	var f footer
	if fileSize < FooterLen || len(b) != FooterLen {
		return f, base.Corruptf(file, 0, "file of %d bytes is too short for a %d-byte table footer", fileSize, FooterLen)
	}
	off := fileSize - FooterLen
	if m := binary.LittleEndian.Uint64(b[footerMagicOff:]); m != tableMagic {
		return f, base.Corruptf(file, int64(off+footerMagicOff), "bad table magic: expected %#016x, found %#016x", tableMagic, m)
	}
	f.checksumType = ChecksumType(b[footerChecksumTypeOff])
	f.version = binary.LittleEndian.Uint32(b[footerVersionOff:])
	f.baseCtx = binary.LittleEndian.Uint32(b[footerBaseCtxOff:])
	want := binary.LittleEndian.Uint32(b[footerChecksumOff:])
	if got := maskCRC(crc32Castagnoli(b[:footerChecksumOff])) + contextModifier(f.baseCtx, off); got != want {
		return f, base.Corruptf(file, int64(off), "footer checksum mismatch: footer says %#08x, contents give %#08x", want, got)
	}
	if f.checksumType != ChecksumCRC32C {
		return f, base.Corruptf(file, int64(off), "unsupported checksum type %d (expected %d, crc32c)", uint8(f.checksumType), ChecksumCRC32C)
	}
	if f.version != FormatVersion {
		return f, base.Corruptf(file, int64(off+footerVersionOff), "unsupported format version %d (expected %d)", f.version, FormatVersion)
	}
	if f.baseCtx == 0 {
		return f, base.Corruptf(file, int64(off+footerBaseCtxOff), "base context checksum is zero, expected a non-zero value")
	}
	f.metaindex = BlockHandle{
		Offset: binary.LittleEndian.Uint64(b[footerMetaindexOff:]),
		Length: binary.LittleEndian.Uint64(b[footerMetaindexOff+8:]),
	}
	f.index = BlockHandle{
		Offset: binary.LittleEndian.Uint64(b[footerIndexOff:]),
		Length: binary.LittleEndian.Uint64(b[footerIndexOff+8:]),
	}
	for _, h := range [...]struct {
		name string
		h    BlockHandle
		at   uint64
	}{{"metaindex", f.metaindex, footerMetaindexOff}, {"index", f.index, footerIndexOff}} {
		if !handleWithin(h.h, off) {
			return f, base.Corruptf(file, int64(off+h.at), "%s handle %s runs past the footer at %d", h.name, h.h, off)
		}
	}
	if f.metaindex.End() != off {
		return f, base.Corruptf(file, int64(off+footerMetaindexOff), "metaindex block %s does not end at the footer (offset %d)", f.metaindex, off)
	}
	return f, nil
}

// handleWithin reports whether the block h and its trailer end at or before
// limit, without overflow.
func handleWithin(h BlockHandle, limit uint64) bool {
	return h.Offset <= limit && h.Length <= limit-h.Offset && TrailerLen <= limit-h.Offset-h.Length
}
