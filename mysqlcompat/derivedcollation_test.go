package mysqlcompat_test

import (
	"testing"
)

// TestDerivedCollationSpec runs testdata/derived_collation: CONCAT and
// set operation columns of a column and a literal typed in the column's
// collation, as MySQL 8 derives it, so that grouping, DISTINCT and set
// operations compare as it does. Commands as in TestStringLimitsSpec.
func TestDerivedCollationSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/derived_collation")
}
