package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestMySQLErrorsSpec runs testdata/mysql_errors: each statement fails with
// the number, SQLSTATE and message MySQL 8 gives (ServerError, what the
// server sends and the shell prints). Commands:
//
//	exec
//	  statements, one a line, each of which must succeed
//	error
//	  one statement, which must fail; prints ERROR num (state): message
//	query
//	  one statement; prints its rows
func TestMySQLErrorsSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/mysql_errors", func(t *testing.T, td *datadriven.TestData) string {
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
