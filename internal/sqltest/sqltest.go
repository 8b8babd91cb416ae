// Package sqltest holds what the SQL tests of sqlstore and mysqlcompat
// share: running statements on an engine in a session, and the text the
// datadriven specs in their testdata/ compare. It imports neither
// package, so that sqlstore's own tests may use it; what it needs of
// sqlstore (how a statement runs, how its error reads) the caller passes
// in a Runner.
package sqltest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"
)

// Query runs q on e in ctx, as GMS runs it, and returns its rows or error.
func Query(e *sqle.Engine, ctx *sql.Context, q string) ([]sql.Row, error) {
	_, iter, _, err := e.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(ctx, iter)
}

// TypedRows runs q, failing t on an error, and returns its rows, as a
// client reads their text, and its columns' types (" null" added to a
// nullable one).
func TypedRows(t testing.TB, e *sqle.Engine, ctx *sql.Context, q string) (string, []string) {
	t.Helper()
	ctx = ctx.WithQuery(q)
	sch, iter, _, err := e.Query(ctx, q)
	require.NoError(t, err, q)
	rows, err := sql.RowIterToRows(ctx, iter)
	require.NoError(t, err, q)
	for _, row := range rows {
		for i, v := range row {
			if _, ok := v.(types.OkResult); ok || v == nil {
				continue
			}
			text, err := sch[i].Type.SQL(ctx, nil, v)
			require.NoError(t, err, q)
			row[i] = text.ToString()
		}
	}
	var typs []string
	for _, c := range sch {
		typ := c.Type.String()
		if c.Nullable {
			typ += " null"
		}
		typs = append(typs, typ)
	}
	return fmt.Sprint(rows), typs
}

// Runner runs the statements of a spec the way the package under test
// runs them.
type Runner struct {
	// Query runs a statement as the driver and the shell do
	// (sqlstore.Query).
	Query func(ctx *sql.Context, e *sqle.Engine, q string, parsed sqlparser.Statement, bindings map[string]sqlparser.Expr) (sql.Schema, sql.RowIter, error)
	// MySQLError is the MySQL error a client sees for err
	// (sqlstore.MySQLError).
	MySQLError func(err error) *mysql.SQLError
}

// Run runs stmt, reading and closing its result.
func (r Runner) Run(e *sqle.Engine, ctx *sql.Context, stmt string) error {
	_, err := r.rows(e, ctx, stmt)
	return err
}

func (r Runner) rows(e *sqle.Engine, ctx *sql.Context, stmt string) ([]sql.Row, error) {
	ctx = ctx.WithQuery(stmt)
	_, iter, err := r.Query(ctx, e, stmt, nil, nil)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(ctx, iter)
}

// Exec runs an "exec" block: one statement a line, each of which must
// succeed.
func (r Runner) Exec(t testing.TB, e *sqle.Engine, ctx *sql.Context, td *datadriven.TestData) string {
	for _, stmt := range Lines(td.Input) {
		if err := r.Run(e, ctx, stmt); err != nil {
			td.Fatalf(t, "%s: %v", stmt, err)
		}
	}
	return ""
}

// QueryWithWarnings runs stmt and prints its rows, one a line (FormatRow),
// or its MySQL error, then the warnings it left in ctx's session as
// "warning CODE: MESSAGE" in the order they were raised.
func (r Runner) QueryWithWarnings(t testing.TB, e *sqle.Engine, ctx *sql.Context, stmt string) string {
	rows, err := r.rows(e, ctx, stmt)
	if err != nil {
		se := r.MySQLError(err)
		require.NotNil(t, se, "%v", err)
		return fmt.Sprintf("error %d: %s\n", se.Num, se.Message)
	}
	var b strings.Builder
	for _, row := range rows {
		fmt.Fprintln(&b, FormatRow(row))
	}
	ws := ctx.Session.Warnings() // the last raised first
	slices.Reverse(ws)
	for _, w := range ws {
		fmt.Fprintf(&b, "warning %d: %s\n", w.Code, w.Message)
	}
	return b.String()
}

// Lines returns the non-blank lines of s, trimmed.
func Lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// FormatRow prints a row's values, NULL as NULL and long strings by their
// length.
func FormatRow(r sql.Row) string {
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
