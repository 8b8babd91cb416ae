package filter

import (
	"math"

	"github.com/strata-db/strata/kv/internal/base"
)

// trailerLen is the size of the metadata trailer at the end of every
// filter. Its first byte says which filter follows. Durable.
const trailerLen = 5

// readerKind is what a Reader answers with.
type readerKind uint8

const (
	kindEmpty      readerKind = iota // no keys: always "no"
	kindAlwaysTrue                   // unknown variant: always "maybe"
	kindBloom
	kindRibbon
)

// Reader answers membership queries against one serialized filter. It is a
// small value that aliases the bytes it was decoded from (no copy): those
// bytes must stay unchanged while the Reader is in use. The zero Reader is
// an empty filter.
//
// A Reader is immutable and safe for concurrent use.
type Reader struct {
	data   []byte // the payload: everything before the trailer
	kind   readerKind
	probes uint8 // Bloom
	// Bloom: number of 64-byte lines.
	numLines uint32
	// Ribbon.
	rawSeed uint64
	layout  ribbonLayout
}

// Decode parses a serialized filter (as appended by Builder.Finish) without
// copying or allocating. Structurally impossible data (a payload that is not
// a whole number of lines or segments, counts that contradict the length)
// returns an error marked as corruption (see kv.IsCorruption). A trailer
// this version does not recognize decodes as a filter that answers "maybe"
// to everything, which is always safe; a filter with no keys answers "no".
func Decode(data []byte) (Reader, error) {
	if len(data) < trailerLen {
		return Reader{}, base.Corruptf("", -1, "filter: %d bytes, shorter than the %d-byte trailer", len(data), trailerLen)
	}
	payload := data[: len(data)-trailerLen : len(data)-trailerLen]
	t := data[len(data)-trailerLen:]
	switch t[0] {
	case bloomMarker:
		return decodeBloom(payload, t)
	case ribbonMarker:
		return decodeRibbon(payload, t)
	}
	return Reader{kind: kindAlwaysTrue}, nil
}

func decodeBloom(payload, t []byte) (Reader, error) {
	if len(payload)%bloomLineBytes != 0 {
		return Reader{}, base.Corruptf("", -1, "filter: Bloom payload of %d bytes is not a whole number of %d-byte lines",
			len(payload), bloomLineBytes)
	}
	if uint64(len(payload))/bloomLineBytes > math.MaxUint32 {
		return Reader{}, base.Corruptf("", -1, "filter: Bloom payload of %d bytes has more than 2^32-1 lines", len(payload))
	}
	if t[1] != 0 || t[2]>>5 != 0 || t[3] != 0 || t[4] != 0 {
		// Another sub-format or line size: not ours to interpret.
		return Reader{kind: kindAlwaysTrue}, nil
	}
	if len(payload) == 0 {
		return Reader{kind: kindEmpty}, nil
	}
	probes := t[2] & bloomMaxProbes
	if probes == 0 {
		return Reader{kind: kindAlwaysTrue}, nil
	}
	return Reader{
		data:     payload,
		kind:     kindBloom,
		probes:   probes,
		numLines: uint32(len(payload) / bloomLineBytes),
	}, nil
}

func decodeRibbon(payload, t []byte) (Reader, error) {
	numBlocks := uint64(t[2]) | uint64(t[3])<<8 | uint64(t[4])<<16
	if len(payload)%ribbonSegmentBytes != 0 {
		return Reader{}, base.Corruptf("", -1, "filter: Ribbon payload of %d bytes is not a whole number of %d-byte segments",
			len(payload), ribbonSegmentBytes)
	}
	numSegments := uint64(len(payload)) / ribbonSegmentBytes
	switch {
	case numBlocks == 0 && numSegments == 0:
		return Reader{kind: kindEmpty}, nil
	case numBlocks == 0:
		return Reader{}, base.Corruptf("", -1, "filter: Ribbon filter of 0 blocks has a %d-byte payload", len(payload))
	case numBlocks == 1:
		// One block leaves a single start slot: never written; answer
		// "maybe" rather than trust it.
		return Reader{kind: kindAlwaysTrue}, nil
	}
	l, ok := makeRibbonLayout(numBlocks, numSegments)
	if !ok {
		return Reader{}, base.Corruptf("", -1, "filter: Ribbon filter of %d blocks cannot have %d segments (want 1 to %d per block)",
			numBlocks, numSegments, ribbonMaxCols)
	}
	return Reader{
		data:    payload,
		kind:    kindRibbon,
		rawSeed: ribbonRawSeed(t[1]),
		layout:  l,
	}, nil
}

// Type returns Bloom or Ribbon for a filter of that kind, and None for an
// empty filter or one this version does not recognize. A Ribbon policy can
// produce Bloom filters (see Builder.Finish).
func (r *Reader) Type() Type {
	switch r.kind {
	case kindBloom:
		return Bloom
	case kindRibbon:
		return Ribbon
	}
	return None
}

// Size returns the payload size in bytes (the filter's length minus the
// trailer).
func (r *Reader) Size() int { return len(r.data) }

// BitsPerKey returns the filter's payload bits per key for a filter built
// from n keys (0 when n is 0).
func (r *Reader) BitsPerKey(n int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(len(r.data)) * 8 / float64(n)
}

// EstimatedFPRate returns the false-positive rate the filter's layout
// predicts for a filter built from n distinct keys: 0 for an empty filter, 1
// for one that answers "maybe" to everything.
func (r *Reader) EstimatedFPRate(n int) float64 {
	switch r.kind {
	case kindEmpty:
		return 0
	case kindBloom:
		if n <= 0 {
			return 0
		}
		return cacheLocalFPRate(r.BitsPerKey(n), int(r.probes)) + float64(n)/math.Exp2(64)
	case kindRibbon:
		return ribbonFPRate(r.layout.numStarts, r.layout.upperCols, r.layout.upperStart) + float64(n)/math.Exp2(64)
	}
	return 1
}

// AppendProbe appends to dst the address of the first byte MayContain
// reads for hash, so that a caller about to probe several filters can
// load their lines together first (their cache misses then overlap). A
// Ribbon probe may read a second span; the first is the one that starts
// it.
func (r *Reader) AppendProbe(dst []*byte, hash uint64) []*byte {
	var off uint32
	switch r.kind {
	case kindBloom:
		off = bloomLineOffset(hash, r.numLines)
	case kindRibbon:
		_, off, _, _, _ = r.layout.prepare(hash, r.rawSeed)
	default:
		return dst
	}
	if int(off) >= len(r.data) {
		return dst
	}
	return append(dst, &r.data[off])
}

// MayContain reports whether the key with the given hash (see Hash) may
// have been added. It never returns false for a key that was added; for
// other keys it returns true with about the filter's false-positive rate.
// It does not allocate.
func (r *Reader) MayContain(hash uint64) bool {
	switch r.kind {
	case kindBloom:
		off := bloomLineOffset(hash, r.numLines)
		if int(off)+bloomLineBytes > len(r.data) {
			return true // unreachable: Decode checked the line count
		}
		line := (*[bloomLineBytes]byte)(r.data[off : off+bloomLineBytes])
		return bloomLineMayContain(line, uint32(hash>>32), int(r.probes))
	case kindRibbon:
		sh, off, off2, cols, t := r.layout.prepare(hash, r.rawSeed)
		return ribbonTest(r.data, sh, off, off2, cols, t)
	case kindEmpty:
		return false
	}
	return true
}
