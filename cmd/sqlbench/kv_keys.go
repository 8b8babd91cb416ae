package main

// Keys and values of the kv workloads, generated exactly as db_bench does so
// that databases and figures compare.
//
// A key is the key number big-endian in its first min(8, key_size) bytes
// (the low-order bytes when key_size < 8), then ASCII '0' up to key_size:
//
//	key 5, key_size 16:  00 00 00 00 00 00 00 05 30 30 30 30 30 30 30 30
//
// so keys sort in key-number order. Values are slices of one pool of at
// least 1 MiB of printable bytes, built from 100-byte pieces: each piece is
// int(100 * compression_ratio) random bytes repeated to fill it, so a value
// compresses to about compression_ratio of its size. Consecutive values are
// consecutive slices of the pool, wrapping to its start.

import "encoding/binary"

// kvValuePoolMin is the smallest value pool: larger than the compressors'
// windows, so that values do not compress against earlier values.
const kvValuePoolMin = 1 << 20

// kvValuePieceLen is the length of one compressible piece of the pool.
const kvValuePieceLen = 100

// putKVKey writes key number v into key, which has the key size.
func putKVKey(key []byte, v uint64) {
	n := min(len(key), 8)
	for i := range n {
		key[i] = byte(v >> (uint(n-i-1) * 8))
	}
	for i := n; i < len(key); i++ {
		key[i] = '0'
	}
}

// kvKeyNumber returns the key number of a key made by putKVKey.
func kvKeyNumber(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var v uint64
	for _, b := range key {
		v = v<<8 | uint64(b)
	}
	return v
}

// kvValuePool is the read-only data values are cut from. It is shared by
// every thread; each thread reads it through its own kvValueCursor.
type kvValuePool struct{ data []byte }

// newKVValuePool builds the pool for values of valueSize bytes compressible
// to ratio (in [0, 1]) of their size.
func newKVValuePool(valueSize int, ratio float64) *kvValuePool {
	size := max(kvValuePoolMin, valueSize)
	rnd := newLehmer31(301)
	data := make([]byte, 0, size+kvValuePieceLen)
	for len(data) < size {
		data = appendKVCompressible(data, rnd, ratio, kvValuePieceLen)
	}
	return &kvValuePool{data: data}
}

// appendKVCompressible appends n bytes that compress to about ratio of n:
// int(n*ratio) (at least 1) random printable bytes, repeated.
func appendKVCompressible(dst []byte, rnd *lehmer31, ratio float64, n int) []byte {
	raw := max(int(float64(n)*ratio), 1)
	start := len(dst)
	for range raw {
		dst = append(dst, byte(' '+rnd.uniform(95)))
	}
	for len(dst)-start < n {
		dst = append(dst, dst[start:start+min(raw, n-(len(dst)-start))]...)
	}
	return dst[:start+n]
}

// kvValueCursor hands out consecutive values from a pool.
type kvValueCursor struct {
	data []byte
	pos  int
}

func (p *kvValuePool) cursor() kvValueCursor { return kvValueCursor{data: p.data} }

// next returns the next n-byte value. It aliases the pool: never modify it.
func (c *kvValueCursor) next(n int) []byte {
	if c.pos+n > len(c.data) {
		c.pos = 0
	}
	c.pos += n
	return c.data[c.pos-n : c.pos : c.pos]
}
