package wal

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Reader reads the records of a log in order. See the package
// documentation for how it tells the end of a log, a torn tail and
// corruption apart.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	f    io.ReaderAt
	size int64
	name string

	// id is the log ID every chunk must carry, once idKnown: given to
	// NewReaderLogID, or taken from the first intact chunk.
	id      uint32
	idKnown bool

	// block holds the bytes of the block starting at blockOff, up to the
	// end of the block or of the file; blockOff is -1 when it holds
	// nothing. Its backing array has blockSize bytes.
	block    []byte
	blockOff int64

	// pos is the offset of the next chunk to read.
	pos int64
	// rec reassembles records of more than one chunk.
	rec []byte
	// recOff is the offset of the record Next returned last.
	recOff int64

	// err is sticky: an I/O error, or the corruption Next reported last
	// (cleared by SkipCorrupt).
	err error
	// ended is set once Next has returned io.EOF; tail says how.
	ended bool
	tail  struct {
		off    int64
		reason string
		torn   bool
	}
	// skip is what SkipCorrupt does after a corruption error: drop the
	// bytes from `from` and resume at the first record starting at or after
	// `resume`.
	skip struct {
		pending      bool
		from, resume int64
	}
	// scan is a block buffer for looking past a bad chunk, allocated on
	// first use.
	scan []byte
}

// NewReader returns a reader of the log in f, which holds size bytes. name
// identifies the file in errors. The log ID is taken from the first intact
// chunk; every later chunk must carry the same.
func NewReader(f io.ReaderAt, size int64, name string) *Reader {
	return &Reader{
		f:        f,
		size:     max(size, 0),
		name:     name,
		block:    make([]byte, 0, blockSize),
		blockOff: -1,
		recOff:   -1,
	}
}

// Reset makes r read the log in f, of size bytes, as if it were new from
// NewReader, keeping its buffers: a pool of readers, or the engine replaying
// many logs, allocates nothing per log.
func (r *Reader) Reset(f io.ReaderAt, size int64, name string) {
	*r = Reader{
		f:        f,
		size:     max(size, 0),
		name:     name,
		block:    r.block[:0],
		blockOff: -1,
		rec:      r.rec[:0],
		recOff:   -1,
		scan:     r.scan,
	}
}

// NewReaderLogID is NewReader for a log written with [NewWriterLogID]: only
// chunks carrying id belong to the log. A chunk with another ID is treated as
// damaged: bytes of another log, or a file that is not the log expected.
func NewReaderLogID(f io.ReaderAt, size int64, name string, id uint32) *Reader {
	r := NewReader(f, size, name)
	r.id, r.idKnown = id, true
	return r
}

// LogID returns the log ID the reader checks chunks against, and false when
// it has not yet seen an intact chunk to learn it from.
func (r *Reader) LogID() (uint32, bool) { return r.id, r.idKnown }

// Offset returns the file offset of the record Next returned last (the
// offset WriteRecord returned for it), or -1 before the first record.
func (r *Reader) Offset() int64 { return r.recOff }

// TornTail says how the log ended, once Next has returned io.EOF (before
// that it returns 0, "", false). offset is where the intact log ends: the
// file's size after a clean end, else the start of the first record that
// was lost. torn is false after a clean end; otherwise reason says what was
// found at the end, for the engine to log.
func (r *Reader) TornTail() (offset int64, reason string, torn bool) {
	if !r.ended {
		return 0, "", false
	}
	return r.tail.off, r.tail.reason, r.tail.torn
}

// Next returns the next record. The slice is valid until the next call to
// Next or SkipCorrupt. At the end of the log Next returns io.EOF, and
// TornTail tells whether the end was clean. When the log is damaged before
// its end (a bad chunk followed by intact chunks written after it was
// durable), Next returns an error for which base.IsCorruption holds, naming
// the file, the offset and what was wrong; it keeps returning it until
// SkipCorrupt is called. A failed read of the file is returned as is, also
// for good. Next never returns a record that was not written whole.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.ended {
		return nil, io.EOF
	}
	r.rec = r.rec[:0]
	start := int64(-1) // offset of the record being reassembled; -1 if none
	for {
		if r.pos >= r.size {
			if start >= 0 {
				return nil, r.endTorn(start, fmt.Sprintf(
					"incomplete record at offset %d: expected more chunks, found the end of the file at offset %d",
					start, r.size))
			}
			r.ended = true
			r.tail.off = r.size
			return nil, io.EOF
		}
		b, err := r.chunkBytes(r.pos)
		if err != nil {
			r.err = err
			return nil, err
		}
		if b == nil { // padding at the end of a block
			r.pos = min(nextBlock(r.pos), r.size)
			continue
		}
		c, problem := parseChunk(b, r.pos, r.id, r.idKnown)
		if problem != "" {
			return nil, r.badChunk(r.pos, start, chainNext(b, r.pos), problem)
		}
		if !r.idKnown {
			r.id, r.idKnown = c.id, true
		}
		switch c.typ {
		case typeFull, typeFirst:
			if start >= 0 {
				return nil, r.corrupt(r.pos, start, r.pos, fmt.Sprintf(
					"expected a middle or last chunk continuing the record at offset %d, found a %s chunk",
					start, c.typ))
			}
			if c.typ == typeFull {
				r.recOff, r.pos = r.pos, c.end
				return c.payload, nil
			}
			start = r.pos
			r.rec = append(r.rec, c.payload...)
		case typeMiddle, typeLast:
			if start < 0 {
				return nil, r.corrupt(r.pos, r.pos, r.pos, fmt.Sprintf(
					"expected a full or first chunk, found a %s chunk of a record whose beginning is missing",
					c.typ))
			}
			r.rec = append(r.rec, c.payload...)
			if c.typ == typeLast {
				r.recOff, r.pos = start, c.end
				return r.rec, nil
			}
		}
		r.pos = c.end
	}
}

// nextBlock returns the offset of the block after the one holding off.
func nextBlock(off int64) int64 { return off - off%blockSize + blockSize }

// chunkBytes returns the bytes from off to the end of its block or of the
// file, whichever comes first, or nil when off lies in a block's padding
// (fewer than headerSize bytes before the block's end).
// REQUIRES: off < r.size.
func (r *Reader) chunkBytes(off int64) ([]byte, error) {
	bs := off - off%blockSize
	o := int(off - bs)
	if blockSize-o < headerSize {
		return nil, nil
	}
	if r.blockOff != bs {
		r.blockOff = -1
		b := r.block[:min(blockSize, r.size-bs)]
		if err := r.readAt(b, bs); err != nil {
			return nil, err
		}
		r.block, r.blockOff = b, bs
	}
	return r.block[o:], nil
}

// readAt fills b from the file at off.
func (r *Reader) readAt(b []byte, off int64) error {
	n, err := r.f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("wal: %s: read of %d bytes at offset %d: %w", r.name, len(b), off, err)
}

// chunk is a decoded, intact chunk.
type chunk struct {
	typ     chunkType
	payload []byte
	id      uint32
	// synced is how many bytes of the log were durable when the chunk was
	// written: the chunk proves that they were.
	synced int64
	// end is the offset just past the chunk.
	end int64
}

// parseChunk decodes the chunk at file offset off from b, the bytes from off
// to the end of its block or of the file, whichever comes first. off must
// leave room for a header in its block. When b does not start with an intact
// chunk of log id (of any log when !idKnown), parseChunk says what is wrong,
// as "expected ..., found ...".
func parseChunk(b []byte, off int64, id uint32, idKnown bool) (chunk, string) {
	if len(b) < headerSize {
		return chunk{}, fmt.Sprintf("expected a %d-byte chunk header, found the end of the file after %d bytes",
			headerSize, len(b))
	}
	if allZero(b[:headerSize]) {
		return chunk{}, "expected a chunk header, found zeroed bytes"
	}
	t := chunkType(b[offType])
	if t < typeFull || t > typeLast {
		return chunk{}, fmt.Sprintf("expected a chunk type from 1 to 4, found %d", t)
	}
	n := int(binary.LittleEndian.Uint16(b[offLength:]))
	if room := blockSize - int(off%blockSize) - headerSize; n > room {
		return chunk{}, fmt.Sprintf("expected a chunk length of at most %d (the rest of the block), found %d",
			room, n)
	}
	if n > len(b)-headerSize {
		return chunk{}, fmt.Sprintf("expected a %d-byte payload, found the end of the file after %d bytes",
			n, len(b)-headerSize)
	}
	stored := binary.LittleEndian.Uint32(b[offChecksum:])
	if sum := chunkChecksum(off, b[offLength:headerSize+n]); sum != stored {
		return chunk{}, fmt.Sprintf("checksum mismatch: expected 0x%08x (stored), found 0x%08x (computed over %d bytes)",
			stored, sum, headerSize-offLength+n)
	}
	c := chunk{typ: t, payload: b[headerSize : headerSize+n], end: off + int64(headerSize+n)}
	c.id = binary.LittleEndian.Uint32(b[offLogID:])
	if idKnown && c.id != id {
		return chunk{}, fmt.Sprintf("expected log ID 0x%08x, found an intact chunk of log 0x%08x", id, c.id)
	}
	switch d := binary.LittleEndian.Uint32(b[offSyncDist:]); {
	case d == syncUnknown:
	case int64(d) > off:
		return chunk{}, fmt.Sprintf("expected a sync distance of at most the chunk's offset %d, found %d", off, d)
	default:
		c.synced = off - int64(d)
	}
	return c, ""
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
