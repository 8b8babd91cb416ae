package mysqlcompat_test

import "testing"

// TestValueSemanticsSpec runs testdata/value_semantics: values GMS read
// otherwise than MySQL 8 does — \_ and \% in string literals, LIKE's
// escapes (a trailing escape, an empty ESCAPE) by scan and by index range, and
// prepared statements whose arguments carry the patterns. Commands as in
// TestStringLimitsSpec.
func TestValueSemanticsSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/value_semantics")
}
