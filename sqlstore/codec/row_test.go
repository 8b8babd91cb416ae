package codec

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// rowTypes are the column types rows support: every key type plus JSON.
func rowTypes() []testType {
	out := keyTypes()
	out = append(out, testType{"json", types.JSON, func(r *rand.Rand) any {
		docs := []string{`{"a": 1, "b": [true, null, "x"]}`, `[]`, `"text"`, `3.5`, `null`, `{"k\"ey": "v\u0001"}`}
		return types.MustJSON(docs[r.IntN(len(docs))])
	}})
	return out
}

func rowSchema(tts []testType) sql.Schema {
	sch := make(sql.Schema, len(tts))
	for i, tt := range tts {
		sch[i] = &sql.Column{Name: strings.ReplaceAll(tt.name, " ", "_"), Type: tt.typ, Nullable: true}
	}
	return sch
}

func TestRowRoundTrip(t *testing.T) {
	sch := sql.Schema{
		{Name: "i8", Type: types.Int8}, {Name: "u8", Type: types.Uint8},
		{Name: "i64", Type: types.Int64}, {Name: "u64", Type: types.Uint64},
		{Name: "f32", Type: types.Float32}, {Name: "f64", Type: types.Float64},
		{Name: "d", Type: decCol}, {Name: "dw", Type: decWide},
		{Name: "dt", Type: datetime6}, {Name: "date", Type: types.Date},
		{Name: "tm", Type: types.Time}, {Name: "y", Type: types.Year},
		{Name: "e", Type: enumType}, {Name: "s", Type: setType}, {Name: "b", Type: bit64},
		{Name: "vc", Type: vcAICI}, {Name: "txt", Type: types.LongText},
		{Name: "vb", Type: varbinary}, {Name: "blob", Type: types.LongBlob},
		{Name: "j", Type: types.JSON},
	}
	big := decimal.RequireFromString("-12345678901234567890123456789012345.123456789012345678901234567890")
	rows := []sql.Row{
		{int8(math.MinInt8), uint8(math.MaxUint8), int64(math.MinInt64), uint64(math.MaxUint64),
			float32(math.Inf(-1)), math.Copysign(0, -1), decimal.New(110, -2), big,
			time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC),
			types.Timespan(-3020399000000), int16(2155), uint16(3), uint64(15), uint64(math.MaxUint64),
			"Grüße, 世界 😀", strings.Repeat("long text ", 10000), []byte{0, 0xff, 0}, bytes.Repeat([]byte{0xff, 0}, 70000),
			types.MustJSON(`{"a": [1, 2.5, "x\u0000y"], "b": {"c": null}}`)},
		{int8(0), uint8(0), int64(0), uint64(0), float32(0), 0.0, decimal.New(0, -2), decimal.New(0, 0),
			time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC), time.Date(1969, 7, 20, 0, 0, 0, 0, time.UTC),
			types.Timespan(0), int16(0), uint16(0), uint64(0), uint64(0), "", "", []byte{}, []byte{}, types.MustJSON(`[]`)},
		make(sql.Row, 20), // all NULL
	}
	for i, row := range rows {
		enc, err := AppendRow([]byte("prefix"), sch, row)
		require.NoError(t, err)
		require.Equal(t, []byte("prefix"), enc[:6])
		got, err := DecodeRow(enc[6:], sch, nil)
		require.NoError(t, err, "row %d", i)
		require.Len(t, got, len(sch))
		for c := range sch {
			sameRowValue(t, sch[c].Type, row[c], got[c])
		}
		// Decimals keep their exact scale in rows.
		if d, ok := row[6].(decimal.Decimal); ok {
			require.Equal(t, d.Exponent(), got[6].(decimal.Decimal).Exponent())
		}
	}
}

// sameRowValue is sameValue, with JSON compared as documents.
func sameRowValue(t testing.TB, typ sql.Type, want, got any) {
	t.Helper()
	if ws, ok := want.(string); ok {
		want = trimChar(typ, ws) // CHAR values come back without trailing spaces
	}
	if wj, ok := want.(types.JSONDocument); ok {
		require.IsType(t, types.JSONDocument{}, got)
		c, err := types.CompareJSON(wj.Val, got.(types.JSONDocument).Val)
		require.NoError(t, err)
		require.Zero(t, c, "want %s, got %s", wj, got)
		return
	}
	if f, ok := want.(float64); ok && f == 0 {
		// Rows keep the sign of zero.
		require.Equal(t, math.Float64bits(f), math.Float64bits(got.(float64)))
		return
	}
	sameValue(t, typ, want, got)
}

func TestRowRoundTripRandom(t *testing.T) {
	tts := rowTypes()
	sch := rowSchema(tts)
	r := rand.New(rand.NewPCG(13, 14))
	dst := make(sql.Row, 0, len(sch))
	var buf []byte
	for i := 0; i < 500; i++ {
		row := make(sql.Row, len(sch))
		for c, tt := range tts {
			if r.IntN(5) != 0 {
				row[c] = tt.gen(r)
			}
		}
		var err error
		buf, err = AppendRow(buf[:0], sch, row)
		require.NoError(t, err)
		got, err := DecodeRow(buf, sch, dst)
		require.NoError(t, err)
		require.Equal(t, &dst[:1][0], &got[:1][0], "dst is reused")
		for c := range sch {
			sameRowValue(t, sch[c].Type, row[c], got[c])
		}
		// A random projection decodes the same values.
		cols := r.Perm(len(sch))[:r.IntN(len(sch))+1]
		proj, err := DecodeRowColumns(buf, sch, cols, nil)
		require.NoError(t, err)
		require.Len(t, proj, len(cols))
		for j, c := range cols {
			sameRowValue(t, sch[c].Type, row[c], proj[j])
		}
	}
}

func TestRowNoAliasing(t *testing.T) {
	sch := sql.Schema{{Name: "s", Type: types.LongText}, {Name: "b", Type: types.LongBlob}}
	enc, err := AppendRow(nil, sch, sql.Row{"hello", []byte("world")})
	require.NoError(t, err)
	got, err := DecodeRow(enc, sch, nil)
	require.NoError(t, err)
	proj, err := DecodeRowColumns(enc, sch, []int{1}, nil)
	require.NoError(t, err)
	for i := range enc {
		enc[i] = 'X'
	}
	require.Equal(t, "hello", got[0])
	require.Equal(t, []byte("world"), got[1])
	require.Equal(t, []byte("world"), proj[0])
}

func TestRowAddedColumns(t *testing.T) {
	old := sql.Schema{{Name: "a", Type: types.Int32}, {Name: "b", Type: types.LongText}}
	enc, err := AppendRow(nil, old, sql.Row{int32(1), nil})
	require.NoError(t, err)
	grown := append(old.Copy(), &sql.Column{Name: "c", Type: types.Int64}, &sql.Column{Name: "d", Type: types.LongText},
		&sql.Column{Name: "e", Type: types.Int8}, &sql.Column{Name: "f", Type: types.Int8},
		&sql.Column{Name: "g", Type: types.Int8}, &sql.Column{Name: "h", Type: types.Int8},
		&sql.Column{Name: "i", Type: types.Int8})
	got, err := DecodeRow(enc, grown, nil)
	require.NoError(t, err)
	require.Equal(t, sql.Row{int32(1), nil, nil, nil, nil, nil, nil, nil, nil}, got)
	proj, err := DecodeRowColumns(enc, grown, []int{3, 0, 8}, nil)
	require.NoError(t, err)
	require.Equal(t, sql.Row{nil, int32(1), nil}, proj)

	// A schema shorter than the row is an error, not a silent truncation.
	_, err = DecodeRow(enc, old[:1], nil)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestRowConvertsValues(t *testing.T) {
	sch := sql.Schema{{Name: "i", Type: types.Int32}, {Name: "d", Type: decCol}, {Name: "s", Type: types.LongText},
		{Name: "e", Type: enumType}, {Name: "j", Type: types.JSON}, {Name: "w", Type: types.LongText}}
	enc, err := AppendRow(nil, sch, sql.Row{7, "1.5", []byte("x"), "blue", `{"a": 1}`, stringWrapper("lazy")})
	require.NoError(t, err)
	got, err := DecodeRow(enc, sch, nil)
	require.NoError(t, err)
	require.Equal(t, int32(7), got[0])
	require.Equal(t, "1.50", got[1].(decimal.Decimal).StringFixed(2))
	require.Equal(t, "x", got[2])
	require.Equal(t, uint16(3), got[3])
	require.Equal(t, types.MustJSON(`{"a": 1}`), got[4])
	require.Equal(t, "lazy", got[5])
}

func TestRowJSONDecimal(t *testing.T) {
	// A decimal inside a JSON document is written as a number, not a string.
	sch := sql.Schema{{Name: "j", Type: types.JSON}}
	doc := types.JSONDocument{Val: map[string]any{"n": decimal.New(15, -1), "l": []any{decimal.New(2, 0)}}}
	enc, err := AppendRow(nil, sch, sql.Row{doc})
	require.NoError(t, err)
	got, err := DecodeRow(enc, sch, nil)
	require.NoError(t, err)
	require.Equal(t, types.JSONDocument{Val: map[string]any{"n": 1.5, "l": []any{2.0}}}, got[0])
	// The original document is untouched.
	require.IsType(t, decimal.Decimal{}, doc.Val.(map[string]any)["n"])
}

func TestRowErrors(t *testing.T) {
	sch := sql.Schema{{Name: "a", Type: types.Int32}}
	_, err := AppendRow(nil, sch, sql.Row{int32(1), int32(2)})
	require.ErrorIs(t, err, ErrInvalidValue)
	out, err := AppendRow([]byte("keep"), sch, sql.Row{"nope"})
	require.ErrorIs(t, err, ErrInvalidValue)
	require.Equal(t, []byte("keep"), out)
	_, err = AppendRow(nil, sql.Schema{{Name: "g", Type: types.PointType{}}}, sql.Row{types.Point{}})
	require.ErrorIs(t, err, ErrUnsupportedType)
	_, err = AppendRow(nil, sql.Schema{{Name: "g", Type: types.PointType{}}}, sql.Row{nil})
	require.ErrorIs(t, err, ErrUnsupportedType)
	_, err = DecodeRowColumns(mustRow(t, sch, sql.Row{int32(1)}), sch, []int{1}, nil)
	require.ErrorIs(t, err, ErrInvalidValue)
}

func mustRow(t testing.TB, sch sql.Schema, row sql.Row) []byte {
	t.Helper()
	b, err := AppendRow(nil, sch, row)
	require.NoError(t, err)
	return b
}

func TestDecodeRowCorrupt(t *testing.T) {
	sch := sql.Schema{{Name: "a", Type: types.Int32}, {Name: "s", Type: types.LongText}, {Name: "d", Type: decCol},
		{Name: "t", Type: datetime6}, {Name: "u", Type: types.Uint8}}
	good := mustRow(t, sch, sql.Row{int32(5), "hello", decimal.New(12345, -2), time.Unix(5, 0).UTC(), uint8(3)})
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"version", append([]byte{0x02}, good[1:]...)},
		{"no bitmap", []byte{rowFormatV1, 5}},
		{"truncated", good[:len(good)-1]},
		{"trailing", append(append([]byte(nil), good...), 0)},
		{"string length", []byte{rowFormatV1, 2, 0, 0x02, 0xff, 0x01, 'a'}},
		{"int32 range", []byte{rowFormatV1, 1, 0, 0xfe, 0xff, 0xff, 0xff, 0x7f}},
		{"bad nanos", []byte{rowFormatV1, 4, 0x07, 0x02, 0x80, 0x94, 0xeb, 0xdc, 0x03}},
		{"decimal length", []byte{rowFormatV1, 3, 0x03, 0x02, 0x10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRow(tt.b, sch, nil)
			require.ErrorIs(t, err, ErrCorrupt)
			_, err = DecodeRowColumns(tt.b, sch, []int{4, 0, 2, 3, 1}, nil)
			if tt.name != "trailing" { // projections do not read to the end
				require.ErrorIs(t, err, ErrCorrupt)
			}
		})
	}
	require.NotPanics(t, func() {
		for i := range good {
			for _, c := range []byte{0, 0x7f, 0x80, 0xff} {
				b := append([]byte(nil), good...)
				b[i] = c
				_, _ = DecodeRow(b, sch, nil)
				_, _ = DecodeRowColumns(b, sch, []int{2, 1}, nil)
			}
		}
	})
}

// TestArenaRows checks that rows decoded through one Arena are independent:
// each equals the plain decoding, and appending to or changing one leaves
// the others as they were.
func TestArenaRows(t *testing.T) {
	sch := sql.Schema{
		{Name: "id", Type: types.Int32},
		{Name: "c", Type: types.MustCreateString(sqltypes.Char, 120, sql.Collation_Default)},
		{Name: "b", Type: types.LongBlob, Nullable: true},
		{Name: "big", Type: types.LongText},
	}
	var a Arena
	var rows []sql.Row
	var want []sql.Row
	for i := range 500 {
		r := sql.Row{int32(i), fmt.Sprintf("row %d %s", i, strings.Repeat("c", i%100)), []byte{byte(i)}, strings.Repeat("x", i*7)}
		enc := mustRow(t, sch, r)
		plain, err := DecodeRow(enc, sch, nil)
		require.NoError(t, err)
		var got sql.Row
		if i%2 == 0 {
			got, err = a.DecodeRow(enc, sch)
		} else {
			got, err = a.DecodeRowColumns(enc, sch, []int{0, 1, 2, 3})
		}
		require.NoError(t, err)
		require.Equal(t, plain, got)
		for j := range enc {
			enc[j] = 0xff // the rows must not alias the input
		}
		rows, want = append(rows, got), append(want, plain)
	}
	for i := range rows {
		rows[i] = append(rows[i], "appended") // must not spill into the next row
		rows[i][0] = int32(-1)
	}
	for i := range rows {
		require.Equal(t, want[i][1:], rows[i][1:4], "row %d", i)
	}
}

// TestArenaChunksGrow: a fresh Arena's first chunks fit a row or two, so a
// statement that decodes one row allocates little; a long scan's chunks
// grow to the largest size.
func TestArenaChunksGrow(t *testing.T) {
	sch := sql.Schema{
		{Name: "id", Type: types.Int32},
		{Name: "c", Type: types.MustCreateString(sqltypes.Char, 120, sql.Collation_Default)},
	}
	enc := mustRow(t, sch, sql.Row{int32(1), strings.Repeat("c", 100)})
	var a Arena
	_, err := a.DecodeRow(enc, sch)
	require.NoError(t, err)
	require.Equal(t, arenaFirstSlots, a.nslots)
	require.Equal(t, arenaFirstBytes, a.nbytes)
	for range 1000 {
		_, err = a.DecodeRow(enc, sch)
		require.NoError(t, err)
	}
	require.Equal(t, arenaSlots, a.nslots)
	require.Equal(t, arenaBytes, a.nbytes)
	fresh := testing.AllocsPerRun(100, func() {
		var a Arena
		if _, err := a.DecodeRow(enc, sch); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, fresh, 4.0, "a row, its string chunk and the boxed values")
}

// TestArenaBoxedValues decodes rows of every type through one Arena, which
// boxes their values in its slabs from the second row on, keeps them all
// across garbage collections and more decoding, and checks that each value
// still equals the plain decoding, dynamic type included.
func TestArenaBoxedValues(t *testing.T) {
	var sch sql.Schema
	var gens []testType
	for _, tt := range keyTypes() {
		sch = append(sch, &sql.Column{Name: tt.name, Type: tt.typ, Nullable: true})
		gens = append(gens, tt)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var a Arena
	var got, want []sql.Row
	for i := range 600 {
		r := make(sql.Row, len(sch))
		for j, g := range gens {
			if rng.IntN(10) > 0 {
				r[j] = g.gen(rng)
			}
		}
		enc := mustRow(t, sch, r)
		plain, err := DecodeRow(enc, sch, nil)
		require.NoError(t, err)
		var row sql.Row
		if i%3 == 0 {
			cols := rng.Perm(len(sch))[:1+rng.IntN(len(sch))]
			if row, err = a.DecodeRowColumns(enc, sch, cols); err != nil {
				t.Fatal(err)
			}
			p := make(sql.Row, len(cols))
			for k, c := range cols {
				p[k] = plain[c]
			}
			plain = p
		} else if row, err = a.DecodeRow(enc, sch); err != nil {
			t.Fatal(err)
		}
		require.Equal(t, plain, row, "row %d", i)
		got, want = append(got, row), append(want, plain)
		if i%100 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	for i := range got {
		require.Equal(t, want[i], got[i], "row %d after more rows and collections", i)
	}
	require.Positive(t, a.nwords, "values were boxed in the Arena")
	require.Positive(t, a.nstrs)
}

// TestArenaPool: statements that take an Arena from the pool and release
// it share its chunks, each decoding into what the last left; the rows of
// the earlier ones keep their values through the later ones' decoding and
// garbage collections. Once the pool is warm, a statement of a few rows
// allocates almost nothing for them.
func TestArenaPool(t *testing.T) {
	sch := sql.Schema{
		{Name: "id", Type: types.Int32},
		{Name: "c", Type: types.MustCreateString(sqltypes.Char, 120, sql.Collation_Default)},
		{Name: "n", Type: types.Int64},
	}
	var kept, want []sql.Row
	for stmt := range 60 {
		a := GetArena()
		for i := range 25 {
			row := sql.Row{int32(i), fmt.Sprintf("%d-%d-%s", stmt, i, strings.Repeat("x", i*4)), int64(stmt*1000 + i)}
			got, err := a.DecodeRow(mustRow(t, sch, row), sch)
			require.NoError(t, err)
			kept, want = append(kept, got), append(want, row)
		}
		a.Release()
		if stmt%20 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	require.Equal(t, want, kept)

	enc := mustRow(t, sch, sql.Row{int32(1), strings.Repeat("c", 100), int64(7)})
	allocs := testing.AllocsPerRun(200, func() {
		a := GetArena()
		for range 3 {
			if _, err := a.DecodeRow(enc, sch); err != nil {
				t.Fatal(err)
			}
		}
		a.Release()
	})
	require.Less(t, allocs, 0.5, "chunks shared by statements")
}
