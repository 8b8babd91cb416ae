package mysqlcompat_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/strata-db/strata/internal/sqltest"
	"github.com/strata-db/strata/sqlstore"
)

// Helpers of the datadriven specs in testdata/ (package sqltest's, run
// as the driver and the shell run statements).

var spec = sqltest.Runner{Query: sqlstore.Query, MySQLError: sqlstore.MySQLError}

// specExec runs an "exec" block: one statement a line, each of which must
// succeed.
func specExec(t *testing.T, d *testDB, td *datadriven.TestData) string {
	return spec.Exec(t, d.e, d.ctx, td)
}

// queryWithWarnings runs stmt and prints its rows or its MySQL error, then
// the warnings it left (sqltest.Runner.QueryWithWarnings).
func queryWithWarnings(t *testing.T, d *testDB, stmt string) string {
	return spec.QueryWithWarnings(t, d.e, d.ctx, stmt)
}

// runSQLSpec runs the datadriven file path with the two commands most
// specs need: "exec" (specExec) and "query" (queryWithWarnings).
func runSQLSpec(t *testing.T, d *testDB, path string) {
	datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
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
