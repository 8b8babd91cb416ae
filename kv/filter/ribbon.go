package filter

import (
	"encoding/binary"
	"math/bits"
)

// Ribbon format
//
// A Standard128 Ribbon filter stores the solution S of a linear system over
// GF(2) with one equation per key: the key's 128-bit coefficient row, placed
// at the key's start slot, times S gives the key's result bits. The system
// has numSlots = 128 * numBlocks unknowns (slots); a key's window covers
// slots start .. start+127, with start < numStarts = numSlots - 127.
//
// Per key hash h and ordinal seed s (0..255, from the trailer):
//
//	raw   = s * 0xc78219a23eeadd03            (64-bit wrap-around)
//	raw  ^= (raw & 0xf0f0f0f0f0f0f0f0) >> 4
//	raw   = low32(raw)
//	sh    = (h ^ raw) * 0x6193d459236a3a0d    the seeded hash
//	start = high64(sh * numStarts)            (128-bit product)
//	a     = sh * 0xc28f82822b650bed
//	coeff = (a << 64 | (a ^ 0xc367844a6e52731d)) | 1   (128-bit, bit 0 = slot start)
//	want  = low32(byteswap64(a))                the key's result bits
//
// Solution columns: each slot holds c solution bits ("columns"); a key is
// present iff, for every column j < c, the parity of (coeff AND the column's
// bits over the key's window) equals bit j of want. Each column halves the
// false-positive rate. To reach rates between powers of two, the first
// upperStart blocks of 128 slots have upperCols-1 columns and the others
// upperCols; a key uses the columns of the block its start falls in.
//
// Interleaved layout: the payload is a sequence of 16-byte segments, each a
// little-endian 128-bit word (low 8 bytes first). Block k owns cols(k)
// consecutive segments, one per column; bit j of column c's segment is the
// solution bit of slot 128k+j in column c. Blocks follow in order, so
// block k starts at segment k*upperCols - min(k, upperStart). A window that
// starts at bit t > 0 of block k also covers the first t slots' worth of
// block k+1, whose first cols(k) segments hold the same columns.
//
// Trailer (5 bytes): FE | seed | numBlocks as 24-bit little-endian.
// upperCols and upperStart are not stored: with numSegments = payload/16,
// upperCols = ceil(numSegments / numBlocks) and upperStart =
// upperCols*numBlocks - numSegments.
//
// Everything in this comment, and every constant below marked durable, is
// part of the on-disk format; never change it.

const (
	// ribbonMarker is the first trailer byte of a Ribbon filter. Durable.
	ribbonMarker = 0xFE
	// ribbonBlockSlots is the coefficient window and block width. Durable.
	ribbonBlockSlots = 128
	// ribbonSegmentBytes is the size of one column of one block. Durable.
	ribbonSegmentBytes = 16
	// ribbonMaxCols is the most solution columns per block (32 result
	// bits). Durable.
	ribbonMaxCols = 32
	// ribbonMaxBlocks is the largest block count the trailer can hold.
	// Durable.
	ribbonMaxBlocks = 1<<24 - 1

	// Hash expansion constants. Durable.
	ribbonSeedToRaw    = 0xc78219a23eeadd03
	ribbonSeedMixMask  = 0xf0f0f0f0f0f0f0f0
	ribbonSeedMixShift = 4
	ribbonRehash       = 0x6193d459236a3a0d
	ribbonCoeffMul     = 0xc28f82822b650bed
	ribbonCoeffXor     = 0xc367844a6e52731d
)

// ribbonRawSeed expands an ordinal seed into the 32-bit value XORed into
// every key hash.
func ribbonRawSeed(ordinal uint8) uint64 {
	t := uint64(ordinal) * ribbonSeedToRaw
	t ^= (t & ribbonSeedMixMask) >> ribbonSeedMixShift
	return uint64(uint32(t))
}

// ribbonSeeded applies the raw seed to a key hash.
func ribbonSeeded(h, rawSeed uint64) uint64 {
	return (h ^ rawSeed) * ribbonRehash
}

// ribbonStart maps a seeded hash to a start slot in [0, numStarts).
func ribbonStart(sh uint64, numStarts uint32) uint32 {
	hi, _ := bits.Mul64(sh, uint64(numStarts))
	return uint32(hi)
}

// ribbonCoeffResult returns the 128-bit coefficient row (bit 0 always set)
// and the 32 result bits of a seeded hash.
func ribbonCoeffResult(sh uint64) (lo, hi uint64, want uint32) {
	a := sh * ribbonCoeffMul
	return (a ^ ribbonCoeffXor) | 1, a, uint32(bits.ReverseBytes64(a))
}

// ribbonLayout is the column plan of a solution.
type ribbonLayout struct {
	numBlocks  uint32
	numStarts  uint32 // numBlocks*128 - 127
	upperCols  uint32 // columns of blocks >= upperStart; 1..32
	upperStart uint32 // first block with upperCols columns
}

// makeRibbonLayout derives the column plan from the block and segment
// counts, as the reader does from the trailer and the payload length. It
// reports false when they do not describe a solution (no segments, or more
// than 32 columns).
func makeRibbonLayout(numBlocks, numSegments uint64) (ribbonLayout, bool) {
	if numBlocks == 0 || numBlocks > ribbonMaxBlocks || numSegments == 0 ||
		numSegments > numBlocks*ribbonMaxCols {
		return ribbonLayout{}, false
	}
	cols := (numSegments + numBlocks - 1) / numBlocks
	return ribbonLayout{
		numBlocks:  uint32(numBlocks),
		numStarts:  uint32(numBlocks*ribbonBlockSlots - (ribbonBlockSlots - 1)),
		upperCols:  uint32(cols),
		upperStart: uint32(cols*numBlocks - numSegments),
	}, true
}

// block returns the first segment and the column count of block k. It is
// written without a branch on k (the compiler emits conditional moves):
// queries land in random blocks, and about a quarter of them in the lower
// ones, so a branch here would often be mispredicted.
func (l *ribbonLayout) block(k uint32) (seg, cols uint32) {
	lower := min(k, l.upperStart) // blocks before k with upperCols-1 columns
	cols = l.upperCols
	if k < l.upperStart {
		cols--
	}
	return k*l.upperCols - lower, cols
}

// ribbonProbe is a prepared query: where the key's window lies and what it
// must produce.
type ribbonProbe struct {
	sh   uint64 // seeded hash
	off  uint32 // byte offset of the start block's first column
	off2 uint32 // byte offset of the next block's first column (off when the window fits one block)
	cols uint32
	t    uint32 // window start bit within the block
}

// prepare locates the window of key hash h (see ribbonProbe).
//
// Queries pass the results in registers, never through a struct built here
// and read back: a store that cannot be forwarded to a narrower load makes
// the load wait until the store retires, and retirement waits for the cache
// misses of earlier queries, which would serialize the misses of
// consecutive queries.
func (l *ribbonLayout) prepare(h, rawSeed uint64) (sh uint64, off, off2, cols, t uint32) {
	sh = ribbonSeeded(h, rawSeed)
	start := ribbonStart(sh, l.numStarts)
	seg, cols := l.block(start / ribbonBlockSlots)
	t = start % ribbonBlockSlots
	off = seg * ribbonSegmentBytes
	off2 = off
	if t != 0 {
		off2 += cols * ribbonSegmentBytes
	}
	return sh, off, off2, cols, t
}

// ribbonTest runs a prepared query against the payload.
func ribbonTest(data []byte, sh uint64, off, off2, cols, start uint32) bool {
	lo, hi, want := ribbonCoeffResult(sh)
	t := uint(start)
	// The window starts at bit t of the first block: the coefficient row
	// shifted left by t covers that block, shifted right by 128-t the next.
	// Go's shifts by 64 or more give zero, which makes both formulas exact
	// for every t in [0, 128).
	lLo := lo << t
	lHi := hi<<t | lo>>(64-t) | lo<<(t-64)
	s := 128 - t
	rLo := lo>>s | hi<<(64-s) | hi>>(s-64)
	rHi := hi >> s

	n := uint64(cols) * ribbonSegmentBytes
	if uint64(off)+n > uint64(len(data)) || uint64(off2)+n > uint64(len(data)) {
		return true // unreachable: Decode checked the layout
	}
	a := data[off : uint64(off)+n]
	b := data[off2 : uint64(off2)+n]
	// Every column is computed, without an early exit: a branch on loaded
	// data would let a misprediction stop the loads of the later columns
	// until the first ones arrive. The loop is kept short for the same
	// reason: the fewer instructions a query takes, the sooner the core
	// reaches the next query's loads while this one's miss is pending.
	var got uint32
	for bit := uint32(1); len(a) >= ribbonSegmentBytes && len(b) >= ribbonSegmentBytes; bit <<= 1 {
		x := binary.LittleEndian.Uint64(a[:8])&lLo ^ binary.LittleEndian.Uint64(a[8:16])&lHi ^
			binary.LittleEndian.Uint64(b[:8])&rLo ^ binary.LittleEndian.Uint64(b[8:16])&rHi
		if bits.OnesCount64(x)&1 != 0 {
			got |= bit
		}
		a, b = a[ribbonSegmentBytes:], b[ribbonSegmentBytes:]
	}
	return got == want&(1<<cols-1)
}
