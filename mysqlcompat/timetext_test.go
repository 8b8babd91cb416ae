package mysqlcompat_test

import (
	"testing"
)

// TestTimeTextSpec runs testdata/time_text: dates and times converted to
// strings as MySQL 8 shows them (CAST and CONVERT to CHAR, CONCAT,
// CONCAT_WS), and typed DATE, TIME and TIMESTAMP literals. Commands as in
// TestStringLimitsSpec.
func TestTimeTextSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/time_text")
}
