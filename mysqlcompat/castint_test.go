package mysqlcompat_test

import (
	"testing"
)

// TestCastIntegerSpec runs testdata/cast_integer: CAST of strings to
// SIGNED and UNSIGNED as MySQL 8 reads them (the longest integer prefix,
// warnings 1292 and 1105), and CASTs of other types as GMS does them.
// Commands as in TestStringLimitsSpec.
func TestCastIntegerSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/cast_integer")
}
