package codec

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files and fuzz seed corpora under testdata")

// fuzzReader hands out the bytes of a fuzz input, then zeros.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzReader) uint64() uint64 {
	var x uint64
	for i := 0; i < 8; i++ {
		x = x<<8 | uint64(r.byte())
	}
	return x
}

func (r *fuzzReader) rest() []byte {
	b := r.b
	r.b = nil
	return b
}

// fuzzType derives a value of typ from fuzz bytes.
type fuzzType struct {
	typ  sql.Type
	from func(r *fuzzReader) any
}

var fuzzTypes = []fuzzType{
	{types.Int8, func(r *fuzzReader) any { return int8(r.byte()) }},
	{types.Int32, func(r *fuzzReader) any { return int32(r.uint64()) }},
	{types.Int64, func(r *fuzzReader) any { return int64(r.uint64()) }},
	{types.Uint64, func(r *fuzzReader) any { return r.uint64() }},
	{types.Float32, func(r *fuzzReader) any { return float32(noNaN(float64(math.Float32frombits(uint32(r.uint64()))))) }},
	{types.Float64, func(r *fuzzReader) any { return noNaN(math.Float64frombits(r.uint64())) }},
	{decCol, func(r *fuzzReader) any { return fuzzDecimal(r, 10, -2) }},
	{decWide, func(r *fuzzReader) any { return fuzzDecimal(r, 65, -30) }},
	{decInternal, func(r *fuzzReader) any { return fuzzDecimal(r, 40, int32(int8(r.byte()))) }},
	{types.Date, func(r *fuzzReader) any { return fuzzTime(r).Truncate(24 * time.Hour) }},
	{datetime6, func(r *fuzzReader) any { return fuzzTime(r) }},
	{types.Time, func(r *fuzzReader) any { return types.Timespan(int64(r.uint64()) % 3020400000000) }},
	{types.Year, func(r *fuzzReader) any {
		if y := r.byte(); y != 0 {
			return int16(1900 + int(y))
		}
		return int16(0)
	}},
	{enumType, func(r *fuzzReader) any { return uint16(r.byte() % 4) }},
	{setType, func(r *fuzzReader) any { return uint64(r.byte() % 16) }},
	{bit8, func(r *fuzzReader) any { return uint64(r.byte()) }},
	{vcBin, func(r *fuzzReader) any { return fuzzString(r) }},
	{vcMB4Bin, func(r *fuzzReader) any { return fuzzString(r) }},
	{vcAICI, func(r *fuzzReader) any { return fuzzString(r) }},
	{vcASCS, func(r *fuzzReader) any { return fuzzString(r) }},
	{vcGeneral, func(r *fuzzReader) any { return fuzzString(r) }},
	{vcLatin1, func(r *fuzzReader) any { return fuzzString(r) }},
	{varbinary, func(r *fuzzReader) any {
		b := r.rest()
		return append([]byte{}, b[:min(len(b), 255)]...)
	}},
	{binary4, func(r *fuzzReader) any { return []byte{r.byte(), r.byte(), r.byte(), r.byte()} }},
}

func noNaN(f float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return f
}

// fuzzDecimal makes a decimal of at most maxDigits digits and exponent exp.
func fuzzDecimal(r *fuzzReader, maxDigits int, exp int32) decimal.Decimal {
	n := int(r.byte()) % (maxDigits + 1)
	neg := r.byte()&1 == 1
	digits := make([]byte, 0, n+1)
	if neg {
		digits = append(digits, '-')
	}
	for i := 0; i < n; i++ {
		digits = append(digits, '0'+r.byte()%10)
	}
	c, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		c = new(big.Int)
	}
	return decimal.NewFromBigInt(c, exp)
}

func fuzzTime(r *fuzzReader) time.Time {
	lo := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	hi := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).UnixMicro()
	return time.UnixMicro(lo + int64(r.uint64()%uint64(hi-lo))).UTC()
}

// fuzzString reads runes two bytes at a time: a small value indexes the
// collision-prone runes, a larger one is a code point of the first planes.
func fuzzString(r *fuzzReader) string {
	var sb strings.Builder
	for n := int(r.byte() % 12); n > 0; n-- {
		x := int(r.byte())<<8 | int(r.byte())
		c := rune(x)
		if x < 256 {
			c = runes[x%len(runes)]
		}
		if !utf8.ValidRune(c) {
			c = 'x'
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

func pickFuzzType(sel byte) fuzzType { return fuzzTypes[int(sel)%len(fuzzTypes)] }

// FuzzKeyRoundTrip encodes a value derived from the input and checks that
// SkipKey and DecodeKey consume exactly the datum and that DecodeKey returns
// an equal value (or ErrNotDecodable for weight-ordered collations).
func FuzzKeyRoundTrip(f *testing.F) {
	f.Add([]byte{0, 0, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		ft := pickFuzzType(r.byte())
		dir := Direction(r.byte() & 1)
		v := ft.from(r)
		k, err := AppendKey([]byte("p"), ft.typ, v, dir)
		require.NoError(t, err, "%s %#v", ft.typ, v)
		k = append(k, 0xaa)
		rest, err := SkipKey(k[1:], ft.typ, dir)
		require.NoError(t, err)
		require.Equal(t, []byte{0xaa}, rest)
		rest, got, err := DecodeKey(k[1:], ft.typ, dir)
		require.Equal(t, []byte{0xaa}, rest)
		if kindOf(ft.typ) == kindString && (collationStyle(collationOf(ft.typ)) == styleWeights || PadSpace(ft.typ)) {
			require.ErrorIs(t, err, ErrNotDecodable)
			return
		}
		require.NoError(t, err)
		require.Zero(t, sqlCompare(t, ft.typ, v, got), "%#v decoded as %#v", v, got)
		sameValue(t, ft.typ, normalizeKeyValue(v), got)
	})
}

// normalizeKeyValue is v as a key keeps it: -0 is 0.
func normalizeKeyValue(v any) any {
	switch x := v.(type) {
	case float64:
		if x == 0 {
			return 0.0
		}
	case float32:
		if x == 0 {
			return float32(0)
		}
	}
	return v
}

// FuzzKeyOrder derives two values of one type and checks that their keys
// compare as typ.Compare does, NULL first (Asc) or last (Desc).
func FuzzKeyOrder(f *testing.F) {
	f.Add([]byte{0, 0, 4, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		ft := pickFuzzType(r.byte())
		flags := r.byte()
		dir := Direction(flags & 1)
		split := int(r.byte())
		if split > len(r.b) {
			split = len(r.b)
		}
		ra, rb := &fuzzReader{b: r.b[:split]}, &fuzzReader{b: r.b[split:]}
		var a, b any = ft.from(ra), ft.from(rb)
		if flags&2 != 0 {
			a = nil
		}
		if flags&4 != 0 {
			b = nil
		}
		want := sign(sqlCompare(t, ft.typ, a, b))
		ka, err := AppendKey(nil, ft.typ, a, dir)
		require.NoError(t, err)
		kb, err := AppendKey(nil, ft.typ, b, dir)
		require.NoError(t, err)
		got := bytes.Compare(ka, kb)
		if dir == Desc {
			got = -got
		}
		require.Equal(t, want, got, "%#v vs %#v", a, b)
	})
}

// FuzzDecodeKey feeds arbitrary bytes to DecodeKey and SkipKey: they must not
// panic, must agree on the datum's length, and whatever DecodeKey accepts must
// re-encode to exactly the bytes it consumed.
func FuzzDecodeKey(f *testing.F) {
	f.Add([]byte{0, 0, flagInt, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		ft := pickFuzzType(data[0])
		dir := Direction(data[1] & 1)
		b := data[2:]
		skipRest, skipErr := SkipKey(b, ft.typ, dir)
		rest, v, err := DecodeKey(b, ft.typ, dir)
		switch {
		case err == nil:
			require.NoError(t, skipErr)
			require.Equal(t, skipRest, rest)
			k, err := AppendKey(nil, ft.typ, v, dir)
			require.NoError(t, err, "re-encoding %#v", v)
			require.Equal(t, b[:len(b)-len(rest)], k)
		case errors.Is(err, ErrNotDecodable):
			require.NoError(t, skipErr)
			require.Equal(t, skipRest, rest)
		default:
			require.ErrorIs(t, err, ErrCorrupt)
			require.Nil(t, v)
			if skipErr != nil {
				require.ErrorIs(t, skipErr, ErrCorrupt)
			}
		}
	})
}

// fuzzRowSchema holds every row type; the first input byte picks how many
// of its columns a fuzz case uses.
var fuzzRowSchema = rowSchema(rowTypes())

// FuzzDecodeRow feeds arbitrary bytes to DecodeRow and DecodeRowColumns, with
// and without an Arena: they must not panic, must agree, and a decoded row
// must encode and decode again to the same values.
func FuzzDecodeRow(f *testing.F) {
	f.Add([]byte{3, rowFormatV1, 3, 0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		sch := fuzzRowSchema[:int(data[0])%(len(fuzzRowSchema)+1)]
		b := data[1:]
		row, err := DecodeRow(b, sch, nil)
		cols := make([]int, 0, len(sch))
		for i := len(sch) - 1; i >= 0; i -= 2 {
			cols = append(cols, i)
		}
		proj, perr := DecodeRowColumns(b, sch, cols, nil)
		var a Arena
		arow, aerr := a.DecodeRow(b, sch)
		aproj, aperr := a.DecodeRowColumns(b, sch, cols)
		require.Equal(t, err == nil, aerr == nil, "with an arena: %v", aerr)
		require.Equal(t, perr == nil, aperr == nil, "columns with an arena: %v", aperr)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			if perr != nil {
				require.ErrorIs(t, perr, ErrCorrupt)
			}
			return
		}
		require.NoError(t, perr)
		for j, c := range cols {
			sameRowValue(t, sch[c].Type, row[c], proj[j])
			sameRowValue(t, sch[c].Type, row[c], aproj[j])
		}
		for c := range sch {
			sameRowValue(t, sch[c].Type, row[c], arow[c])
		}
		enc, err := AppendRow(nil, sch, row)
		require.NoError(t, err, "re-encoding %#v", row)
		again, err := DecodeRow(enc, sch, nil)
		require.NoError(t, err)
		for c := range sch {
			sameRowValue(t, sch[c].Type, row[c], again[c])
		}
	})
}

// TestFuzzSeeds checks the committed seed corpora, or rewrites them with
// -rewrite. Seeds are valid encodings of varied values, so that fuzzing
// starts from inputs that reach deep into the decoders.
func TestFuzzSeeds(t *testing.T) {
	seeds := map[string][][]byte{
		"FuzzKeyRoundTrip": keyValueSeeds(),
		"FuzzKeyOrder":     keyOrderSeeds(),
		"FuzzDecodeKey":    decodeKeySeeds(t),
		"FuzzDecodeRow":    decodeRowSeeds(t),
	}
	for name, inputs := range seeds {
		dir := filepath.Join("testdata", "fuzz", name)
		if *rewrite {
			old, err := filepath.Glob(filepath.Join(dir, "seed-*"))
			require.NoError(t, err)
			for _, f := range old {
				require.NoError(t, os.Remove(f))
			}
			require.NoError(t, os.MkdirAll(dir, 0o755))
			for i, in := range inputs {
				body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", in)
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%03d", i)), []byte(body), 0o644))
			}
		}
		// Every generated seed is committed; inputs the fuzzer found are kept
		// beside them as regression cases.
		for i, in := range inputs {
			body, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("seed-%03d", i)))
			require.NoError(t, err, "seed corpus of %s (run with -rewrite)", name)
			require.Equal(t, fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", in), string(body), "%s seed %d", name, i)
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			body, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			require.True(t, bytes.HasPrefix(body, []byte("go test fuzz v1\n[]byte(")), e.Name())
		}
	}
}

func keyValueSeeds() [][]byte {
	var out [][]byte
	for i := range fuzzTypes {
		for _, tail := range [][]byte{nil, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 5}, []byte("\x05\x00\x41\x00\x61\x01\x00\x00\xe1")} {
			out = append(out, append([]byte{byte(i), byte(len(out) & 1)}, tail...))
		}
	}
	return out
}

func keyOrderSeeds() [][]byte {
	var out [][]byte
	for i := range fuzzTypes {
		out = append(out,
			[]byte{byte(i), 0, 9, 3, 0, 0x41, 0, 0x61, 0, 0, 0, 0, 3, 0, 0x61, 0, 0x41, 0, 0, 0, 1},
			[]byte{byte(i), 1, 4, 0x80, 1, 2, 3, 0x7f, 1, 2, 3},
			[]byte{byte(i), 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	return out
}

func decodeKeySeeds(t *testing.T) [][]byte {
	var out [][]byte
	for i, ft := range fuzzTypes {
		for j, in := range [][]byte{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {5, 1, 0xff, 0xff, 0x80, 7, 3, 0x10, 0x20, 0x30, 9, 9, 9}} {
			dir := Direction(j)
			k, err := AppendKey(nil, ft.typ, ft.from(&fuzzReader{b: in}), dir)
			require.NoError(t, err)
			out = append(out, append([]byte{byte(i), byte(dir)}, k...))
		}
		out = append(out, []byte{byte(i), 0, flagNull}, []byte{byte(i), 1, ^flagNull})
	}
	return out
}

func decodeRowSeeds(t *testing.T) [][]byte {
	tts := rowTypes()
	var out [][]byte
	for _, in := range [][]byte{{}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}} {
		row := make(sql.Row, len(tts))
		for i, tt := range tts {
			row[i] = fuzzValueForRow(tt, in)
		}
		for _, n := range []int{len(tts), 5, 1} {
			enc, err := AppendRow(nil, fuzzRowSchema[:n], row[:n])
			require.NoError(t, err)
			out = append(out, append([]byte{byte(n)}, enc...))
		}
	}
	nulls, err := AppendRow(nil, fuzzRowSchema, make(sql.Row, len(fuzzRowSchema)))
	require.NoError(t, err)
	out = append(out, append([]byte{byte(len(fuzzRowSchema))}, nulls...))
	return out
}

// fuzzValueForRow derives a value for a row seed: from the fuzz types where
// one matches, else from the random generator's first value.
func fuzzValueForRow(tt testType, in []byte) any {
	for _, ft := range fuzzTypes {
		if ft.typ.Equals(tt.typ) && ft.typ.String() == tt.typ.String() {
			return ft.from(&fuzzReader{b: in})
		}
	}
	return tt.gen(newSeedRand(in))
}
