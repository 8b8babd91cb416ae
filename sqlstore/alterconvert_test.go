package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestAlterConvertSpec checks the values ALTER TABLE stores when it
// changes a column's type, and its errors and warnings, in strict and
// non-strict sql_mode (testdata/alter_convert).
func TestAlterConvertSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/alter_convert", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "exec":
			return specExec(t, d, td)
		case "error":
			stmt := strings.TrimSpace(td.Input)
			err := runStmt(d, d.ctx, stmt)
			if err == nil {
				td.Fatalf(t, "%s: no error", stmt)
			}
			se := ServerError(StatementError(stmt, err))
			return fmt.Sprintf("ERROR %d (%s): %s\n", se.Num, se.State, se.Message)
		case "query":
			return queryWithWarnings(t, d, strings.TrimSpace(td.Input))
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}
