package table

import (
	"encoding/binary"

	"github.com/strata-db/strata/kv/internal/base"
)

// Block format
//
// Every block (data, index, range deletions, properties, metaindex) is a
// sequence of key/value entries in increasing key order, followed by the
// restart array and a footer word:
//
//	+---------+---------+-----+-----------+-----------+-----+-------------+
//	| entry 0 | entry 1 | ... | restart 0 | restart 1 | ... | footer word |
//	+---------+---------+-----+-----------+-----------+-----+-------------+
//	                            fixed32 LE each              fixed32 LE
//
// An entry shares a prefix with the key of the entry before it:
//
//	uvarint32 shared     bytes of the previous key that start this key
//	uvarint32 unshared   length of the key suffix that follows
//	uvarint32 value_len  length of the value
//	key suffix           unshared bytes
//	value                value_len bytes
//
// Every restart-interval entries (and at the first entry) the key is stored
// whole (shared = 0) and the entry's offset is appended to the restart array,
// so a reader can binary-search the restart keys and then decode at most
// one interval. The first restart is offset 0. The footer word holds the
// number of restarts in its low 28 bits; the high 4 bits are flags, all zero
// in version 1 (a reader refuses blocks with flags set). A block with no
// entries has no restarts.
//
// Data blocks, the index block and the range-deletion block hold internal
// keys; the properties and metaindex blocks hold names.
//
// The layout is durable.

const (
	// blockRestartMask selects the restart count in the footer word. Durable.
	blockRestartMask = 1<<28 - 1
	// blockFooterLen is the length of the footer word. Durable.
	blockFooterLen = 4
)

// blockWriter builds one block in memory. It is reused from block to block.
type blockWriter struct {
	restartInterval int
	buf             []byte
	restarts        []uint32
	counter         int // entries since the last restart
	entries         int
	lastKey         []byte
}

func (b *blockWriter) init(restartInterval int) {
	b.restartInterval = restartInterval
	b.reset()
}

// reset empties the block, keeping its memory.
func (b *blockWriter) reset() {
	b.buf = b.buf[:0]
	b.restarts = b.restarts[:0]
	b.counter = 0
	b.entries = 0
	b.lastKey = b.lastKey[:0]
}

func (b *blockWriter) empty() bool { return b.entries == 0 }

// add appends an entry. Keys must arrive in the order the block's reader
// expects; the caller checks.
func (b *blockWriter) add(key, value []byte) {
	shared := 0
	if b.counter >= b.restartInterval || b.entries == 0 {
		b.restarts = append(b.restarts, uint32(len(b.buf)))
		b.counter = 0
	} else {
		n := min(len(key), len(b.lastKey))
		for shared < n && key[shared] == b.lastKey[shared] {
			shared++
		}
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(key)-shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(value)))
	b.buf = append(b.buf, key[shared:]...)
	b.buf = append(b.buf, value...)
	b.lastKey = append(b.lastKey[:0], key...)
	b.counter++
	b.entries++
}

// estimatedSize returns the size finish would produce now.
func (b *blockWriter) estimatedSize() int {
	return len(b.buf) + 4*len(b.restarts) + blockFooterLen
}

// estimatedSizeAfter returns about what estimatedSize would be after adding
// an entry with this key and value.
func (b *blockWriter) estimatedSizeAfter(keyLen, valueLen int) int {
	n := b.estimatedSize() + keyLen + valueLen + 3*binary.MaxVarintLen32
	if b.counter >= b.restartInterval || b.entries == 0 {
		n += 4
	}
	return n
}

// finish appends the restart array and footer word and returns the block.
// The slice is the writer's buffer: valid until the next reset.
func (b *blockWriter) finish() []byte {
	for _, r := range b.restarts {
		b.buf = binary.LittleEndian.AppendUint32(b.buf, r)
	}
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(len(b.restarts)))
	return b.buf
}

// walkBlock calls fn for every entry of a block, in order, without assuming
// anything about its keys. The key passed to fn is valid only during the
// call; the value aliases block. Used for the small meta blocks and at open,
// where every entry is read once. blockOff is the block's file offset, for
// errors.
func walkBlock(block []byte, file string, blockOff uint64, fn func(key, value []byte) error) error {
	end, _, err := blockLayout(block, file, blockOff)
	if err != nil {
		return err
	}
	var key []byte
	for off := 0; off < end; {
		shared, unshared, vlen, p, ok := decodeEntryHeader(block, off, end)
		if !ok || shared > len(key) {
			return base.Corruptf(file, int64(blockOff)+int64(off), "malformed block entry (block of %d bytes, entries end at %d)", len(block), end)
		}
		key = append(key[:shared], block[p:p+unshared]...)
		if err := fn(key, block[p+unshared:p+unshared+vlen]); err != nil {
			return err
		}
		off = p + unshared + vlen
	}
	return nil
}

// blockLayout checks a block's footer word and returns where its entries
// end (the restart array's offset) and its restart count.
func blockLayout(block []byte, file string, blockOff uint64) (entriesEnd, numRestarts int, err error) {
	if len(block) < blockFooterLen {
		return 0, 0, base.Corruptf(file, int64(blockOff), "block of %d bytes has no room for its footer word", len(block))
	}
	word := binary.LittleEndian.Uint32(block[len(block)-blockFooterLen:])
	if word&^blockRestartMask != 0 {
		return 0, 0, base.Corruptf(file, int64(blockOff), "block footer word %#08x has unknown flags set", word)
	}
	n := int(word & blockRestartMask)
	end := len(block) - blockFooterLen - 4*n
	switch {
	case end < 0:
		return 0, 0, base.Corruptf(file, int64(blockOff), "block of %d bytes claims %d restarts", len(block), n)
	case n == 0 && end != 0:
		return 0, 0, base.Corruptf(file, int64(blockOff), "block with %d bytes of entries has no restart points", end)
	case n > 0 && binary.LittleEndian.Uint32(block[end:]) != 0:
		return 0, 0, base.Corruptf(file, int64(blockOff), "first restart point is %d, expected 0", binary.LittleEndian.Uint32(block[end:]))
	}
	return end, n, nil
}

// decodeEntryHeader decodes the three lengths of the entry at off and
// returns them with the offset p of the key suffix. ok is false unless the
// suffix and value end at or before limit.
func decodeEntryHeader(b []byte, off, limit int) (shared, unshared, vlen, p int, ok bool) {
	if off >= 0 && off+3 <= limit && limit <= len(b) {
		// Fast path: three one-byte varints, as short keys and values have.
		h := b[off : off+3 : off+3]
		if h[0]|h[1]|h[2] < 0x80 {
			p = off + 3
			if int(h[1])+int(h[2]) > limit-p {
				return 0, 0, 0, 0, false
			}
			return int(h[0]), int(h[1]), int(h[2]), p, true
		}
		// Short key lengths and a two-byte value length (128 bytes to
		// 16 KiB): a table row's.
		if h[0]|h[1] < 0x80 && off+4 <= limit {
			if c := b[off+3]; c < 0x80 {
				p = off + 4
				vlen := int(h[2]&0x7f) | int(c)<<7
				if int(h[1])+vlen > limit-p {
					return 0, 0, 0, 0, false
				}
				return int(h[0]), int(h[1]), vlen, p, true
			}
		}
	}
	p = off
	var v [3]uint64
	for i := range v {
		if p >= limit {
			return 0, 0, 0, 0, false
		}
		if c := b[p]; c < 0x80 {
			// One-byte varint: the common case.
			v[i] = uint64(c)
			p++
			continue
		}
		x, n := binary.Uvarint(b[p:limit])
		if n <= 0 || x > maxBlockLen {
			return 0, 0, 0, 0, false
		}
		v[i] = x
		p += n
	}
	if v[1]+v[2] > uint64(limit-p) {
		return 0, 0, 0, 0, false
	}
	return int(v[0]), int(v[1]), int(v[2]), p, true
}
