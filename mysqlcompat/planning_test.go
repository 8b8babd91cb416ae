package mysqlcompat_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// TestPlanningSpec runs the files of testdata/planning, each on a fresh
// database: statements GMS plans into wrong results or internal errors
// (1105), with MySQL 8's answers (checked against MariaDB where it agrees
// with MySQL: its own index ranges over LIKE prefixes under PAD SPACE miss
// rows, so the full scans are the reference there). Commands:
//
//	exec
//	  statements, one a line
//	query
//	  one statement; prints its rows, one a line, or its error, then the
//	  warnings it left
//	access
//	  one SELECT; prints how EXPLAIN FORMAT=TREE says each table is read
//	  (the access operations, without their bounds and costs)
func TestPlanningSpec(t *testing.T) {
	datadriven.Walk(t, "testdata/planning", func(t *testing.T, path string) {
		d := newTestDB(t)
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "exec":
				return specExec(t, d, td)
			case "query":
				return queryWithWarnings(t, d, strings.TrimSpace(td.Input))
			case "access":
				return accessOf(t, d, strings.TrimSpace(td.Input))
			default:
				td.Fatalf(t, "unknown command %q", td.Cmd)
				return ""
			}
		})
	})
}

// accessOps matches the access operations of a tree plan, up to their
// bounds or the storage's note.
var accessOps = regexp.MustCompile(`(Table scan on \w+|Index range scan on \w+ using \w+|Index lookup on \w+ using \w+|Single-row index lookup on \w+ using \w+|Index scan on \w+ using \w+|Covering index [a-z ]+ on \w+ using \w+)`)

func accessOf(t *testing.T, d *testDB, stmt string) string {
	q := "EXPLAIN FORMAT=TREE " + stmt
	ctx := d.ctx.WithQuery(q)
	_, iter, err := spec.Query(ctx, d.e, q, nil, nil)
	require.NoError(t, err, stmt)
	rows, err := sql.RowIterToRows(ctx, iter)
	require.NoError(t, err, stmt)
	var b strings.Builder
	for _, r := range rows {
		for _, op := range accessOps.FindAllString(fmt.Sprint(r[0]), -1) {
			fmt.Fprintln(&b, op)
		}
	}
	return b.String()
}
