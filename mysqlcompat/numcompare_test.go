package mysqlcompat_test

import "testing"

// TestNumberCompareSpec runs testdata/number_compare: DECIMAL and integer
// columns compared with literals of any scale, floats and strings as MySQL
// 8 compares them (exact decimals; doubles for floats and strings, with
// warning 1292), by full scan, primary and secondary index ranges and
// lookups. Commands as in TestStringLimitsSpec.
func TestNumberCompareSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/number_compare")
}
