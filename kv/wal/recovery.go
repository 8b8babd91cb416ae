package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/strata-db/strata/kv/internal/base"
)

// badChunk decides what a damaged chunk at off means and returns what Next
// returns: io.EOF for a torn tail, a corruption error otherwise. start is
// the offset of the record being reassembled, or -1. next is where the
// chunk after it starts if the damaged chunk's length can be trusted, or -1.
//
// The damage is corruption when some intact chunk after off proves that off
// was durable before that chunk was written (its sync distance reaches back
// past off). Otherwise everything from the damage on was written after the
// last sync the log records: a crash can leave such bytes missing, zeroed
// or half-written in any order, so the log ends there.
func (r *Reader) badChunk(off, start, next int64, problem string) error {
	proof, synced, unsynced, err := r.findProof(off, next)
	if err != nil {
		r.err = err
		return err
	}
	from := off
	if start >= 0 {
		from = start
	}
	if proof < 0 {
		reason := fmt.Sprintf("chunk at offset %d: %s", off, problem)
		if unsynced > 0 {
			reason += fmt.Sprintf("; %d intact chunks follow, all written before offset %d was synced", unsynced, off)
		}
		return r.endTorn(from, reason)
	}
	detail := problem
	if start >= 0 {
		detail += fmt.Sprintf("; the record at offset %d is lost", start)
	}
	detail += fmt.Sprintf("; the intact chunk at offset %d was written when the log was durable through offset %d",
		proof, synced)
	return r.corrupt(off, from, nextBlock(off), detail)
}

// corrupt records a corruption at off and returns it; SkipCorrupt would
// drop the bytes from `from` and resume at the first record starting at or
// after resume.
func (r *Reader) corrupt(off, from, resume int64, detail string) error {
	r.err = base.Corruptf(r.name, off, "%s", detail)
	r.skip.pending = true
	r.skip.from, r.skip.resume = from, min(resume, r.size)
	return r.err
}

// endTorn ends the log at off, a torn tail, and returns io.EOF.
func (r *Reader) endTorn(off int64, reason string) error {
	r.ended = true
	r.tail.off, r.tail.reason, r.tail.torn = off, reason, true
	return io.EOF
}

// findProof looks after bad for an intact chunk (of this log, if its ID is
// known) written when bad was already durable, and returns the first such
// chunk's offset and how much of the log it says was durable, or -1.
// unsynced counts the intact chunks it passed that were written before bad
// was durable.
//
// Chunks start at every block boundary, but a damaged length hides where the
// next chunk in the same block starts, so the search tries every offset;
// after an intact chunk it jumps to the chunk's end. Cheap tests (type,
// length, log ID) come before the checksum. When the damaged chunk's length
// leads to an intact chunk (next), the search starts there instead of
// trying every offset of the damaged payload: the chunks it might skip, if
// the length were wrong, were written before the one it lands on, and the
// durable part of a log only grows, so they cannot prove more than it does.
// The search runs once, when a log ends or is found damaged; with the log ID
// known, candidates are found by a vectorized search for the ID's bytes.
func (r *Reader) findProof(bad, next int64) (proof, synced int64, unsynced int, err error) {
	if r.scan == nil {
		r.scan = make([]byte, blockSize)
	}
	from := bad + 1
	if next > bad {
		if ok, err := r.intactAt(next); err != nil {
			return -1, 0, 0, err
		} else if ok {
			from = next
		}
	}
	for q := from; q < r.size; q = nextBlock(q) {
		bs := q - q%blockSize
		b := r.scan[:min(blockSize, r.size-bs)]
		if err := r.readAt(b, bs); err != nil {
			return -1, 0, unsynced, err
		}
		if len(b) < headerSize {
			break
		}
		// A chunk can start at any o in [0, last] of b.
		last := len(b) - headerSize
		for o := r.candidate(b, int(q-bs), last); o >= 0; o = r.candidate(b, o, last) {
			h := b[o:]
			if o+headerSize+int(binary.LittleEndian.Uint16(h[offLength:])) > len(b) {
				o++
				continue
			}
			c, problem := parseChunk(h, bs+int64(o), r.id, r.idKnown)
			if problem != "" {
				o++
				continue
			}
			if c.synced > bad {
				return bs + int64(o), c.synced, unsynced, nil
			}
			unsynced++
			o = int(c.end - bs)
		}
	}
	return -1, 0, unsynced, nil
}

// candidate returns the first offset o' in [o, last] of b where a chunk of
// this log might start, judged by its type byte and, once the log ID is
// known, by its ID, or -1. With the ID known it searches for the ID's bytes
// with bytes.Index, which is vectorized: the search then costs a fraction of
// a nanosecond per byte.
func (r *Reader) candidate(b []byte, o, last int) int {
	if r.idKnown {
		var id [4]byte
		binary.LittleEndian.PutUint32(id[:], r.id)
		for o <= last {
			i := bytes.Index(b[o+offLogID:last+offLogID+len(id)], id[:])
			if i < 0 {
				return -1
			}
			o += i
			if t := chunkType(b[o+offType]); t >= typeFull && t <= typeLast {
				return o
			}
			o++
		}
		return -1
	}
	for ; o <= last; o++ {
		if t := chunkType(b[o+offType]); t >= typeFull && t <= typeLast {
			return o
		}
	}
	return -1
}

// intactAt reports whether an intact chunk starts at off, or at the next
// block when off is in a block's padding.
func (r *Reader) intactAt(off int64) (bool, error) {
	if off < r.size && blockSize-off%blockSize < headerSize {
		off = nextBlock(off)
	}
	if off >= r.size {
		return false, nil
	}
	b, err := r.chunkBytes(off)
	if err != nil {
		return false, err
	}
	_, problem := parseChunk(b, off, r.id, r.idKnown)
	return problem == "", nil
}

// chainNext returns where the chunk after the one at off starts, taking the
// length in b (the bytes from off to the end of the block or file) on
// trust, or -1 when that length is impossible.
func chainNext(b []byte, off int64) int64 {
	if len(b) < headerSize {
		return -1
	}
	n := int(binary.LittleEndian.Uint16(b[offLength:]))
	if headerSize+n > len(b) {
		return -1
	}
	return off + int64(headerSize+n)
}

// SkipCorrupt moves past the corruption Next reported last, for a caller
// that wants to salvage what it can: reading resumes at the first record
// that starts at or after the next block boundary (or, when the damage was
// a missing continuation, at the record that follows it). It returns how
// many bytes were dropped, counting the lost record from its start. When
// Next has not reported a corruption, SkipCorrupt does nothing and returns
// 0.
//
// Records after a corruption are intact but may not be all the records
// written after the lost ones: a salvaged log is no longer a prefix of what
// was written.
func (r *Reader) SkipCorrupt() int64 {
	if !r.skip.pending {
		return 0
	}
	r.skip.pending = false
	r.err = nil
	r.pos = r.skip.resume
	// Drop the continuation chunks of records whose beginning is gone.
	for r.pos < r.size {
		b, err := r.chunkBytes(r.pos)
		if err != nil {
			break // Next reports it
		}
		if b == nil {
			r.pos = min(nextBlock(r.pos), r.size)
			continue
		}
		c, problem := parseChunk(b, r.pos, r.id, r.idKnown)
		if problem != "" || c.typ == typeFull || c.typ == typeFirst {
			break
		}
		if !r.idKnown {
			r.id, r.idKnown = c.id, true
		}
		r.pos = c.end
	}
	return r.pos - r.skip.from
}
