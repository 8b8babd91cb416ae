package sqlstore

import (
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/strata-db/strata/internal/sqltest"
)

// Helpers of the datadriven specs in testdata/ (package sqltest's, run
// as the driver and the shell run statements).

var spec = sqltest.Runner{Query: Query, MySQLError: MySQLError}

// specExec runs an "exec" block: one statement a line, each of which must
// succeed.
func specExec(t *testing.T, d *testDB, td *datadriven.TestData) string {
	return spec.Exec(t, d.e, d.ctx, td)
}

// specSetup runs the setup commands the specs share: "exec" (specExec)
// and "flush", which flushes the memtable to a table file so that reads go
// through the engine's tables. ok is false for any other command.
func specSetup(t *testing.T, d *testDB, td *datadriven.TestData) (out string, ok bool) {
	switch td.Cmd {
	case "exec":
		return specExec(t, d, td), true
	case "flush":
		if err := d.s.kvDB().Flush(); err != nil {
			td.Fatalf(t, "flush: %v", err)
		}
		return "", true
	}
	return "", false
}

// runStmt runs stmt, reading and closing its result.
func runStmt(d *testDB, ctx *sql.Context, stmt string) error { return spec.Run(d.e, ctx, stmt) }

// queryWithWarnings runs stmt and prints its rows or its MySQL error, then
// the warnings it left (sqltest.Runner.QueryWithWarnings).
func queryWithWarnings(t *testing.T, d *testDB, stmt string) string {
	return spec.QueryWithWarnings(t, d.e, d.ctx, stmt)
}
