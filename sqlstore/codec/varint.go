package codec

import "encoding/binary"

// Order-preserving varints.
//
// AppendUvarintAscending writes an unsigned integer so that comparing the
// encodings as bytes compares the integers, and so that the first byte alone
// gives the length. This layout is part of the durable format (table and
// index IDs in every key); never change it:
//
//	v <= 0xf7        1 byte:  v
//	v >  0xf7        1+n bytes: 0xf7+n, then v big-endian in n bytes (1 <= n <= 8),
//	                 n as small as possible
//
// So 0..247 take one byte, 248..255 two, up to 65535 three, and so on. A
// longer encoding always holds a larger value, because n is minimal; decoders
// reject an encoding that is not minimal, so every value has exactly one
// encoding.
const (
	uvarintMaxSingle = 0xf7 // largest value written as a single byte
)

// AppendUvarintAscending appends the order-preserving encoding of v to dst and
// returns the extended buffer. It allocates only if dst must grow.
func AppendUvarintAscending(dst []byte, v uint64) []byte {
	if v <= uvarintMaxSingle {
		return append(dst, byte(v))
	}
	n := byteLen(v)
	dst = append(dst, byte(uvarintMaxSingle+n))
	return appendBigEndian(dst, v, n)
}

// DecodeUvarintAscending decodes a value written by AppendUvarintAscending
// from the front of b and returns the remaining bytes. It returns ErrCorrupt
// if b is truncated or the encoding is not minimal.
func DecodeUvarintAscending(b []byte) (rest []byte, v uint64, err error) {
	n, v, err := readUvarintAscending(b, 0)
	if err != nil {
		return b, 0, err
	}
	return b[n:], v, nil
}

// readUvarintAscending decodes an ascending uvarint whose bytes have been
// XORed with m, returning the number of bytes it occupies.
func readUvarintAscending(b []byte, m byte) (int, uint64, error) {
	if len(b) == 0 {
		return 0, 0, corruptf("uvarint: empty input")
	}
	tag := b[0] ^ m
	if tag <= uvarintMaxSingle {
		return 1, uint64(tag), nil
	}
	n := int(tag - uvarintMaxSingle)
	if len(b) < 1+n {
		return 0, 0, corruptf("uvarint: tag %#x needs %d bytes, have %d", tag, n, len(b)-1)
	}
	v := readBigEndian(b[1:1+n], m)
	if byteLen(v) != n || v <= uvarintMaxSingle {
		return 0, 0, corruptf("uvarint: non-minimal %d-byte encoding of %d", n, v)
	}
	return 1 + n, v, nil
}

// The signed varint below encodes the exponent of a DECIMAL key; it is part
// of the durable format. A value v >= 0 is written as p(v); a value v < 0 as
// the bitwise complement of every byte of p(-v-1), where
//
//	p(u), u <  0x78: 1 byte:  0x80+u                       (0x80..0xf7)
//	p(u), u >= 0x78: 1+n bytes: 0xf7+n, u big-endian in n  (tag 0xf8..0xff)
//
// with n minimal. Negative values therefore start with 0x00..0x7f and sort
// before non-negative ones, and a larger magnitude sorts further out.
const (
	varintPosBase   = 0x80 // first byte of p(0)
	varintMaxSingle = 0x77 // largest u written by p in one byte
)

// appendVarintAscending appends the order-preserving encoding of v.
func appendVarintAscending(dst []byte, v int64) []byte {
	if v >= 0 {
		return appendVarintMagnitude(dst, uint64(v))
	}
	start := len(dst)
	dst = appendVarintMagnitude(dst, uint64(-(v + 1)))
	invert(dst[start:])
	return dst
}

func appendVarintMagnitude(dst []byte, u uint64) []byte {
	if u <= varintMaxSingle {
		return append(dst, byte(varintPosBase+u))
	}
	n := byteLen(u)
	return appendBigEndian(append(dst, byte(uvarintMaxSingle+n)), u, n)
}

// readVarintAscending decodes a value written by appendVarintAscending whose
// bytes have been XORed with m.
func readVarintAscending(b []byte, m byte) (int, int64, error) {
	if len(b) == 0 {
		return 0, 0, corruptf("varint: empty input")
	}
	neg := b[0]^m < varintPosBase
	if neg {
		m ^= 0xff
	}
	tag := b[0] ^ m
	var n int
	var u uint64
	if tag <= varintPosBase+varintMaxSingle {
		n, u = 1, uint64(tag-varintPosBase)
	} else {
		l := int(tag - uvarintMaxSingle)
		if len(b) < 1+l {
			return 0, 0, corruptf("varint: tag %#x needs %d bytes, have %d", b[0], l, len(b)-1)
		}
		u = readBigEndian(b[1:1+l], m)
		if byteLen(u) != l || u <= varintMaxSingle || u > 1<<63-1 {
			return 0, 0, corruptf("varint: non-canonical %d-byte encoding", l)
		}
		n = 1 + l
	}
	if neg {
		return n, -int64(u) - 1, nil
	}
	return n, int64(u), nil
}

// byteLen is the number of bytes needed to hold v big-endian (at least 1).
func byteLen(v uint64) int {
	n := 1
	for v > 0xff {
		v >>= 8
		n++
	}
	return n
}

// appendBigEndian appends the low n bytes of v, most significant first.
func appendBigEndian(dst []byte, v uint64, n int) []byte {
	if n == 8 {
		return binary.BigEndian.AppendUint64(dst, v)
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

// readBigEndian reads len(b) <= 8 bytes, each XORed with m, most significant
// first.
func readBigEndian(b []byte, m byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c^m)
	}
	return v
}

// invert replaces every byte of b by its complement.
func invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}
