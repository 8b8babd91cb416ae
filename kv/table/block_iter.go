package table

import (
	"encoding/binary"

	"github.com/strata-db/strata/kv/internal/base"
)

// BlockIter iterates over one block whose keys are internal keys: a data
// block, or any block written in the same format. It implements the
// positioning half of base.InternalIterator (SeekGE, SeekLT, First, Last,
// Next, Prev, Error).
//
// SeekGE and SeekLT binary-search the restart points and then decode at most
// one restart interval. Prev decodes the current restart interval once into
// a reused buffer and then steps back through it, so a reverse scan costs
// about as much as a forward one.
//
// A BlockIter never allocates once its buffers have grown to the block's
// largest key and restart interval; InitAt re-targets it at another block
// keeping them. Malformed bytes never make it panic: a positioning call
// returns nil and Error reports a corruption naming the file and offset.
//
// Next on an iterator before its first entry (a fresh block, or after Prev
// returned nil) acts as First, and Prev after its last entry as Last.
//
// The returned *base.KV and its slices are valid until the next positioning
// call, InitAt, Reset, or until the block's bytes are released. A BlockIter
// is not safe for concurrent use; the block's bytes are only read.
type BlockIter struct {
	data        []byte
	entriesEnd  int // offset of the restart array: entries lie in [0, entriesEnd)
	numRestarts int
	file        string
	blockOff    uint64
	initErr     error

	// off is the offset of the current entry: -1 before the first entry,
	// entriesEnd after the last. nextOff is the offset of the entry after
	// it.
	off     int
	nextOff int
	// key is the current key. It aliases data (restart entries), keyBuf
	// (keyOwned) or cacheBuf (entries served from the cache).
	key      []byte
	keyOwned bool
	keyBuf   []byte
	kv       base.KV

	// The decoded entries of one restart interval, for Prev. cacheIdx is the
	// current entry's index in cache, or -1 when the current entry was not
	// served from it; cacheRestart is the interval's restart index, or -1
	// when cache is empty.
	cache        []cachedEntry
	cacheBuf     []byte
	cacheIdx     int
	cacheRestart int

	err error
}

// cachedEntry locates one decoded entry: its key in cacheBuf, its value in
// the block.
type cachedEntry struct {
	off, nextOff     int
	keyStart, keyEnd int
	valStart         int
}

// Init positions the iterator before the first entry of a new block, keeping
// its buffers. Errors name no file; use InitAt inside a table.
func (i *BlockIter) Init(data []byte) error { return i.InitAt(data, "", 0) }

// InitAt is Init for a block read from file at offset blockOff: corruption
// errors name them.
func (i *BlockIter) InitAt(data []byte, file string, blockOff uint64) error {
	i.file, i.blockOff = file, blockOff
	i.resetPosition()
	end, n, err := blockLayout(data, file, blockOff)
	if err != nil {
		i.data, i.entriesEnd, i.numRestarts = nil, 0, 0
		i.initErr, i.err = err, err
		return err
	}
	i.data, i.entriesEnd, i.numRestarts = data, end, n
	i.initErr, i.err = nil, nil
	return nil
}

// Reset forgets the block, keeping the buffers for the next InitAt.
// Positioning calls return nil until then.
func (i *BlockIter) Reset() {
	i.data, i.entriesEnd, i.numRestarts = nil, 0, 0
	i.initErr, i.err = nil, nil
	i.resetPosition()
}

func (i *BlockIter) resetPosition() {
	i.off, i.nextOff = -1, 0
	i.key, i.keyOwned = nil, false
	i.kv = base.KV{}
	i.cacheIdx, i.cacheRestart = -1, -1
}

// Error returns the corruption met by the last positioning call, if any.
func (i *BlockIter) Error() error { return i.err }

func (i *BlockIter) corrupt(off int, format string, args ...any) *base.KV {
	i.err = base.Corruptf(i.file, int64(i.blockOff)+int64(off), format, args...)
	i.off = i.entriesEnd
	i.cacheIdx = -1
	return nil
}

// restartOffset returns the offset of restart point r, or -1 if it does not
// point inside the entries.
func (i *BlockIter) restartOffset(r int) int {
	off := int(binary.LittleEndian.Uint32(i.data[i.entriesEnd+4*r:]))
	if off >= i.entriesEnd {
		return -1
	}
	return off
}

// restartKey returns the whole key stored at restart point r.
func (i *BlockIter) restartKey(r int) ([]byte, bool) {
	off := i.restartOffset(r)
	if off < 0 {
		return nil, false
	}
	shared, unshared, _, p, ok := decodeEntryHeader(i.data, off, i.entriesEnd)
	if !ok || shared != 0 || unshared < base.TrailerLen {
		return nil, false
	}
	return i.data[p : p+unshared], true
}

// decodeAt makes the entry at off current. REQUIRES: i.key is the key of
// the entry before off, or off is a restart point and i.key is empty.
func (i *BlockIter) decodeAt(off int) *base.KV {
	shared, unshared, vlen, p, ok := decodeEntryHeader(i.data, off, i.entriesEnd)
	if !ok || shared > len(i.key) {
		return i.corrupt(off, "malformed block entry (entries end at %d)", i.entriesEnd)
	}
	switch {
	case shared == 0:
		i.key, i.keyOwned = i.data[p:p+unshared], false
	case i.keyOwned:
		i.keyBuf = append(i.keyBuf[:shared], i.data[p:p+unshared]...)
		i.key = i.keyBuf
	default:
		i.keyBuf = append(append(i.keyBuf[:0], i.key[:shared]...), i.data[p:p+unshared]...)
		i.key, i.keyOwned = i.keyBuf, true
	}
	if len(i.key) < base.TrailerLen {
		return i.corrupt(off, "block key of %d bytes is shorter than an internal key trailer", len(i.key))
	}
	i.off = off
	i.nextOff = p + unshared + vlen
	i.kv.K = i.key
	i.kv.V = i.data[p+unshared : i.nextOff]
	return &i.kv
}

// startAt decodes the entry at restart point r with no previous key.
func (i *BlockIter) startAt(r int) *base.KV {
	off := i.restartOffset(r)
	if off < 0 {
		return i.corrupt(i.entriesEnd+4*r, "restart point %d is past the entries", r)
	}
	i.key, i.keyOwned = i.keyBuf[:0], true
	return i.decodeAt(off)
}

// First positions on the first entry.
func (i *BlockIter) First() *base.KV {
	i.err = i.initErr
	i.cacheIdx, i.cacheRestart = -1, -1
	if i.numRestarts == 0 {
		i.off = i.entriesEnd
		return nil
	}
	return i.startAt(0)
}

// Last positions on the last entry.
func (i *BlockIter) Last() *base.KV {
	i.err = i.initErr
	if i.numRestarts == 0 {
		i.off = -1
		return nil
	}
	return i.fillCache(i.numRestarts-1, -1, nil)
}

// Next moves to the next entry.
func (i *BlockIter) Next() *base.KV {
	switch {
	case i.err != nil:
		return nil
	case i.off < 0:
		return i.First()
	case i.off >= i.entriesEnd:
		return nil
	}
	if i.cacheIdx >= 0 {
		if i.cacheIdx+1 < len(i.cache) {
			i.cacheIdx++
			return i.fromCache()
		}
		i.cacheIdx, i.cacheRestart = -1, -1
	}
	if i.nextOff >= i.entriesEnd {
		i.off = i.entriesEnd
		return nil
	}
	return i.decodeAt(i.nextOff)
}

// Prev moves to the previous entry.
func (i *BlockIter) Prev() *base.KV {
	switch {
	case i.err != nil:
		return nil
	case i.off >= i.entriesEnd:
		return i.Last()
	case i.off < 0:
		return nil
	}
	if i.cacheIdx > 0 {
		i.cacheIdx--
		return i.fromCache()
	}
	if i.cacheIdx == 0 {
		// At the first entry of the cached interval: the previous entry is
		// the last of the interval before.
		if i.cacheRestart == 0 {
			i.off, i.cacheIdx = -1, -1
			return nil
		}
		return i.fillCache(i.cacheRestart-1, -1, nil)
	}
	// Find the interval holding the current entry: the last restart point
	// at or before it.
	lo, hi := 0, i.numRestarts
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		ro := i.restartOffset(m)
		if ro < 0 {
			return i.corrupt(i.entriesEnd+4*m, "restart point %d is past the entries", m)
		}
		if ro <= i.off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	r := lo - 1
	if r < 0 {
		return i.corrupt(i.off, "no restart point at or before the entry")
	}
	if i.restartOffset(r) == i.off {
		if r == 0 {
			i.off = -1
			return nil
		}
		return i.fillCache(r-1, -1, nil)
	}
	return i.fillCache(r, i.off, nil)
}

// SeekGE positions on the first entry whose key is >= target.
func (i *BlockIter) SeekGE(target []byte) *base.KV {
	i.err = i.initErr
	i.cacheIdx, i.cacheRestart = -1, -1
	if i.numRestarts == 0 || i.err != nil {
		i.off = i.entriesEnd
		return nil
	}
	if !base.Valid(target) {
		return i.corrupt(0, "search key %q is not an internal key", target)
	}
	// Find the first restart point whose key is > target; the answer lies in
	// the interval before it (or is that restart's key).
	lo, hi := 0, i.numRestarts
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k, ok := i.restartKey(m)
		if !ok {
			return i.corrupt(i.entriesEnd+4*m, "restart point %d does not start a whole key", m)
		}
		if base.Compare(k, target) > 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	kv := i.startAt(max(lo-1, 0))
	for kv != nil && base.Compare(kv.K, target) < 0 {
		kv = i.Next()
	}
	return kv
}

// SeekLT positions on the last entry whose key is < target.
func (i *BlockIter) SeekLT(target []byte) *base.KV {
	i.err = i.initErr
	i.cacheIdx, i.cacheRestart = -1, -1
	if i.numRestarts == 0 || i.err != nil {
		i.off = -1
		return nil
	}
	if !base.Valid(target) {
		return i.corrupt(0, "search key %q is not an internal key", target)
	}
	// Find the first restart point whose key is >= target; the answer is in
	// the interval before it.
	lo, hi := 0, i.numRestarts
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		k, ok := i.restartKey(m)
		if !ok {
			return i.corrupt(i.entriesEnd+4*m, "restart point %d does not start a whole key", m)
		}
		if base.Compare(k, target) >= 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == 0 {
		i.off = -1
		return nil
	}
	return i.fillCache(lo-1, -1, target)
}

// fillCache decodes the entries of restart interval r into the cache and
// positions on the last one. It stops before stopOff when stopOff >= 0 (the
// current entry, for Prev), and before the first key >= target when target
// is not nil (SeekLT).
func (i *BlockIter) fillCache(r, stopOff int, target []byte) *base.KV {
	start := i.restartOffset(r)
	if start < 0 {
		return i.corrupt(i.entriesEnd+4*r, "restart point %d is past the entries", r)
	}
	end := i.entriesEnd
	if r+1 < i.numRestarts {
		if end = i.restartOffset(r + 1); end <= start {
			return i.corrupt(i.entriesEnd+4*(r+1), "restart point %d does not follow restart point %d", r+1, r)
		}
	}
	if stopOff >= 0 {
		end = stopOff
	}
	i.cache, i.cacheBuf = i.cache[:0], i.cacheBuf[:0]
	prevStart, prevLen := 0, 0
	off := start
	for off < end {
		shared, unshared, vlen, p, ok := decodeEntryHeader(i.data, off, i.entriesEnd)
		if !ok || shared > prevLen || (off == start && shared != 0) {
			return i.corrupt(off, "malformed block entry (entries end at %d)", i.entriesEnd)
		}
		ks := len(i.cacheBuf)
		i.cacheBuf = append(i.cacheBuf, i.cacheBuf[prevStart:prevStart+shared]...)
		i.cacheBuf = append(i.cacheBuf, i.data[p:p+unshared]...)
		ke := len(i.cacheBuf)
		if ke-ks < base.TrailerLen {
			return i.corrupt(off, "block key of %d bytes is shorter than an internal key trailer", ke-ks)
		}
		if target != nil && base.Compare(i.cacheBuf[ks:ke], target) >= 0 {
			i.cacheBuf = i.cacheBuf[:ks]
			break
		}
		next := p + unshared + vlen
		i.cache = append(i.cache, cachedEntry{off: off, nextOff: next, keyStart: ks, keyEnd: ke, valStart: p + unshared})
		prevStart, prevLen = ks, ke-ks
		off = next
	}
	if stopOff >= 0 && off != stopOff {
		return i.corrupt(start, "entries of restart interval %d do not end at offset %d", r, stopOff)
	}
	if len(i.cache) == 0 {
		// Only reachable when the restart key itself is >= target, which the
		// binary search ruled out unless the restart array is out of order.
		return i.corrupt(start, "restart interval %d holds no key below the search key", r)
	}
	i.cacheRestart = r
	i.cacheIdx = len(i.cache) - 1
	return i.fromCache()
}

// fromCache makes cache[cacheIdx] current.
func (i *BlockIter) fromCache() *base.KV {
	e := &i.cache[i.cacheIdx]
	i.key, i.keyOwned = i.cacheBuf[e.keyStart:e.keyEnd], false
	i.off, i.nextOff = e.off, e.nextOff
	i.kv.K = i.key
	i.kv.V = i.data[e.valStart:e.nextOff]
	return &i.kv
}
