package codec

import (
	"math"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/stretchr/testify/require"
)

// TestAppendIntKeyMatchesAppendKey: for every integer type, at and around
// its limits, in both directions, AppendIntKey encodes what AppendKey
// encodes for the converted value, and refuses what Convert refuses.
func TestAppendIntKeyMatchesAppendKey(t *testing.T) {
	ctx := sql.NewEmptyContext()
	var vals []int64
	for _, b := range []int64{1 << 7, 1 << 8, 1 << 15, 1 << 16, 1 << 23, 1 << 24, 1 << 31, 1 << 32} {
		vals = append(vals, b-1, b, b+1, -b-1, -b, -b+1)
	}
	vals = append(vals, 0, 1, -1, math.MaxInt64, math.MaxInt64-1, math.MinInt64, math.MinInt64+1)
	for _, typ := range []sql.Type{types.Int8, types.Uint8, types.Int16, types.Uint16, types.Int24, types.Uint24,
		types.Int32, types.Uint32, types.Int64, types.Uint64, types.Year, types.Float64, types.Text} {
		for _, dir := range []Direction{Asc, Desc} {
			for _, v := range vals {
				got, ok := AppendIntKey([]byte("p"), typ, v, dir)
				cv, inRange, err := typ.Convert(ctx, v)
				_, _, isInt := IntRange(typ)
				if !isInt || err != nil || inRange != sql.InRange {
					require.False(t, ok, "%s %d", typ, v)
					require.Equal(t, "p", string(got))
					continue
				}
				require.True(t, ok, "%s %d", typ, v)
				want, err := AppendKey([]byte("p"), typ, cv, dir)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s %d %s", typ, v, dir)
			}
		}
	}
}
