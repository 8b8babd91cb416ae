package mysqlcompat

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignedMagArithmetic checks add, subtract, multiply, DIV and % on
// random and edge operands against math/big: the result, and whether it
// fits 64 bits of magnitude.
func TestSignedMagArithmetic(t *testing.T) {
	edges := []any{int64(0), int64(1), int64(-1), int64(2), int64(-2), int64(math.MaxInt64), int64(math.MinInt64),
		int64(math.MaxInt32), int64(math.MinInt32), uint64(math.MaxUint64), uint64(1 << 63), uint64(1<<63 - 1),
		uint64(1 << 32), int8(-128), uint8(255), int32(-7), uint32(math.MaxUint32)}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		if rng.IntN(2) == 0 {
			edges = append(edges, rng.Int64()>>rng.IntN(64))
		} else {
			edges = append(edges, rng.Uint64()>>rng.IntN(64))
		}
	}
	bigOf := func(v any) *big.Int {
		switch x := v.(type) {
		case uint64:
			return new(big.Int).SetUint64(x)
		case uint32:
			return new(big.Int).SetUint64(uint64(x))
		case uint8:
			return new(big.Int).SetUint64(uint64(x))
		}
		var i int64
		fmt.Sscan(fmt.Sprint(v), &i)
		return big.NewInt(i)
	}
	magOf := func(z signedMag) *big.Int {
		b := new(big.Int).SetUint64(z.abs)
		if z.neg {
			b.Neg(b)
		}
		return b
	}
	fits := func(b *big.Int) bool { return new(big.Int).Abs(b).IsUint64() }
	for i := 0; i < len(edges); i++ {
		j := (i * 7919) % len(edges)
		a, b := edges[i], edges[j]
		x, ok := magnitudeOf(a)
		require.True(t, ok)
		y, ok := magnitudeOf(b)
		require.True(t, ok)
		require.Equal(t, bigOf(a), magOf(x), "%v", a)
		for _, op := range []struct {
			name string
			got  func() (signedMag, bool)
			want *big.Int
		}{
			{"+", func() (signedMag, bool) { return x.add(y) }, new(big.Int).Add(bigOf(a), bigOf(b))},
			{"-", func() (signedMag, bool) { return x.add(y.negate()) }, new(big.Int).Sub(bigOf(a), bigOf(b))},
			{"*", func() (signedMag, bool) { return x.mul(y) }, new(big.Int).Mul(bigOf(a), bigOf(b))},
		} {
			z, ok := op.got()
			require.Equal(t, fits(op.want), ok, "%v %s %v", a, op.name, b)
			if ok {
				require.Equal(t, op.want, magOf(z), "%v %s %v", a, op.name, b)
				require.False(t, z.neg && z.abs == 0, "negative zero from %v %s %v", a, op.name, b)
			}
		}
		if y.abs == 0 {
			continue
		}
		// DIV truncates toward zero and % takes the dividend's sign, as
		// big.Int's Quo and Rem do.
		for _, op := range []struct {
			name      string
			got, want *big.Int
			z         signedMag
		}{
			{"DIV", magOf(x.quo(y)), new(big.Int).Quo(bigOf(a), bigOf(b)), x.quo(y)},
			{"%", magOf(x.rem(y)), new(big.Int).Rem(bigOf(a), bigOf(b)), x.rem(y)},
		} {
			require.Zero(t, op.want.Cmp(op.got), "%v %s %v: %v, want %v", a, op.name, b, op.got, op.want)
			require.False(t, op.z.neg && op.z.abs == 0, "negative zero from %v %s %v", a, op.name, b)
		}
	}
}
