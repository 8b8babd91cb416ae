package mysqlcompat_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNumberCompareSpec runs testdata/number_compare: DECIMAL and integer
// columns compared with literals of any scale, floats and strings as MySQL
// 8 compares them (exact decimals; doubles for floats and strings, with
// warning 1292), by full scan, primary and secondary index ranges and
// lookups. Commands as in TestStringLimitsSpec.
func TestNumberCompareSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/number_compare")
}

// TestNumberCompareExplain checks that EXPLAIN shows the plan the query
// runs: d > 3.499 over the range from 3.50 inclusive (GMS's binder made
// it d > 3.50 in an EXPLAIN, whose statement vitess's walk does not
// enter).
func TestNumberCompareExplain(t *testing.T) {
	d := newTestDB(t)
	require.NoError(t, spec.Run(d.e, d.ctx, "CREATE TABLE d (id INT PRIMARY KEY, d DECIMAL(5,2), KEY (d))"))
	rows, err := query(d.e, d.ctx, "EXPLAIN FORMAT=TREE SELECT id FROM d WHERE d > 3.499")
	require.NoError(t, err)
	out := fmt.Sprint(rows)
	require.Contains(t, out, "(d.d > 3.499)", out)
	require.Contains(t, out, "{[3.5, ∞)}", out)
}
