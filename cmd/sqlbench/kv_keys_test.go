package main

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/stretchr/testify/require"
)

func TestPutKVKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		v    uint64
		want []byte
	}{
		{"default size", 16, 5, []byte{0, 0, 0, 0, 0, 0, 0, 5, '0', '0', '0', '0', '0', '0', '0', '0'}},
		{"big-endian", 16, 0x0102030405060708, []byte{1, 2, 3, 4, 5, 6, 7, 8, '0', '0', '0', '0', '0', '0', '0', '0'}},
		{"exactly eight", 8, 258, []byte{0, 0, 0, 0, 0, 0, 1, 2}},
		{"short keys take the low bytes", 2, 0x0102030405060708, []byte{7, 8}},
		{"one byte", 1, 255, []byte{255}},
		{"long padding", 10, 1, []byte{0, 0, 0, 0, 0, 0, 0, 1, '0', '0'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := make([]byte, tc.size)
			putKVKey(key, tc.v)
			require.Equal(t, tc.want, key)
			if tc.size >= 8 || tc.v < 1<<(8*tc.size) {
				require.Equal(t, tc.v, kvKeyNumber(key))
			}
		})
	}
}

func TestKVKeysSortByNumber(t *testing.T) {
	a, b := make([]byte, 16), make([]byte, 16)
	for _, pair := range [][2]uint64{{0, 1}, {255, 256}, {1 << 32, 1<<32 + 1}, {12345, 999999}} {
		putKVKey(a, pair[0])
		putKVKey(b, pair[1])
		require.Negative(t, bytes.Compare(a, b), "%d < %d", pair[0], pair[1])
	}
}

// TestMT64 checks the generator against published MT19937-64 outputs:
// std::mt19937_64 default-constructed (seed 5489) gives these first values,
// and the C++ standard fixes its 10000th.
func TestMT64(t *testing.T) {
	r := newMT64(5489)
	require.Equal(t, uint64(14514284786278117030), r.next())
	require.Equal(t, uint64(4620546740167642908), r.next())
	require.Equal(t, uint64(13109570281517897720), r.next())
	r = newMT64(5489)
	var v uint64
	for range 10000 {
		v = r.next()
	}
	require.Equal(t, uint64(9981545732273789042), v)
}

func TestLehmer31(t *testing.T) {
	for _, tc := range []struct {
		name  string
		seed  uint32
		first []uint32
	}{
		// 301 * 16807 = 5058907; 5058907 * 16807 mod (2^31-1) = 1273187716.
		{"seed 301", 301, []uint32{5058907, 1273187716, 938884104}},
		{"zero becomes one", 0, []uint32{16807, 282475249, 1622650073}},
		{"modulus becomes one", 2147483647, []uint32{16807, 282475249}},
		{"high bit dropped", 1 << 31, []uint32{16807}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLehmer31(tc.seed)
			for _, want := range tc.first {
				require.Equal(t, want, r.next())
			}
		})
	}
}

func TestKVValuePool(t *testing.T) {
	for _, tc := range []struct {
		name      string
		valueSize int
		ratio     float64
		wantSize  int
	}{
		{"default", 100, 0.5, 1048600}, // 1 MiB rounded up to whole 100-byte pieces
		{"big values", 3 << 20, 0.5, 3145800},
		{"incompressible", 100, 1, 1048600},
		{"ratio zero repeats one byte", 100, 0, 1048600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newKVValuePool(tc.valueSize, tc.ratio)
			require.Equal(t, tc.wantSize, len(p.data))
			for _, c := range p.data[:1000] {
				require.True(t, c >= ' ' && c <= '~', "printable: %q", c)
			}
			piece := p.data[:kvValuePieceLen]
			raw := max(int(kvValuePieceLen*tc.ratio), 1)
			for i := raw; i < len(piece); i++ {
				require.Equal(t, piece[i%raw], piece[i], "byte %d repeats the raw part", i)
			}
		})
	}
}

func TestKVValuesCompress(t *testing.T) {
	for _, ratio := range []float64{0.25, 0.5, 0.75, 1} {
		p := newKVValuePool(400, ratio)
		c := p.cursor()
		// Compress block-sized runs of values, as tables do.
		var raw, enc int
		for range 100 {
			var block []byte
			for range 10 {
				block = append(block, c.next(400)...)
			}
			raw += len(block)
			enc += len(s2.EncodeSnappy(nil, block))
		}
		require.InDelta(t, ratio, float64(enc)/float64(raw), 0.08, "ratio %v", ratio)
	}
}

func TestKVValueCursor(t *testing.T) {
	p := &kvValuePool{data: []byte("abcdefghij")}
	c := p.cursor()
	for _, want := range []string{"abcd", "efgh", "abcd", "efgh"} { // "ij" is too short: wrap
		v := c.next(4)
		require.Equal(t, want, string(v))
		require.Equal(t, 4, cap(v), "a value cannot be appended into the pool")
	}
	require.Equal(t, "abcdefghij", string(c.next(10)))
	require.Empty(t, c.next(0))
}
