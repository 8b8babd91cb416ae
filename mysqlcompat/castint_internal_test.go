package mysqlcompat

import (
	"math"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/stretchr/testify/require"
)

// TestParseStrInt reads strings as MySQL's strtoll10 does, from strings
// and from bytes alike, without allocating.
func TestParseStrInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want strInt
	}{
		{"7", strInt{bits: 7}},
		{"7x", strInt{bits: 7, truncated: true}},
		{" \t+12 \t\n", strInt{bits: 12}},
		{"\n12", strInt{truncated: true}},
		{"\x00123", strInt{truncated: true}},
		{"12\x00", strInt{bits: 12, truncated: true}},
		{"", strInt{truncated: true}},
		{"-", strInt{truncated: true}},
		{"-0", strInt{negative: true}},
		{"-3.7", strInt{bits: math.MaxUint64 - 2, negative: true, truncated: true}},
		{"18446744073709551615", strInt{bits: math.MaxUint64}},
		{"18446744073709551616", strInt{bits: math.MaxUint64, overflow: true, truncated: true}},
		{"-9223372036854775808", strInt{bits: 1 << 63, negative: true}},
		{"-9223372036854775809", strInt{bits: 1 << 63, overflow: true, truncated: true}},
		{"000000000000000000000000000042", strInt{bits: 42}},
	} {
		require.Equal(t, c.want, parseStrInt(c.in), "%q", c.in)
		require.Equal(t, c.want, parseStrInt([]byte(c.in)), "%q as bytes", c.in)
	}
	b := []byte(" 12345abc")
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = parseStrInt(b) }))
}

// castIntOf returns CAST(s AS SIGNED) as GMS builds it and as castInt.
func castIntOf(s string) (*expression.Convert, *castInt) {
	conv := expression.NewConvert(expression.NewLiteral(s, types.LongText), expression.ConvertToSigned)
	return conv, &castInt{conv: conv, from: castString}
}

// TestCastIntAllocs: a string that converts without a warning costs the
// boxing of the result at most.
func TestCastIntAllocs(t *testing.T) {
	ctx := sql.NewEmptyContext()
	_, c := castIntOf("  123456789")
	v, err := c.Eval(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, int64(123456789), v)
	require.LessOrEqual(t, testing.AllocsPerRun(100, func() { _, _ = c.Eval(ctx, nil) }), 1.0)
}

// BenchmarkCastInt compares GMS's conversion of a string to SIGNED with
// castInt's, in one run.
func BenchmarkCastInt(b *testing.B) {
	ctx := sql.NewEmptyContext()
	conv, c := castIntOf("123456789")
	for _, bc := range []struct {
		name string
		e    sql.Expression
	}{{"gms", conv}, {"castInt", c}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := bc.e.Eval(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTimeInt: a TIME is hhmmss, its seconds rounded half up (away from
// zero for a negative TIME), in two's complement when negative.
func TestTimeInt(t *testing.T) {
	ctx := sql.NewEmptyContext()
	for _, c := range []struct {
		us   int64
		want int64
	}{
		{0, 0},
		{(12*3600 + 34*60 + 56) * 1e6, 123456},
		{-(12*3600 + 34*60 + 56) * 1e6, -123456},
		{(838*3600+59*60+58)*1e6 + 500_000, 8385959},
		{-1_499_000, -1},
		{-1_500_000, -2},
		{59*1e6 + 999_999, 100},
	} {
		require.Equal(t, c.want, int64(timeInt(ctx, types.Timespan(c.us))), "%d µs", c.us)
	}
}
