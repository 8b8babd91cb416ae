package mysqlcompat_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
)

// Helpers of the datadriven specs in testdata/.

// specExec runs an "exec" block: one statement a line, each of which must
// succeed.
func specExec(t *testing.T, d *testDB, td *datadriven.TestData) string {
	for _, stmt := range lines(td.Input) {
		if err := runStmt(d, d.ctx, stmt); err != nil {
			td.Fatalf(t, "%s: %v", stmt, err)
		}
	}
	return ""
}

// runStmt runs stmt as the driver and the shell do, reading and closing
// its result.
func runStmt(d *testDB, ctx *sql.Context, stmt string) error {
	ctx = ctx.WithQuery(stmt)
	_, iter, err := sqlstore.Query(ctx, d.e, stmt, nil, nil)
	if err != nil {
		return err
	}
	_, err = sql.RowIterToRows(ctx, iter)
	return err
}

// lines returns the non-blank lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// queryWithWarnings runs stmt and prints its rows, one a line (formatRow),
// or its MySQL error, then the warnings it left as "warning CODE: MESSAGE"
// in the order they were raised.
func queryWithWarnings(t *testing.T, d *testDB, stmt string) string {
	ctx := d.ctx.WithQuery(stmt)
	_, iter, err := sqlstore.Query(ctx, d.e, stmt, nil, nil)
	var rows []sql.Row
	if err == nil {
		rows, err = sql.RowIterToRows(ctx, iter)
	}
	if err != nil {
		se := sqlstore.MySQLError(err)
		require.NotNil(t, se, "%v", err)
		return fmt.Sprintf("error %d: %s\n", se.Num, se.Message)
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintln(&b, formatRow(r))
	}
	ws := d.ctx.Session.Warnings() // the last raised first
	slices.Reverse(ws)
	for _, w := range ws {
		fmt.Fprintf(&b, "warning %d: %s\n", w.Code, w.Message)
	}
	return b.String()
}

// formatRow prints a row's values, NULL as NULL and long strings by their
// length.
func formatRow(r sql.Row) string {
	parts := make([]string, len(r))
	for i, v := range r {
		switch v := v.(type) {
		case nil:
			parts[i] = "NULL"
		case string:
			if len(v) > 40 {
				parts[i] = fmt.Sprintf("<%d bytes>", len(v))
			} else {
				parts[i] = fmt.Sprintf("%q", v)
			}
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, " ")
}
