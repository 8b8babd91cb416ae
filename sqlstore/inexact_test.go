package sqlstore

import (
	"fmt"
	"math"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/stretchr/testify/require"
)

// TestHoldsExactlyIntegers: integer keys at and beyond every integer
// type's ends, as Go integers (checked directly) and as the same values in
// a string (checked through a decimal), agree with the type's limits.
func TestHoldsExactlyIntegers(t *testing.T) {
	ctx := sql.NewEmptyContext()
	for _, typ := range []sql.Type{types.Int8, types.Uint8, types.Int16, types.Uint16, types.Int24, types.Uint24,
		types.Int32, types.Uint32, types.Int64, types.Uint64} {
		for _, v := range []any{int64(0), int64(-1), int64(127), int64(128), int64(255), int64(256),
			int64(math.MinInt32), int64(math.MinInt32) - 1, int64(math.MaxInt32), int64(math.MaxInt32) + 1,
			int64(math.MaxUint32), int64(math.MaxUint32) + 1, int64(math.MinInt64), int64(math.MaxInt64),
			uint64(math.MaxInt64) + 1, uint64(math.MaxUint64), int32(-129), uint32(math.MaxUint32)} {
			want := holdsExactly(ctx, typ, fmt.Sprint(v))
			require.Equal(t, want, holdsExactly(ctx, typ, v), "%s holds %T %v", typ, v, v)
		}
	}
	require.False(t, holdsExactly(ctx, types.Int32, int64(math.MaxInt32)+1))
	require.True(t, holdsExactly(ctx, types.Uint64, uint64(math.MaxUint64)))
	require.False(t, holdsExactly(ctx, types.Uint64, int64(-1)))
}
