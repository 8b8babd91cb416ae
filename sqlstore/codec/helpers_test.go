package codec

import (
	"bytes"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// testType is a SQL type under test with a generator of random values.
type testType struct {
	name string
	typ  sql.Type
	gen  func(r *rand.Rand) any
}

var (
	decCol      = types.MustCreateColumnDecimalType(10, 2)
	decWide     = types.MustCreateColumnDecimalType(65, 30)
	decInternal = types.InternalDecimalType
	enumType    = mustEnum("red", "green", "blue")
	setType     = mustSet("a", "b", "c", "d")
	bit8        = mustBit(8)
	bit64       = mustBit(64)
	vcBin       = types.MustCreateString(sqltypes.VarChar, 255, sql.Collation_utf8mb4_0900_bin)
	vcMB4Bin    = types.MustCreateString(sqltypes.VarChar, 255, sql.Collation_utf8mb4_bin)
	vcAICI      = types.MustCreateString(sqltypes.VarChar, 255, sql.Collation_utf8mb4_0900_ai_ci)
	vcASCS      = types.MustCreateString(sqltypes.VarChar, 255, sql.Collation_utf8mb4_0900_as_cs)
	vcGeneral   = types.MustCreateString(sqltypes.VarChar, 255, sql.Collation_utf8mb4_general_ci)
	vcLatin1    = types.MustCreateString(sqltypes.VarChar, 255, sql.Collation_latin1_swedish_ci)
	charAICI    = types.MustCreateString(sqltypes.Char, 20, sql.Collation_utf8mb4_0900_ai_ci)
	varbinary   = types.MustCreateBinary(sqltypes.VarBinary, 255)
	binary4     = types.MustCreateBinary(sqltypes.Binary, 4)
	datetime6   = types.MustCreateDatetimeType(sqltypes.Datetime, 6)
	timestamp6  = types.MustCreateDatetimeType(sqltypes.Timestamp, 6)
)

func mustEnum(vals ...string) sql.EnumType {
	t, err := types.CreateEnumType(vals, sql.Collation_Default)
	if err != nil {
		panic(err)
	}
	return t
}

func mustSet(vals ...string) sql.SetType {
	t, err := types.CreateSetType(vals, sql.Collation_Default)
	if err != nil {
		panic(err)
	}
	return t
}

func mustBit(n uint8) types.BitType {
	t, err := types.CreateBitType(n)
	if err != nil {
		panic(err)
	}
	return t
}

// keyTypes are the types keys support, each with a value generator that
// favours edge values and collisions.
func keyTypes() []testType {
	return []testType{
		{"int8", types.Int8, func(r *rand.Rand) any { return int8(pickInt(r, math.MinInt8, math.MaxInt8)) }},
		{"int16", types.Int16, func(r *rand.Rand) any { return int16(pickInt(r, math.MinInt16, math.MaxInt16)) }},
		{"int24", types.Int24, func(r *rand.Rand) any { return int32(pickInt(r, -1<<23, 1<<23-1)) }},
		{"int32", types.Int32, func(r *rand.Rand) any { return int32(pickInt(r, math.MinInt32, math.MaxInt32)) }},
		{"int64", types.Int64, func(r *rand.Rand) any { return pickInt(r, math.MinInt64, math.MaxInt64) }},
		{"uint8", types.Uint8, func(r *rand.Rand) any { return uint8(pickUint(r, math.MaxUint8)) }},
		{"uint16", types.Uint16, func(r *rand.Rand) any { return uint16(pickUint(r, math.MaxUint16)) }},
		{"uint24", types.Uint24, func(r *rand.Rand) any { return uint32(pickUint(r, 1<<24-1)) }},
		{"uint32", types.Uint32, func(r *rand.Rand) any { return uint32(pickUint(r, math.MaxUint32)) }},
		{"uint64", types.Uint64, func(r *rand.Rand) any { return pickUint(r, math.MaxUint64) }},
		{"float32", types.Float32, func(r *rand.Rand) any { return float32(pickFloat(r)) }},
		{"float64", types.Float64, func(r *rand.Rand) any { return pickFloat(r) }},
		{"decimal(10,2)", decCol, func(r *rand.Rand) any { return pickDecimal(r, 8, 2) }},
		{"decimal(65,30)", decWide, func(r *rand.Rand) any { return pickDecimal(r, 35, 30) }},
		{"decimal internal", decInternal, func(r *rand.Rand) any { return pickDecimalFree(r) }},
		{"date", types.Date, func(r *rand.Rand) any { return pickTime(r, 24*time.Hour) }},
		{"datetime", types.Datetime, func(r *rand.Rand) any { return pickTime(r, time.Second) }},
		{"datetime(6)", datetime6, func(r *rand.Rand) any { return pickTime(r, time.Microsecond) }},
		{"timestamp(6)", timestamp6, func(r *rand.Rand) any { return pickTime(r, time.Microsecond) }},
		{"time", types.Time, func(r *rand.Rand) any { return types.Timespan(pickInt(r, -838*3600e6, 838*3600e6)) }},
		{"year", types.Year, func(r *rand.Rand) any {
			if r.IntN(8) == 0 {
				return int16(0)
			}
			return int16(1901 + r.IntN(255))
		}},
		{"enum", enumType, func(r *rand.Rand) any { return uint16(r.IntN(4)) }},
		{"set", setType, func(r *rand.Rand) any { return uint64(r.IntN(16)) }},
		{"bit(8)", bit8, func(r *rand.Rand) any { return pickUint(r, 255) }},
		{"bit(64)", bit64, func(r *rand.Rand) any { return pickUint(r, math.MaxUint64) }},
		{"varchar 0900_bin", vcBin, func(r *rand.Rand) any { return pickString(r) }},
		{"varchar utf8mb4_bin", vcMB4Bin, func(r *rand.Rand) any { return pickString(r) }},
		{"varchar 0900_ai_ci", vcAICI, func(r *rand.Rand) any { return pickString(r) }},
		{"varchar 0900_as_cs", vcASCS, func(r *rand.Rand) any { return pickString(r) }},
		{"varchar general_ci", vcGeneral, func(r *rand.Rand) any { return pickString(r) }},
		{"varchar latin1", vcLatin1, func(r *rand.Rand) any { return pickLatin1(r) }},
		{"char ai_ci", charAICI, func(r *rand.Rand) any { return pickString(r) }},
		{"longtext", types.LongText, func(r *rand.Rand) any { return pickString(r) }},
		{"varbinary", varbinary, func(r *rand.Rand) any { return pickBytes(r, 12) }},
		{"binary(4)", binary4, func(r *rand.Rand) any { return padBytes(pickBytes(r, 4), 4) }},
		{"longblob", types.LongBlob, func(r *rand.Rand) any { return pickBytes(r, 12) }},
	}
}

func pickInt(r *rand.Rand, lo, hi int64) int64 {
	switch r.IntN(6) {
	case 0:
		return []int64{lo, hi, 0, -1, 1, lo + 1, hi - 1}[r.IntN(7)]
	case 1:
		return int64(r.IntN(21)) - 10
	}
	x := int64(r.Uint64())
	if x < lo || x > hi {
		span := uint64(hi - lo)
		if span == math.MaxUint64 {
			return x
		}
		return lo + int64(r.Uint64N(span+1))
	}
	return x
}

func pickUint(r *rand.Rand, hi uint64) uint64 {
	switch r.IntN(6) {
	case 0:
		return []uint64{0, 1, hi, hi - 1, hi / 2}[r.IntN(5)]
	case 1:
		return uint64(r.IntN(10))
	}
	if hi == math.MaxUint64 {
		return r.Uint64()
	}
	return r.Uint64N(hi + 1)
}

func pickFloat(r *rand.Rand) float64 {
	switch r.IntN(5) {
	case 0:
		return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64,
			-math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 1, -1}[r.IntN(10)]
	case 1:
		return float64(r.IntN(9) - 4)
	case 2:
		return math.Float64frombits(r.Uint64()&^(0x7ff<<52) | uint64(r.IntN(0x7ff))<<52) // no NaN
	}
	return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
}

// pickDecimal returns a value with at most intDigits integer digits and
// exactly scale fractional digits, as GMS holds DECIMAL(p, scale) values.
func pickDecimal(r *rand.Rand, intDigits, scale int) decimal.Decimal {
	var c *big.Int
	switch r.IntN(4) {
	case 0:
		c = big.NewInt(int64(r.IntN(2001) - 1000))
	case 1: // trailing zeros: 1.10 vs 1.1 collisions
		c = big.NewInt(int64(r.IntN(21)-10) * 100)
	default:
		n := r.IntN(intDigits+scale) + 1
		var sb strings.Builder
		if r.IntN(2) == 0 {
			sb.WriteByte('-')
		}
		for i := 0; i < n; i++ {
			sb.WriteByte(byte('0' + r.IntN(10)))
		}
		c, _ = new(big.Int).SetString(sb.String(), 10)
	}
	return decimal.NewFromBigInt(c, -int32(scale))
}

// pickDecimalFree returns decimals of any exponent, for the expression type.
func pickDecimalFree(r *rand.Rand) decimal.Decimal {
	if r.IntN(5) == 0 {
		return decimal.New(0, int32(r.IntN(5)-2))
	}
	n := r.IntN(40) + 1
	var sb strings.Builder
	if r.IntN(2) == 0 {
		sb.WriteByte('-')
	}
	for i := 0; i < n; i++ {
		sb.WriteByte(byte('0' + r.IntN(10)))
	}
	c, _ := new(big.Int).SetString(sb.String(), 10)
	return decimal.NewFromBigInt(c, int32(r.IntN(80)-50))
}

func pickTime(r *rand.Rand, unit time.Duration) time.Time {
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
	var us int64
	switch r.IntN(4) {
	case 0:
		us = []int64{lo, hi, 0, -1, 1}[r.IntN(5)]
	case 1:
		us = int64(r.IntN(5)-2) * 86400e6
	default:
		us = lo + r.Int64N(hi-lo)
	}
	return time.UnixMicro(us).UTC().Truncate(unit)
}

// runes mixes case and accent variants, spaces, NUL, multibyte runes and
// runes whose weights contain zero bytes, so that collations collide.
var runes = []rune{'a', 'A', 'á', 'Á', 'b', 'B', ' ', 0, 'z', 'ß', 's', 'S', 'é', 'E', 'e', '\t', 0x7f, 'ñ', 'Ω', 'ω', '中', '😀', 0x10FFFF, 0xFFFD, 'i', 'I', 'ı', '0', '9'}

func pickString(r *rand.Rand) string {
	n := r.IntN(6)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteRune(runes[r.IntN(len(runes))])
	}
	return sb.String()
}

func pickLatin1(r *rand.Rand) string {
	n := r.IntN(6)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteRune(rune(r.IntN(256)))
	}
	return sb.String()
}

func pickBytes(r *rand.Rand, max int) []byte {
	n := r.IntN(max + 1)
	b := make([]byte, n)
	for i := range b {
		b[i] = []byte{0, 1, 0xfe, 0xff, 'a', byte(r.IntN(256))}[r.IntN(6)]
	}
	return b
}

func padBytes(b []byte, n int) []byte {
	return append(b, make([]byte, n-len(b))...)
}

// testCtx is the context typ.Compare gets in tests.
var testCtx = sql.NewEmptyContext()

// sqlCompare is the order keys must reproduce: typ.Compare, with NULL first.
func sqlCompare(t testing.TB, typ sql.Type, a, b any) int {
	t.Helper()
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	// A CHAR value is read back without its trailing spaces (MySQL's
	// CHAR), and so compares.
	if as, ok := a.(string); ok {
		a = trimChar(typ, as)
	}
	if bs, ok := b.(string); ok {
		b = trimChar(typ, bs)
	}
	if as, ok := a.(string); ok && PadSpace(typ) {
		// MySQL's PAD SPACE: the shorter string compares as if padded
		// with spaces; GMS's Compare does not pad.
		if bs, ok := b.(string); ok {
			a, b = padToSameLength(as, bs)
		}
	}
	c, err := typ.Compare(testCtx, a, b)
	require.NoError(t, err)
	return c
}

// padToSameLength pads the string of fewer runes with spaces to the
// other's count.
func padToSameLength(a, b string) (string, string) {
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if na < nb {
		a += strings.Repeat(" ", nb-na)
	} else {
		b += strings.Repeat(" ", na-nb)
	}
	return a, b
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func mustKey(t testing.TB, typ sql.Type, v any, dir Direction) []byte {
	t.Helper()
	k, err := AppendKey(nil, typ, v, dir)
	require.NoError(t, err, "AppendKey(%s, %#v, %s)", typ, v, dir)
	return k
}

// sameValue reports whether a decoded value is the original one: the same Go
// type and, for values with several representations, the same SQL value.
func sameValue(t testing.TB, typ sql.Type, want, got any) {
	t.Helper()
	if ws, ok := want.(string); ok {
		want = trimChar(typ, ws) // CHAR values come back without trailing spaces
	}
	if want == nil {
		require.Nil(t, got)
		return
	}
	require.Equal(t, reflect.TypeOf(want), reflect.TypeOf(got), "Go type of %s", typ)
	switch w := want.(type) {
	case decimal.Decimal:
		require.True(t, w.Equal(got.(decimal.Decimal)), "want %s, got %s", w, got)
	case time.Time:
		require.True(t, w.Equal(got.(time.Time)), "want %s, got %s", w, got)
		require.Equal(t, time.UTC, got.(time.Time).Location())
	case float64:
		if w == 0 {
			require.Zero(t, got)
			return
		}
		require.Equal(t, math.Float64bits(w), math.Float64bits(got.(float64)))
	case float32:
		if w == 0 {
			require.Zero(t, got)
			return
		}
		require.Equal(t, math.Float32bits(w), math.Float32bits(got.(float32)))
	case []byte:
		require.True(t, bytes.Equal(w, got.([]byte)), "want %x, got %x", w, got)
	default:
		require.Equal(t, want, got)
	}
}

// newSeedRand is a deterministic generator for seed values derived from in.
func newSeedRand(in []byte) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(len(in)), 1))
}
