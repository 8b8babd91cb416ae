package codec

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUvarintAscending(t *testing.T) {
	tests := []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0x00}},
		{1, []byte{0x01}},
		{0xf7, []byte{0xf7}},
		{0xf8, []byte{0xf8, 0xf8}},
		{0xff, []byte{0xf8, 0xff}},
		{0x100, []byte{0xf9, 0x01, 0x00}},
		{0xffff, []byte{0xf9, 0xff, 0xff}},
		{0x10000, []byte{0xfa, 0x01, 0x00, 0x00}},
		{math.MaxUint32, []byte{0xfb, 0xff, 0xff, 0xff, 0xff}},
		{math.MaxUint64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
	}
	for _, tt := range tests {
		got := AppendUvarintAscending([]byte("x"), tt.v)
		require.Equal(t, append([]byte("x"), tt.want...), got, "%d", tt.v)
		rest, v, err := DecodeUvarintAscending(append(got[1:], 'y'))
		require.NoError(t, err)
		require.Equal(t, tt.v, v)
		require.Equal(t, []byte("y"), rest)
	}
}

func TestUvarintAscendingOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	gen := func() uint64 {
		switch r.IntN(3) {
		case 0:
			return r.Uint64N(600)
		case 1:
			return r.Uint64() >> r.IntN(64)
		}
		return r.Uint64()
	}
	for i := 0; i < 20000; i++ {
		a, b := gen(), gen()
		want := 0
		if a < b {
			want = -1
		} else if a > b {
			want = 1
		}
		require.Equal(t, want, bytes.Compare(AppendUvarintAscending(nil, a), AppendUvarintAscending(nil, b)), "%d %d", a, b)
	}
}

func TestUvarintAscendingCorrupt(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{0xf8},             // truncated
		{0xfa, 0x01, 0x00}, // truncated
		{0xf8, 0x05},       // 5 fits in one byte
		{0xf9, 0x00, 0xff}, // leading zero byte
		{0xff, 0x00, 0, 0, 0, 0, 0, 0, 1},
	} {
		rest, _, err := DecodeUvarintAscending(b)
		require.ErrorIs(t, err, ErrCorrupt, "%x", b)
		require.Equal(t, b, rest)
	}
}

func TestVarintAscending(t *testing.T) {
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 40, -65536, -257, -256, -121, -120, -119, -2, -1,
		0, 1, 2, 118, 119, 120, 255, 256, 65535, 1 << 40, math.MaxInt64 - 1, math.MaxInt64}
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 2000; i++ {
		vals = append(vals, int64(r.Uint64())>>r.IntN(64))
	}
	for _, v := range vals {
		for _, m := range []byte{0, 0xff} {
			enc := appendVarintAscending(nil, v)
			if m != 0 {
				invert(enc)
			}
			n, got, err := readVarintAscending(append(enc, 0x55), m)
			require.NoError(t, err, "%d", v)
			require.Equal(t, len(enc), n)
			require.Equal(t, v, got)
		}
	}
	for i := 0; i < len(vals); i++ {
		a, b := vals[i], vals[(i*7+3)%len(vals)]
		want := 0
		if a < b {
			want = -1
		} else if a > b {
			want = 1
		}
		require.Equal(t, want, bytes.Compare(appendVarintAscending(nil, a), appendVarintAscending(nil, b)), "%d %d", a, b)
	}
	require.Equal(t, []byte{0x80}, appendVarintAscending(nil, 0))
	require.Equal(t, []byte{0x7f}, appendVarintAscending(nil, -1))
	for _, b := range [][]byte{nil, {0xf8}, {0xf8, 0x10}, {0x07, 0xef}, {0xff, 0x80, 0, 0, 0, 0, 0, 0, 0}} {
		_, _, err := readVarintAscending(b, 0)
		require.ErrorIs(t, err, ErrCorrupt, "%x", b)
	}
}
