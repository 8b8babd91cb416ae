package mysqlcompat_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestRecursiveCTESpec runs testdata/recursive_cte: a recursive CTE runs
// as many iterations as cte_max_recursion_depth allows and fails with 3636
// on the one beyond, as in MySQL (GMS ignored the variable and stopped at
// 10,001 iterations). Commands as in TestStringLimitsSpec.
func TestRecursiveCTESpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/recursive_cte", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "exec":
			return specExec(t, d, td)
		case "query":
			return queryWithWarnings(t, d, strings.TrimSpace(td.Input))
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}
