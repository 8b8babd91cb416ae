package codec

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

func TestKeyRoundTrip(t *testing.T) {
	far := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		typ  sql.Type
		vals []any
	}{
		{"int8", types.Int8, []any{int8(math.MinInt8), int8(-1), int8(0), int8(1), int8(math.MaxInt8)}},
		{"int16", types.Int16, []any{int16(math.MinInt16), int16(0), int16(math.MaxInt16)}},
		{"int24", types.Int24, []any{int32(-1 << 23), int32(0), int32(1<<23 - 1)}},
		{"int32", types.Int32, []any{int32(math.MinInt32), int32(-2), int32(0), int32(math.MaxInt32)}},
		{"int64", types.Int64, []any{int64(math.MinInt64), int64(-1), int64(0), int64(math.MaxInt64)}},
		{"uint8", types.Uint8, []any{uint8(0), uint8(math.MaxUint8)}},
		{"uint16", types.Uint16, []any{uint16(0), uint16(math.MaxUint16)}},
		{"uint32", types.Uint32, []any{uint32(0), uint32(math.MaxUint32)}},
		{"uint64", types.Uint64, []any{uint64(0), uint64(1), uint64(math.MaxUint64)}},
		{"float32", types.Float32, []any{float32(0), float32(-1.5), float32(math.MaxFloat32), float32(-math.SmallestNonzeroFloat32), float32(math.Inf(-1))}},
		{"float64", types.Float64, []any{0.0, -0.0, 1e-300, -1e300, math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.SmallestNonzeroFloat64}},
		{"decimal(10,2)", decCol, []any{decimal.New(0, -2), decimal.New(110, -2), decimal.New(-99999999, -2), decimal.New(99999999, -2), decimal.New(1, -2)}},
		{"decimal(65,30)", decWide, []any{
			decimal.RequireFromString("-99999999999999999999999999999999999.999999999999999999999999999999"),
			decimal.RequireFromString("0.000000000000000000000000000001"),
			decimal.RequireFromString("12345678901234567890123456789012345.123456789012345678901234567890"),
		}},
		{"decimal internal", decInternal, []any{decimal.New(1, 0), decimal.New(-5, 100), decimal.New(123, -40), decimal.New(7, -3)}},
		{"date", types.Date, []any{far, time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}},
		{"datetime(6)", datetime6, []any{far, time.Date(1000, 1, 1, 0, 0, 0, 1000, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC), time.Unix(0, 0).UTC()}},
		{"timestamp", types.Timestamp, []any{time.Unix(1, 0).UTC(), time.Unix(math.MaxInt32, 0).UTC()}},
		{"time", types.Time, []any{types.Timespan(-3020399000000), types.Timespan(0), types.Timespan(3020399000000), types.Timespan(-1)}},
		{"year", types.Year, []any{int16(0), int16(1901), int16(2155)}},
		{"enum", enumType, []any{uint16(0), uint16(1), uint16(3)}},
		{"set", setType, []any{uint64(0), uint64(5), uint64(15)}},
		{"bit(8)", bit8, []any{uint64(0), uint64(255)}},
		{"bit(64)", bit64, []any{uint64(math.MaxUint64)}},
		{"varchar 0900_bin", vcBin, []any{"", "a", "a\x00b", "\x00", "\x00\x00\x01", "日本語", "😀", "a ", "\U0010FFFF"}},
		{"varbinary", varbinary, []any{[]byte{}, []byte{0}, []byte{0xff, 0x00, 0x01}, []byte("abc")}},
		{"binary(4)", binary4, []any{[]byte{0, 0, 0, 0}, []byte{0xff, 0xff, 0xff, 0xff}, []byte{'a', 0, 0, 0}}},
		{"longblob", types.LongBlob, []any{bytes.Repeat([]byte{0, 0xff}, 5000)}},
		{"null", types.Int32, []any{nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, dir := range []Direction{Asc, Desc} {
				for _, v := range tt.vals {
					k := mustKey(t, tt.typ, v, dir)
					tail := []byte("tail")
					rest, got, err := DecodeKey(append(k, tail...), tt.typ, dir)
					require.NoError(t, err, "%#v %s", v, dir)
					require.Equal(t, tail, rest)
					sameValue(t, tt.typ, v, got)
					rest, err = SkipKey(append(k, tail...), tt.typ, dir)
					require.NoError(t, err)
					require.Equal(t, tail, rest)
					// Decoded values re-encode to the same bytes.
					require.Equal(t, k, mustKey(t, tt.typ, got, dir))
				}
			}
		})
	}
}

func TestKeyRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range keyTypes() {
		t.Run(tt.name, func(t *testing.T) {
			style := styleRawBytes
			if kindOf(tt.typ) == kindString {
				style = collationStyle(collationOf(tt.typ))
			}
			for i := 0; i < 300; i++ {
				v := tt.gen(r)
				dir := Direction(r.IntN(2))
				k := mustKey(t, tt.typ, v, dir)
				rest, got, err := DecodeKey(k, tt.typ, dir)
				if style == styleWeights || style == stylePadded || style == stylePaddedCodePoint {
					require.ErrorIs(t, err, ErrNotDecodable)
					require.Empty(t, rest)
					continue
				}
				require.NoError(t, err, "%s %#v", tt.typ, v)
				require.Empty(t, rest)
				require.Zero(t, sqlCompare(t, tt.typ, v, got), "%#v decoded as %#v", v, got)
				require.Equal(t, k, mustKey(t, tt.typ, got, dir))
			}
		})
	}
}

func TestKeyDecimalScale(t *testing.T) {
	// Equal values encode equal whatever their scale, and decode with the
	// column type's scale, as typ.Convert gives it.
	a := mustKey(t, decCol, decimal.RequireFromString("1.10"), Asc)
	b := mustKey(t, decCol, decimal.RequireFromString("1.1"), Asc)
	c := mustKey(t, decInternal, decimal.RequireFromString("1.1000"), Asc)
	require.Equal(t, a, b)
	require.Equal(t, a, c)
	_, v, err := DecodeKey(b, decCol, Asc)
	require.NoError(t, err)
	require.Equal(t, "1.10", v.(decimal.Decimal).StringFixed(2))
	require.Equal(t, int32(-2), v.(decimal.Decimal).Exponent())

	// A column type compares values rounded to its scale, so keys do too.
	require.Equal(t, mustKey(t, decCol, decimal.RequireFromString("1.234"), Asc),
		mustKey(t, decCol, decimal.RequireFromString("1.23"), Asc))
	require.Equal(t, mustKey(t, decCol, decimal.RequireFromString("0.001"), Asc),
		mustKey(t, decCol, decimal.Zero, Asc))
	require.Equal(t, mustKey(t, decCol, decimal.New(1, math.MinInt32), Asc),
		mustKey(t, decCol, decimal.Zero, Asc))
	// An expression type does not round.
	require.NotEqual(t, mustKey(t, decInternal, decimal.New(1, -40), Asc),
		mustKey(t, decInternal, decimal.Zero, Asc))
}

func TestKeyStringCollations(t *testing.T) {
	tests := []struct {
		name string
		typ  sql.Type
		a, b string
		want int
	}{
		{"ai_ci case", vcAICI, "a", "A", 0},
		{"ai_ci accent", vcAICI, "a", "á", 0},
		{"ai_ci order", vcAICI, "a", "B", -1},
		{"ai_ci no pad space", vcAICI, "a", "a ", -1},
		{"ai_ci prefix", vcAICI, "ab", "abc", -1},
		{"as_cs case", vcASCS, "a", "A", -1},
		{"0900_bin case", vcBin, "B", "a", -1},
		{"0900_bin no pad", vcBin, "a", "a ", -1},
		{"0900_bin nul", vcBin, "a", "a\x00", -1},
		{"0900_bin nul first", vcBin, "a\x00", "a\x01", -1},
		{"binary nul", varbinary, "a\x00", "a", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, sign(sqlCompare(t, tt.typ, tt.a, tt.b)), "GMS order")
			for _, dir := range []Direction{Asc, Desc} {
				got := bytes.Compare(mustKey(t, tt.typ, tt.a, dir), mustKey(t, tt.typ, tt.b, dir))
				if dir == Desc {
					got = -got
				}
				require.Equal(t, tt.want, got, dir.String())
			}
		})
	}
}

func TestKeyNotDecodable(t *testing.T) {
	k := mustKey(t, vcAICI, "Hello", Desc)
	k = append(k, mustKey(t, types.Int32, int32(7), Desc)...)
	rest, v, err := DecodeKey(k, vcAICI, Desc)
	require.ErrorIs(t, err, ErrNotDecodable)
	require.Nil(t, v)
	// rest is past the string, so the next column still decodes.
	_, v, err = DecodeKey(rest, types.Int32, Desc)
	require.NoError(t, err)
	require.Equal(t, int32(7), v)
}

func TestKeyInvalidCodePointString(t *testing.T) {
	// GMS reads each invalid UTF-8 byte as U+FFFD, so these compare equal.
	a, b := "x\xffy", "x\xfey"
	require.Zero(t, sqlCompare(t, vcBin, a, b))
	require.Equal(t, mustKey(t, vcBin, a, Asc), mustKey(t, vcBin, b, Asc))
	require.Equal(t, mustKey(t, vcBin, "x\uFFFDy", Asc), mustKey(t, vcBin, a, Asc))
}

func TestKeyConvertsValues(t *testing.T) {
	tests := []struct {
		name string
		typ  sql.Type
		in   any
		want any
	}{
		{"int to int32", types.Int32, 42, int32(42)},
		{"int64 to int8", types.Int8, int64(-5), int8(-5)},
		{"string to int64", types.Int64, "17", int64(17)},
		{"string to decimal", decCol, "3.5", decimal.New(350, -2)},
		{"float to decimal", decCol, 2.25, decimal.New(225, -2)},
		{"string to date", types.Date, "2024-02-29", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"string to enum", enumType, "green", uint16(2)},
		{"string to set", setType, "a,c", uint64(5)},
		{"bytes to varchar", vcBin, []byte("hi"), "hi"},
		{"string to varbinary", varbinary, "hi", []byte("hi")},
		{"string to binary pads", binary4, "hi", []byte{'h', 'i', 0, 0}},
		{"short bytes binary pads", binary4, []byte("hi"), []byte{'h', 'i', 0, 0}},
		{"datetime nanos round", datetime6, time.Date(2020, 1, 1, 0, 0, 0, 1500, time.UTC), time.Date(2020, 1, 1, 0, 0, 0, 2000, time.UTC)},
		{"date truncates", types.Date, time.Date(2020, 1, 1, 13, 0, 0, 0, time.UTC), time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"string wrapper", types.LongText, stringWrapper("wrapped"), "wrapped"},
		{"two-digit year", types.Year, int16(24), int16(2024)},
		{"int to year", types.Year, 1999, int16(1999)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, mustKey(t, tt.typ, tt.want, Asc), mustKey(t, tt.typ, tt.in, Asc))
			_, got, err := DecodeKey(mustKey(t, tt.typ, tt.in, Asc), tt.typ, Asc)
			require.NoError(t, err)
			sameValue(t, tt.typ, tt.want, got)
		})
	}
}

func TestKeyErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  sql.Type
		v    any
		err  error
	}{
		{"json", types.JSON, types.MustJSON(`{"a":1}`), ErrUnsupportedType},
		{"json null", types.JSON, nil, ErrUnsupportedType},
		{"geometry", types.PointType{}, types.Point{X: 1, Y: 2}, ErrUnsupportedType},
		{"nan", types.Float64, math.NaN(), ErrInvalidValue},
		{"nan32", types.Float32, float32(math.NaN()), ErrInvalidValue},
		{"not an int", types.Int32, "abc", ErrInvalidValue},
		{"int8 out of range", types.Int8, 300, ErrInvalidValue},
		{"enum index", enumType, uint16(9), ErrInvalidValue},
		{"enum name", enumType, "purple", ErrInvalidValue},
		{"set bits", setType, uint64(16), ErrInvalidValue},
		{"bit width", bit8, uint64(256), ErrInvalidValue},
		{"binary too long", binary4, []byte("hello"), ErrInvalidValue},
		{"bad utf8 for utf8mb4", vcAICI, []byte{0xff}, ErrInvalidValue},
		{"null type", types.Null, 1, ErrInvalidValue},
		{"year", types.Year, int16(1800), ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("prefix")
			out, err := AppendKey(dst, tt.typ, tt.v, Asc)
			require.ErrorIs(t, err, tt.err)
			require.Equal(t, []byte("prefix"), out, "dst keeps its length on error")
		})
	}
	_, err := AppendKey(nil, types.Int32, int32(1), Direction(2))
	require.ErrorIs(t, err, ErrInvalidValue)
}

func TestDecodeKeyCorrupt(t *testing.T) {
	tests := []struct {
		name string
		typ  sql.Type
		b    []byte
	}{
		{"empty", types.Int32, nil},
		{"truncated int", types.Int32, []byte{flagInt, 0x80, 0, 0}},
		{"wrong family", types.Int32, mustKey(t, types.Uint32, uint32(1), Asc)},
		{"int32 range", types.Int32, mustKey(t, types.Int64, int64(1)<<40, Asc)},
		{"unknown flag", types.Int32, []byte{0x42, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"unterminated string", vcBin, []byte{flagBytes, 'a', 'b'}},
		{"bad escape", vcBin, []byte{flagBytes, 'a', 0x00, 0x07}},
		{"weights for bin", vcBin, mustKey(t, vcAICI, "a", Asc)},
		{"bytes for ci", vcAICI, mustKey(t, vcBin, "a", Asc)},
		{"partial weight", vcAICI, []byte{flagWeights, 0x80, 0x00, 0xff, 0x00, 0x01}},
		{"invalid utf8", vcBin, []byte{flagBytes, 0xff, 0x00, 0x01}},
		{"binary(4) short", binary4, []byte{flagBytes, 'a', 0x00, 0x01}},
		{"decimal no digits", decInternal, []byte{flagDecimalPos, 0x81, 0x00}},
		{"decimal leading zero", decInternal, []byte{flagDecimalPos, 0x81, 0x02, 0x00}},
		{"decimal trailing 00", decInternal, []byte{flagDecimalPos, 0x81, 0x0b, 0x01, 0x00}},
		{"decimal pair 100", decInternal, []byte{flagDecimalPos, 0x81, 0x66, 0x00}},
		{"decimal unterminated", decInternal, []byte{flagDecimalPos, 0x81, 0x0b}},
		{"decimal huge exponent", decCol, []byte{flagDecimalPos, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0b, 0x00}},
		{"decimal beyond scale", decCol, mustKey(t, decInternal, decimal.New(1, -3), Asc)},
		{"float nan", types.Float64, []byte{flagFloat, 0xff, 0xf8, 0, 0, 0, 0, 0, 1}},
		{"float -0", types.Float64, []byte{flagFloat, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"float32 precision", types.Float32, mustKey(t, types.Float64, 0.1, Asc)},
		{"date not midnight", types.Date, mustKey(t, datetime6, time.Date(2020, 1, 1, 1, 0, 0, 0, time.UTC), Asc)},
		{"enum index", enumType, mustKey(t, types.Uint16, uint16(9), Asc)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, dir := range []Direction{Asc, Desc} {
				b := append([]byte(nil), tt.b...)
				if dir == Desc {
					invert(b)
				}
				_, v, err := DecodeKey(b, tt.typ, dir)
				require.ErrorIs(t, err, ErrCorrupt, "%x", b)
				require.Nil(t, v)
			}
		})
	}
}

func TestSkipKeyComposite(t *testing.T) {
	cols := []sql.Type{types.Int64, vcAICI, decCol, varbinary, types.Float64}
	dirs := []Direction{Asc, Desc, Asc, Desc, Asc}
	vals := []any{int64(-3), "Straße", decimal.New(-1234, -2), []byte{0, 0xff, 0}, nil}
	var k []byte
	for i := range cols {
		var err error
		k, err = AppendKey(k, cols[i], vals[i], dirs[i])
		require.NoError(t, err)
	}
	rest := k
	for i := range cols {
		var err error
		rest, err = SkipKey(rest, cols[i], dirs[i])
		require.NoError(t, err, "column %d", i)
	}
	require.Empty(t, rest)
	_, err := SkipKey(k[:len(k)-1], types.Int64, Asc)
	require.NoError(t, err) // the first column is intact
	_, err = SkipKey(k[:5], types.Int64, Asc)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestPrefixSuccessor(t *testing.T) {
	tests := []struct {
		prefix, want []byte
	}{
		{[]byte{1, 2, 3}, []byte{1, 2, 4}},
		{[]byte{1, 0xff}, []byte{2}},
		{[]byte{1, 0xfe, 0xff, 0xff}, []byte{1, 0xff}},
		{[]byte{0xff, 0xff}, nil},
		{[]byte{}, nil},
		{nil, nil},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, PrefixSuccessor(nil, tt.prefix), "%x", tt.prefix)
	}
	// Appends to dst without touching prefix.
	p := []byte{7, 0xff}
	require.Equal(t, []byte{9, 8}, PrefixSuccessor([]byte{9}, p))
	require.Equal(t, []byte{7, 0xff}, p)

	// The successor of enc(k) bounds exactly the keys whose first column is k.
	for _, dir := range []Direction{Asc, Desc} {
		k := mustKey(t, vcBin, "ab", dir)
		end := PrefixSuccessor(nil, k)
		in := append(append([]byte(nil), k...), mustKey(t, types.Int32, int32(math.MaxInt32), dir)...)
		require.Negative(t, bytes.Compare(in, end))
		for _, other := range []string{"abc", "ab\x00", "b", "a"} {
			o := mustKey(t, vcBin, other, dir)
			inside := bytes.Compare(o, k) >= 0 && bytes.Compare(o, end) < 0
			require.False(t, inside, "%q %s", other, dir)
		}
	}
}

func TestAppendKeyAllocs(t *testing.T) {
	dst := make([]byte, 0, 256)
	cases := []struct {
		typ sql.Type
		v   any
	}{
		{types.Int64, int64(12345)},
		{types.Int32, int32(-7)},
		{types.Uint64, uint64(99)},
		{vcBin, "short string"},
		{varbinary, []byte("bytes\x00here")},
		{types.Float64, 3.25},
		{datetime6, time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)},
		{vcAICI, "Short CI"},
	}
	for _, c := range cases {
		for _, dir := range []Direction{Asc, Desc} {
			allocs := testing.AllocsPerRun(100, func() {
				var err error
				if _, err = AppendKey(dst[:0], c.typ, c.v, dir); err != nil {
					t.Fatal(err)
				}
			})
			require.Zero(t, allocs, "%s %s", c.typ, dir)
		}
	}
}

// stringWrapper is a lazily loaded TEXT value.
type stringWrapper string

func (w stringWrapper) Unwrap(ctx context.Context) (string, error) { return string(w), nil }
func (w stringWrapper) UnwrapAny(ctx context.Context) (any, error) { return string(w), nil }
func (w stringWrapper) IsExactLength() bool                        { return true }
func (w stringWrapper) MaxByteLength() int64                       { return int64(len(w)) }
func (w stringWrapper) Compare(ctx context.Context, other any) (int, bool, error) {
	return 0, false, nil
}
func (w stringWrapper) Hash() any { return string(w) }
