package sqlstore

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignedMagArithmetic checks add, subtract and multiply on random and
// edge operands against math/big: the result, and whether it fits 64 bits
// of magnitude.
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
	}
}

// TestIntegerArithmeticSQL: integer +, - and * compute exactly in SQL, with
// MySQL's result types: BIGINT UNSIGNED when an operand is unsigned, and
// 1690 for a result outside the type, where GMS wrapped or clamped (an
// UPDATE n = n + 1 at the maximum stored the minimum).
func TestIntegerArithmeticSQL(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE a (id INT PRIMARY KEY, n BIGINT, u BIGINT UNSIGNED, t TINYINT UNSIGNED)")
	d.exec("INSERT INTO a VALUES (1, 9223372036854775807, 18446744073709551615, 255), (2, -9223372036854775808, 10000000000000000000, 0)")
	for _, tc := range []struct{ q, want string }{
		{"SELECT u + 0, u - 1, u * 1 FROM a WHERE id = 1", "[[18446744073709551615 18446744073709551614 18446744073709551615]]"},
		{"SELECT u - 1, u + 5 FROM a WHERE id = 2", "[[9999999999999999999 10000000000000000005]]"},
		{"SELECT n - 1, n + 0 FROM a WHERE id = 1", "[[9223372036854775806 9223372036854775807]]"},
		{"SELECT n + 1, n * 1 FROM a WHERE id = 2", "[[-9223372036854775807 -9223372036854775808]]"},
		{"SELECT t + 1, t * 2, t - 255 FROM a WHERE id = 1", "[[256 510 0]]"},
		{"SELECT 2 * 3, 5 - 7, -3 * 4, 0 * -1", "[[6 -2 -12 0]]"},
		{"SELECT id + 1.5 FROM a WHERE id = 1", "[[2.5]]"},
	} {
		require.Equal(t, tc.want, fmt.Sprint(d.exec(tc.q)), tc.q)
	}
	for _, q := range []string{
		"SELECT n + 1 FROM a WHERE id = 1",
		"SELECT n * 3 FROM a WHERE id = 1",
		"SELECT n - 1 FROM a WHERE id = 2",
		"SELECT u + 1 FROM a WHERE id = 1",
		"SELECT u * 2 FROM a WHERE id = 2",
		"SELECT t - 1 FROM a WHERE id = 2",
		"SELECT 9223372036854775807 + 1",
		"UPDATE a SET n = n + 1 WHERE id = 1",
		"UPDATE a SET u = u + 1 WHERE id = 1",
	} {
		err := d.execErr(q)
		require.Equal(t, 1690, int(mysqlErrno(err)), "%s: %v", q, err)
	}
	require.Equal(t, "[[1 9223372036854775807 18446744073709551615 255] [2 -9223372036854775808 10000000000000000000 0]]",
		fmt.Sprint(d.exec("SELECT * FROM a ORDER BY id")), "a failed UPDATE changed a row")
	d.exec("UPDATE a SET u = u + 1, n = n + 1 WHERE id = 2")
	require.Equal(t, "[[-9223372036854775807 10000000000000000001]]", fmt.Sprint(d.exec("SELECT n, u FROM a WHERE id = 2")))
}
