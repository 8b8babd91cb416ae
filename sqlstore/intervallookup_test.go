package sqlstore

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/stretchr/testify/require"
)

// TestEncodeIntervalsMatchesRanges: a template's intervals encode to the
// spans that GMS's ranges for them encode to, in the same order, on unique,
// non-unique and multi-column indexes, forward and reverse; and the
// collection prints and compares as those ranges do.
func TestEncodeIntervalsMatchesRanges(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k BIGINT, v TINYINT UNSIGNED, KEY k_idx (k), KEY vk (v, k))")
	d.exec("CREATE TABLE s (id TINYINT PRIMARY KEY)")
	d.exec("CREATE TABLE u (id BIGINT UNSIGNED PRIMARY KEY)")
	db, err := d.s.Provider().Database(d.ctx, "mydb")
	require.NoError(t, err)

	common := []intervalSet{
		{{5, 5}},
		{{0, 0}, {7, 7}, {10, 12}, {100, 127}},
		{{1, 120}},
		{{3, 3}, {4, 4}},
	}
	for _, tc := range []struct {
		table   string
		indexes int
		sets    []intervalSet
	}{
		{"t", 3, append(common, intervalSet{{math.MinInt32, math.MinInt32 + 1}, {math.MaxInt32 - 1, math.MaxInt32}})},
		{"s", 1, append(common, intervalSet{{-128, -128}, {126, 127}}, intervalSet{{-128, 127}})},
		{"u", 1, append(common, intervalSet{{0, 0}, {math.MaxInt64 - 1, math.MaxInt64}}, intervalSet{{0, math.MaxInt64}})},
	} {
		tbl, ok, err := db.GetTableInsensitive(d.ctx, tc.table)
		require.NoError(t, err)
		require.True(t, ok)
		indexes, err := tbl.(*Table).GetIndexes(d.ctx)
		require.NoError(t, err)
		require.Len(t, indexes, tc.indexes)
		for _, idx := range indexes {
			ix := idx.(*Index)
			typ := ix.t.schema[ix.ix.cols[0]].Type
			for _, set := range tc.sets {
				if _, fits := (&intervalRanges{ctx: d.ctx, typ: typ, set: set}).mysql(); !fits {
					continue // e.g. the INT bounds on v, a TINYINT UNSIGNED
				}
				for _, reverse := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s.%s/%v/reverse=%t", tc.table, ix.ix.name, set, reverse), func(t *testing.T) {
						checkIntervalSpans(t, d, ix, typ, set, reverse)
					})
				}
			}
		}
	}
}

func checkIntervalSpans(t *testing.T, d *testDB, ix *Index, typ sql.Type, set intervalSet, reverse bool) {
	r := &intervalRanges{ctx: d.ctx, typ: typ, set: set, reverse: reverse}
	ranges, ok := r.mysql()
	require.True(t, ok)
	want, err := encodeLookup(d.ctx, ix.t, ix.ix, sql.IndexLookup{Index: ix, Ranges: ranges, IsReverse: reverse})
	require.NoError(t, err)
	got, err := encodeLookup(d.ctx, ix.t, ix.ix, sql.IndexLookup{Index: ix, Ranges: r, IsReverse: reverse})
	require.NoError(t, err)
	require.Equal(t, want.reverse, got.reverse)
	require.Len(t, got.spans, len(want.spans))
	for i, w := range want.spans {
		g := got.spans[i]
		require.Equal(t, w.start, g.start, "span %d start", i)
		require.Equal(t, w.end, g.end, "span %d end", i)
		require.Equal(t, w.point, g.point, "span %d point", i)
		require.Equal(t, w.rangeCol, g.rangeCol, "span %d", i)
		require.Empty(t, w.residual)
		require.Nil(t, g.rng)
		require.Equal(t, spanRows(d.ctx, ix.t, ix.ix, &w, 1000), spanRows(d.ctx, ix.t, ix.ix, &g, 1000), "span %d rows", i)
	}

	require.Equal(t, ranges.Len(), r.Len())
	require.Equal(t, ranges.String(), r.String())
	require.Equal(t, ranges.DebugString(), r.DebugString())
	eq, err := r.Equals(ranges)
	require.NoError(t, err)
	require.True(t, eq)
	for k, x := range r.ToRanges() {
		require.Equal(t, ranges[k].String(), x.String())
		eq, err := x.Equals(ranges[k])
		require.NoError(t, err)
		require.True(t, eq)
	}
}

// A bound the column cannot hold is no lookup: the template falls back to
// planning afresh (TestPreparedSelectMatchesPlanned runs such arguments).
func TestIntervalRangesOutOfType(t *testing.T) {
	d := newTestDB(t)
	r := &intervalRanges{ctx: d.ctx, typ: types.Int8, set: intervalSet{{1, math.MaxInt32}}}
	_, ok := r.mysql()
	require.False(t, ok)
	require.Equal(t, "[]", r.String())
}

// TestIntFitsMatchesConvert: intFits says what GMS's Convert says, for
// every integer type at and around its limits.
func TestIntFitsMatchesConvert(t *testing.T) {
	ctx := sql.NewEmptyContext()
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 32, -1 << 31, -1<<31 - 1, -1 << 24, -1 << 23, -1<<23 - 1,
		-1 << 16, -1 << 15, -1<<15 - 1, -1 << 8, -1 << 7, -129, -1, 0, 1}
	for _, v := range slices.Clone(vals) {
		if v < 0 && v > math.MinInt64 {
			vals = append(vals, -v, -v-1, -v+1) // the positive limits and their neighbours
		}
	}
	vals = append(vals, math.MaxInt64, math.MaxInt64-1)
	for _, typ := range []sql.Type{types.Int8, types.Uint8, types.Int16, types.Uint16, types.Int24, types.Uint24,
		types.Int32, types.Uint32, types.Int64, types.Uint64, types.Year} {
		for _, v := range vals {
			_, want := fromInt64(ctx, typ, v)
			require.Equal(t, want, intFits(ctx, typ, v), "%s %d", typ, v)
		}
	}
}
