package mysqlcompat_test

import (
	"testing"
)

// TestRecursiveCTESpec runs testdata/recursive_cte: a recursive CTE runs
// as many iterations as cte_max_recursion_depth allows and fails with 3636
// on the one beyond, as in MySQL (GMS ignored the variable and stopped at
// 10,001 iterations). Commands as in TestStringLimitsSpec.
func TestRecursiveCTESpec(t *testing.T) {
	d := newTestDB(t)
	runSQLSpec(t, d, "testdata/recursive_cte")
}
