package filter

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Ribbon construction: sizing, banding (Gaussian elimination on the fly)
// and back substitution into the interleaved layout described in ribbon.go.

// ribbonMaxKeys is the most keys a Ribbon filter takes; beyond it the
// builder falls back to Bloom. It keeps the slot count within 32 bits and
// the block count within the trailer's 24 bits.
const ribbonMaxKeys = 950_000_000

// ribbonKeysAtPow2 holds, for 2^k slots (k = 8..17), how many keys can be
// banded with about a 1-in-20 chance that one seed fails. These are
// measurements of this exact construction (128-bit windows, first
// coefficient always one, no smashing of the ends). Beyond 2^17 slots the
// overhead (slots per key) grows by ribbonOverheadPerDoubling each time the
// slot count doubles.
var ribbonKeysAtPow2 = [...]float64{
	8: 248.851, 499.532, 1001.26, 2003.97, 4005.59, 8000.39, 15966.6, 31828.1, 63447.3, 126506,
}

const (
	ribbonMinLog2Slots        = 8
	ribbonOverheadPerDoubling = 0.0038
)

// ribbonKeysAt returns how many keys fit in 2^k slots (k >= 8).
func ribbonKeysAt(k int) float64 {
	last := len(ribbonKeysAtPow2) - 1
	if k <= last {
		return ribbonKeysAtPow2[k]
	}
	lastOverhead := math.Ldexp(1, last) / ribbonKeysAtPow2[last]
	overhead := lastOverhead + float64(k-last)*ribbonOverheadPerDoubling
	return math.Ldexp(1, k) / overhead
}

// ribbonNumSlots returns the slot count for n keys: interpolated between
// the two powers of two whose capacities bracket n, rounded up to whole
// blocks, and at least two blocks. The overhead is about 3.6% at 100,000
// keys.
func ribbonNumSlots(n int) uint32 {
	if float64(n) <= ribbonKeysAt(ribbonMinLog2Slots) {
		return 2 * ribbonBlockSlots
	}
	k := bits.Len64(uint64(n)) - 1
	for k > ribbonMinLog2Slots && ribbonKeysAt(k) > float64(n) {
		k--
	}
	for ribbonKeysAt(k+1) <= float64(n) {
		k++
	}
	lo, hi := ribbonKeysAt(k), ribbonKeysAt(k+1)
	slots := math.Ldexp(1, k) * (1 + (float64(n)-lo)/(hi-lo))
	blocks := uint32(math.Ceil(slots / ribbonBlockSlots))
	return blocks * ribbonBlockSlots
}

// ribbonNumSegments returns the segment count (payload/16) for numSlots
// slots at a target of one false positive in oneInFP. With b =
// floor(log2(oneInFP)), blocks get b or b+1 columns; the share of starts in
// b-column blocks is chosen so that the expected rate is the target, and
// bias (random, from the keys) decides how the block boundary rounds so that
// the average over many filters lands on the target too.
func ribbonNumSegments(numSlots uint32, oneInFP float64, bias uint32) uint32 {
	numBlocks := numSlots / ribbonBlockSlots
	if oneInFP >= math.MaxUint32 {
		return numBlocks * ribbonMaxCols
	}
	if !(oneInFP > 1) {
		return 1
	}
	b := bits.Len32(uint32(oneInFP)) - 1
	fp := 1 / oneInFP
	fpLower := math.Ldexp(1, -b)   // rate with b columns
	fpUpper := math.Ldexp(1, -b-1) // rate with b+1 columns
	lowerShare := min(1, max(0, (fp-fpUpper)/(fpLower-fpUpper)))
	numStarts := float64(numSlots - (ribbonBlockSlots - 1))
	roundBias := (float64(bias) + 0.5) / (1 << 32)
	upperStart := uint32((lowerShare*numStarts + roundBias) / ribbonBlockSlots)
	if upperStart >= numBlocks {
		upperStart = numBlocks - 1
	}
	return numBlocks*uint32(b) + (numBlocks - upperStart)
}

// banding is the scratch of a Ribbon construction, kept by the Builder
// across filters: per slot a 128-bit coefficient row and 32 result bits.
// Invariant after a successful add sequence: a nonzero row stored at slot i
// has bit 0 set (it is the pivot of column i), so the stored system is
// upper triangular within a band 128 slots wide.
type banding struct {
	lo, hi []uint64
	result []uint32
}

// reset clears the first numSlots slots, growing the arrays if needed.
func (b *banding) reset(numSlots uint32) {
	n := int(numSlots)
	if cap(b.lo) < n {
		b.lo = make([]uint64, n)
		b.hi = make([]uint64, n)
		b.result = make([]uint32, n)
		return
	}
	b.lo, b.hi, b.result = b.lo[:n], b.hi[:n], b.result[:n]
	clear(b.lo)
	clear(b.hi)
	clear(b.result)
}

// add inserts one key's equation, eliminating against the rows already
// stored. It reports false when the equation contradicts them (the seed
// has failed); an equation implied by them (a duplicate key) is dropped.
func (b *banding) add(sh uint64, l *ribbonLayout) bool {
	i := ribbonStart(sh, l.numStarts)
	lo, hi, rr := ribbonCoeffResult(sh)
	// Only the columns the key's block stores must hold; clearing the other
	// result bits makes spurious contradictions (and seed retries) rarer.
	cols := l.upperCols
	if i/ribbonBlockSlots < l.upperStart {
		cols--
	}
	rr &= uint32(1)<<cols - 1
	for {
		if int(i) >= len(b.lo) || int(i) >= len(b.hi) || int(i) >= len(b.result) {
			return false // unreachable: rows never reach past the last slot
		}
		olo, ohi := b.lo[i], b.hi[i]
		if olo|ohi == 0 {
			b.lo[i], b.hi[i], b.result[i] = lo, hi, rr
			return true
		}
		lo ^= olo
		hi ^= ohi
		rr ^= b.result[i]
		if lo|hi == 0 {
			return rr == 0
		}
		var tz uint
		if lo != 0 {
			tz = uint(bits.TrailingZeros64(lo))
		} else {
			tz = 64 + uint(bits.TrailingZeros64(hi))
		}
		lo = lo>>tz | hi<<(64-tz) | hi>>(tz-64)
		hi >>= tz
		i += uint32(tz)
	}
}

// backSubstitute solves the banded system from the last slot to the first
// and writes the solution into payload in the interleaved layout. For each
// column it keeps a 128-bit window of the solution bits of the slots just
// solved; a slot's bit is its result bit XOR the parity of its row AND the
// window. Empty slots get 0. After the 128 slots of a block the windows are
// exactly that block's segments.
func (b *banding) backSubstitute(payload []byte, l *ribbonLayout) {
	var wlo, whi [ribbonMaxCols]uint64
	cols := int(l.upperCols)
	for k := int(l.numBlocks) - 1; k >= 0; k-- {
		base := k * ribbonBlockSlots
		rowsLo := b.lo[base : base+ribbonBlockSlots]
		rowsHi := b.hi[base : base+ribbonBlockSlots]
		res := b.result[base : base+ribbonBlockSlots]
		for i := ribbonBlockSlots - 1; i >= 0; i-- {
			clo, chi, rr := rowsLo[i], rowsHi[i], res[i]
			for j := range cols {
				slo, shi := wlo[j]<<1, whi[j]<<1|wlo[j]>>63
				p := uint64(bits.OnesCount64(slo&clo^shi&chi)) ^ uint64(rr>>j)
				wlo[j], whi[j] = slo|p&1, shi
			}
		}
		seg, n := l.block(uint32(k))
		out := payload[seg*ribbonSegmentBytes : (seg+n)*ribbonSegmentBytes]
		for j := range int(n) {
			binary.LittleEndian.PutUint64(out[j*ribbonSegmentBytes:], wlo[j])
			binary.LittleEndian.PutUint64(out[j*ribbonSegmentBytes+8:], whi[j])
		}
	}
}

// appendRibbon appends a Ribbon filter over hashes to dst, or reports false
// (leaving dst as it was) when a Bloom filter should be written instead:
// too many keys, a filter that Bloom makes smaller, or all 256 seeds failed.
// hashes must be non-empty.
func (b *Builder) appendRibbon(dst []byte, hashes []uint64) ([]byte, bool) {
	n := len(hashes)
	if n > ribbonMaxKeys {
		return dst, false
	}
	numSlots := ribbonNumSlots(n)
	first := hashes[0]
	numSegments := ribbonNumSegments(numSlots, b.cfg.oneInFP, uint32(first>>32))
	payloadLen := int(numSegments) * ribbonSegmentBytes
	if numSlots < 1024 && bloomPayloadLen(n, b.cfg.millibitsPerKey) < payloadLen {
		return dst, false
	}
	l, ok := makeRibbonLayout(uint64(numSlots/ribbonBlockSlots), uint64(numSegments))
	if !ok {
		return dst, false
	}
	// Seeds are tried from one picked by the keys, so that filters over
	// different key sets do not share their false positives.
	seed := uint8(first)
	for range 256 {
		raw := ribbonRawSeed(seed)
		b.band.reset(numSlots)
		ok = true
		for _, h := range hashes {
			if !b.band.add(ribbonSeeded(h, raw), &l) {
				ok = false
				break
			}
		}
		if ok {
			break
		}
		seed++
	}
	if !ok {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, make([]byte, payloadLen+trailerLen)...)
	b.band.backSubstitute(dst[start:start+payloadLen], &l)
	t := dst[start+payloadLen:]
	t[0] = ribbonMarker
	t[1] = seed
	t[2], t[3], t[4] = byte(l.numBlocks), byte(l.numBlocks>>8), byte(l.numBlocks>>16)
	return dst, true
}
