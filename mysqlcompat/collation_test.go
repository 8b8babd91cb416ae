package mysqlcompat_test

import (
	"testing"
)

// TestCollationSpec runs testdata/collation: comparisons, DISTINCT,
// GROUP BY, COUNT(DISTINCT) and UNION under case-insensitive and PAD SPACE
// collations, NULL apart from every string, index reads agreeing with full
// scans, unique keys under PAD SPACE, and SHOW WARNINGS in raised order,
// each as MySQL 8 answers. Commands:
//
//	exec
//	  statements, one a line
//	query
//	  one statement; prints its rows, one a line, or its error, then the
//	  warnings it left
func TestCollationSpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/collation")
}
