package codec

import (
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
	"github.com/stretchr/testify/require"
)

// intColumnsSchema mixes integer columns of every width with columns
// IntColumns skips.
var intColumnsSchema = sql.Schema{
	{Name: "a", Type: types.Int8, Nullable: true},
	{Name: "s", Type: types.Text, Nullable: true},
	{Name: "b", Type: types.Uint8, Nullable: true},
	{Name: "c", Type: types.Int16, Nullable: true},
	{Name: "d", Type: types.Float64, Nullable: true},
	{Name: "e", Type: types.Int32, Nullable: true},
	{Name: "f", Type: types.Uint32, Nullable: true},
	{Name: "g", Type: types.Int64, Nullable: true},
	{Name: "h", Type: types.MustCreateDecimalType(10, 2), Nullable: true},
	{Name: "i", Type: types.Uint64, Nullable: true},
}

// stepsSchema has only columns IntColumns skips without parsing them
// (integers, floats) before its last integer, within the NULL bitmap's
// first byte: readers of it take readShort.
var stepsSchema = sql.Schema{
	{Name: "a", Type: types.Int8, Nullable: true},
	{Name: "b", Type: types.Uint8, Nullable: true},
	{Name: "c", Type: types.Int16, Nullable: true},
	{Name: "d", Type: types.Float64, Nullable: true},
	{Name: "e", Type: types.Int32, Nullable: true},
	{Name: "f", Type: types.Float32, Nullable: true},
	{Name: "g", Type: types.Uint64, Nullable: true},
	{Name: "s", Type: types.Text, Nullable: true},
}

// stepsColumnsOf returns the integer columns of stepsSchema picked by
// the bits of mask.
func stepsColumnsOf(mask byte) []int {
	var cols []int
	for i, bit := range []int{0, 1, 2, 4, 6} {
		if mask&(1<<i) != 0 {
			cols = append(cols, bit)
		}
	}
	return cols
}

// intColumnsOf returns the integer columns of intColumnsSchema picked by
// the bits of mask.
func intColumnsOf(mask byte) []int {
	var cols []int
	for i, bit := range []int{0, 2, 3, 5, 6, 7, 9} {
		if mask&(1<<i) != 0 {
			cols = append(cols, bit)
		}
	}
	return cols
}

// asInt64 returns a decoded integer as IntColumns reads it.
func asInt64(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	}
	panic(v)
}

func TestIntColumns(t *testing.T) {
	row := sql.Row{int8(-5), "x", uint8(200), nil, 1.5, int32(-70000), uint32(4000000000), int64(-1 << 62), nil, uint64(1<<64 - 1)}
	b, err := AppendRow(nil, intColumnsSchema, row)
	require.NoError(t, err)
	r, ok := NewIntColumns(intColumnsSchema, []int{0, 2, 3, 5, 6, 7, 9})
	require.True(t, ok)
	vals, nulls := make([]int64, 7), make([]bool, 7)
	require.NoError(t, r.Read(b, vals, nulls))
	require.Equal(t, []int64{-5, 200, 0, -70000, 4000000000, -1 << 62, -1}, vals)
	require.Equal(t, []bool{false, false, true, false, false, false, false}, nulls)
	require.True(t, r.Unsigned(6))
	require.False(t, r.Unsigned(5))
	// A row written before the last columns were added reads them NULL.
	short, err := AppendRow(nil, intColumnsSchema[:4], row[:4])
	require.NoError(t, err)
	require.NoError(t, r.Read(short, vals, nulls))
	require.Equal(t, []bool{false, false, true, true, true, true, true}, nulls)
	// Only integers, ascending.
	for _, cols := range [][]int{{1}, {4}, {8}, {3, 2}, {2, 2}, {}, {10}} {
		_, ok := NewIntColumns(intColumnsSchema, cols)
		require.False(t, ok, "%v", cols)
	}
	require.ErrorIs(t, r.Read(b[:len(b)-3], vals, nulls), ErrCorrupt)
}

// TestIntColumnsSteps reads rows through readShort and through the
// general loop (the same reader without steps) and wants the same: rows
// with NULLs, rows with fewer columns, truncated rows.
func TestIntColumnsSteps(t *testing.T) {
	rows := []sql.Row{
		{int8(-5), uint8(200), int16(-300), 2.5, int32(-70000), float32(1.5), uint64(1<<64 - 1), "x"},
		{int8(127), uint8(0), int16(0), nil, int32(1 << 30), nil, uint64(0), nil},
		{nil, uint8(1), nil, 0.0, nil, float32(0), nil, "yy"},
	}
	for mask := byte(1); mask < 32; mask++ {
		cols := stepsColumnsOf(mask)
		r, ok := NewIntColumns(stepsSchema, cols)
		require.True(t, ok)
		require.NotNil(t, r.steps, "%v", cols)
		general := *r
		general.steps = nil
		for _, row := range rows {
			for n := 1; n <= len(stepsSchema); n++ {
				b, err := AppendRow(nil, stepsSchema[:n], row[:n])
				require.NoError(t, err)
				for cut := 0; cut <= len(b); cut++ {
					vals, nulls := make([]int64, len(cols)), make([]bool, len(cols))
					gv, gn := make([]int64, len(cols)), make([]bool, len(cols))
					err, gerr := r.Read(b[:cut], vals, nulls), general.Read(b[:cut], gv, gn)
					require.Equal(t, gerr, err, "cols %v row %v of %d columns cut at %d", cols, row, n, cut)
					if err == nil {
						require.Equal(t, gv, vals)
						require.Equal(t, gn, nulls)
					}
				}
			}
		}
	}
	// sysbench's (id, k, c, pad) reading k takes the steps; a reader whose
	// columns reach past the bitmap's first byte, or that must parse a
	// skipped column, does not.
	r, ok := NewIntColumns(intColumnsSchema, []int{0})
	require.True(t, ok)
	require.NotNil(t, r.steps)
	r, ok = NewIntColumns(intColumnsSchema, []int{2})
	require.True(t, ok)
	require.Nil(t, r.steps)
	r, ok = NewIntColumns(intColumnsSchema, []int{9})
	require.True(t, ok)
	require.Nil(t, r.steps)
}

// FuzzIntColumns feeds arbitrary bytes to IntColumns.Read: it must not
// panic, must fail with ErrCorrupt only, and must read what
// DecodeRowColumns decodes whenever that succeeds.
func FuzzIntColumns(f *testing.F) {
	row := sql.Row{int8(-5), "x", uint8(200), nil, 1.5, int32(-70000), uint32(4000000000), int64(-1 << 62), nil, uint64(1<<64 - 1)}
	b, err := AppendRow(nil, intColumnsSchema, row)
	require.NoError(f, err)
	f.Add(byte(0x7f), b)
	f.Add(byte(0x24), b[:len(b)/2])
	sb, err := AppendRow(nil, stepsSchema, sql.Row{int8(-5), uint8(200), int16(-300), 2.5, nil, float32(1.5), uint64(1<<64 - 1), "x"})
	require.NoError(f, err)
	f.Add(byte(0x9f), sb)
	f.Add(byte(0x94), sb[:len(sb)-4])
	f.Fuzz(func(t *testing.T, mask byte, b []byte) {
		// The high bit picks stepsSchema, whose readers take readShort.
		sch, cols := intColumnsSchema, intColumnsOf(mask)
		if mask&0x80 != 0 {
			sch, cols = stepsSchema, stepsColumnsOf(mask)
		}
		r, ok := NewIntColumns(sch, cols)
		if len(cols) == 0 {
			require.False(t, ok)
			return
		}
		require.True(t, ok)
		vals, nulls := make([]int64, len(cols)), make([]bool, len(cols))
		rerr := r.Read(b, vals, nulls)
		want, err := DecodeRowColumns(b, sch, cols, nil)
		if rerr != nil {
			require.ErrorIs(t, rerr, ErrCorrupt)
		}
		if err != nil {
			return
		}
		require.NoError(t, rerr)
		for j, v := range want {
			require.Equal(t, v == nil, nulls[j], "column %d", cols[j])
			if v != nil {
				require.Equal(t, asInt64(v), vals[j], "column %d", cols[j])
			}
		}
	})
}

// BenchmarkIntColumns reads k of sysbench's rows (id, k, c, pad), as
// SUM(k) over a range does:
//
//	go test ./sqlstore/codec -run '^$' -bench IntColumns
func BenchmarkIntColumns(b *testing.B) {
	sch := sql.Schema{
		{Name: "id", Type: types.Int32},
		{Name: "k", Type: types.Int32},
		{Name: "c", Type: types.MustCreateString(sqltypes.Char, 120, sql.Collation_Default)},
		{Name: "pad", Type: types.MustCreateString(sqltypes.Char, 60, sql.Collation_Default)},
	}
	row, err := AppendRow(nil, sch, sql.Row{int32(51234), int32(49871), strings.Repeat("1234567890-", 10), strings.Repeat("abcde-", 10)})
	require.NoError(b, err)
	r, ok := NewIntColumns(sch, []int{1})
	require.True(b, ok)
	vals, nulls := make([]int64, 1), make([]bool, 1)
	for b.Loop() {
		if err := r.Read(row, vals, nulls); err != nil {
			b.Fatal(err)
		}
	}
}
