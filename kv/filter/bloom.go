package filter

// Bloom format
//
// A Bloom filter is an array of 64-byte lines followed by the 5-byte
// trailer described in doc.go:
//
//	+--------+--------+-----+-----------------+----+----+--------+----+----+
//	| line 0 | line 1 | ... | line numLines-1 | FF | 00 | probes | 00 | 00 |
//	+--------+--------+-----+-----------------+----+----+--------+----+----+
//
// A key hash h is split in two 32-bit halves. The low half picks the line
// by multiply-shift range reduction, line = (low32(h) * numLines) >> 32, so
// every line count works, not only powers of two. The high half h2 drives
// the probes: each probe sets (or tests) bit h2>>23 of the 512-bit line,
// that is bit (pos & 7) of byte (pos >> 3), and then h2 *= 0x9e3779b9
// (32-bit wrap-around) for the next probe. All probes of a key therefore
// touch one cache line when the payload is 64-byte aligned, and at most two
// otherwise.
//
// The probe count byte keeps the count in its low 5 bits; its top 3 bits
// give the line size and are 0 for 64-byte lines, the only size written.
// A nonzero sub-format byte or reserved byte, or other line sizes, mark a
// variant this version does not know; such filters decode as always-true.
//
// Everything in this comment, and every constant below marked durable, is
// part of the on-disk format; never change it.

const (
	// bloomMarker is the first trailer byte of a Bloom filter. Durable.
	bloomMarker = 0xFF
	// bloomLineBytes is the line size: all probes of one key fall in one
	// line. Durable.
	bloomLineBytes = 64
	// bloomProbeMul advances the probe hash between probes (the golden
	// ratio in 32 bits). Durable.
	bloomProbeMul = 0x9e3779b9
	// bloomProbeShift takes the top 9 bits of the probe hash: a bit
	// position within the 512-bit line. Durable.
	bloomProbeShift = 32 - 9
	// bloomMaxProbes is the largest probe count the reader accepts (5
	// bits); the builder writes at most 24.
	bloomMaxProbes = 31
)

// bloomProbesForMillibits picks the probe count for a memory budget in
// thousandths of a bit per key. The thresholds minimize the false-positive
// rate of the cache-local layout, which wants fewer probes than a classic
// Bloom filter because crowded lines fill up faster (10 bits/key: 6
// probes, where a classic filter would use 7).
func bloomProbesForMillibits(m int) int {
	switch {
	case m <= 2080:
		return 1
	case m <= 3580:
		return 2
	case m <= 5100:
		return 3
	case m <= 6640:
		return 4
	case m <= 8300:
		return 5
	case m <= 10070:
		return 6
	case m <= 11720:
		return 7
	case m <= 14001:
		return 8
	case m <= 16050:
		return 9
	case m <= 18300:
		return 10
	case m <= 22001:
		return 11
	case m <= 25501:
		return 12
	case m > 50000:
		return 24
	}
	return (m-1)/2000 - 1
}

// bloomMaxPayload caps the payload so that the line count fits the 32-bit
// range reduction with room to spare.
const bloomMaxPayload = 0xffffffc0

// bloomPayloadLen returns the payload size for n keys at m millibits per
// key: ceil(n*m/8000) bytes rounded up to whole lines.
func bloomPayloadLen(n int, m int) int {
	raw := (uint64(n)*uint64(m) + 7999) / 8000
	if raw > bloomMaxPayload {
		raw = bloomMaxPayload
	}
	return int((raw + bloomLineBytes - 1) &^ (bloomLineBytes - 1))
}

// bloomLineOffset returns the byte offset of the line that hash h maps to in
// a filter of numLines lines.
func bloomLineOffset(h uint64, numLines uint32) uint32 {
	return uint32((uint64(uint32(h)) * uint64(numLines)) >> 32 * bloomLineBytes)
}

// appendBloom appends a Bloom filter over hashes, probes probes per key and
// m millibits per key, to dst.
func appendBloom(dst []byte, hashes []uint64, m, probes int) []byte {
	n := bloomPayloadLen(len(hashes), m)
	start := len(dst)
	dst = append(dst, make([]byte, n+trailerLen)...)
	payload := dst[start : start+n]
	if numLines := uint32(n / bloomLineBytes); numLines > 0 {
		for _, h := range hashes {
			off := bloomLineOffset(h, numLines)
			line := (*[bloomLineBytes]byte)(payload[off : off+bloomLineBytes])
			h2 := uint32(h >> 32)
			for range probes {
				pos := h2 >> bloomProbeShift
				line[pos>>3] |= 1 << (pos & 7)
				h2 *= bloomProbeMul
			}
		}
	}
	t := dst[start+n:]
	t[0] = bloomMarker
	t[1] = 0 // sub-format
	t[2] = byte(probes)
	t[3], t[4] = 0, 0
	return dst
}

// bloomLineMayContain tests the probes of high32(h) against one line. It
// tests every probe rather than stopping at the first clear bit: the
// branch an early exit needs is mispredicted on about half the queries,
// which costs more than the few probes it saves.
func bloomLineMayContain(line *[bloomLineBytes]byte, h2 uint32, probes int) bool {
	var miss byte
	for range probes {
		pos := h2 >> bloomProbeShift
		miss |= ^line[pos>>3] >> (pos & 7)
		h2 *= bloomProbeMul
	}
	return miss&1 == 0
}
