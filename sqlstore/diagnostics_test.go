package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
)

// TestDiagnosticsSpec runs testdata/diagnostics on one connection in
// process (server's TestServerDiagnosticsSpec runs it over the wire).
func TestDiagnosticsSpec(t *testing.T) {
	c := openConn(t)
	ctx := context.Background()
	datadriven.RunTest(t, "testdata/diagnostics", func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "run" {
			td.Fatalf(t, "unknown command %q", td.Cmd)
		}
		prepared := td.HasArg("prepared")
		var out strings.Builder
		for _, q := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			fmt.Fprintf(&out, "> %s\n", q)
			var rows *sqlstore.Rows
			var err error
			if prepared {
				var st *sqlstore.Stmt
				if st, err = c.Prepare(ctx, q); err == nil {
					rows, err = st.Query(ctx)
					defer st.Close()
				}
			} else {
				rows, err = c.Query(ctx, q)
			}
			if err == nil {
				err = diagRows(&out, rows)
			}
			if err != nil {
				var se *mysql.SQLError
				if !errors.As(err, &se) {
					t.Fatalf("%s: %v", q, err)
				}
				fmt.Fprintf(&out, "error %d (%s): %s\n", se.Num, se.State, se.Message)
			}
		}
		return out.String()
	})
}

// diagRows writes the rows of a result, its values separated by spaces,
// or "ok" for a result without columns, and closes it.
func diagRows(out *strings.Builder, rows *sqlstore.Rows) error {
	defer rows.Close()
	if len(rows.Columns()) == 0 {
		for {
			if _, err := rows.Next(); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return err
			}
		}
		out.WriteString("ok\n")
		return nil
	}
	for {
		vals, err := rows.NextText()
		if errors.Is(err, io.EOF) {
			return rows.Close()
		}
		if err != nil {
			return err
		}
		for i, v := range vals {
			if i > 0 {
				out.WriteByte(' ')
			}
			if v == nil {
				out.WriteString("NULL")
			} else {
				out.Write(v)
			}
		}
		out.WriteByte('\n')
	}
}

// TestDiagnosticsKeptWritesClear: a write the plan cache keeps (prepared
// by key, a template, text) after a failed statement reports no warnings
// of its own: the failed statement's Error row is not counted as one.
func TestDiagnosticsKeptWritesClear(t *testing.T) {
	ctx := context.Background()
	c := openConn(t)
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, k INT)", "INSERT INTO t VALUES (1, 1), (2, 2)"} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err)
	}
	upd, err := c.Prepare(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
	require.NoError(t, err)
	defer upd.Close()
	ins, err := c.Prepare(ctx, "INSERT INTO t VALUES (?, ?)")
	require.NoError(t, err)
	defer ins.Close()
	fail := func() {
		t.Helper()
		_, err := c.Exec(ctx, "INSERT INTO t VALUES (1, 1)")
		require.Error(t, err)
	}
	for i := range 6 {
		fail()
		r, err := upd.Exec(ctx, sqlstore.Arg{Ordinal: 1, Value: int64(1)})
		require.NoError(t, err)
		require.Zero(t, r.Warnings, "run %d: prepared UPDATE", i)
		fail()
		r, err = ins.Exec(ctx, sqlstore.Arg{Ordinal: 1, Value: int64(100 + i)}, sqlstore.Arg{Ordinal: 2, Value: int64(1)})
		require.NoError(t, err)
		require.Zero(t, r.Warnings, "run %d: prepared INSERT", i)
		fail()
		r, err = c.Exec(ctx, "UPDATE t SET k = 5 WHERE id = 2")
		require.NoError(t, err)
		require.Zero(t, r.Warnings, "run %d: text UPDATE", i)
	}
}

// TestDiagnosticsPrepare: a prepare that succeeds clears the area, as
// MySQL's and MariaDB's do (checked on MariaDB 10.11), a first prepare of
// the text or one the connection kept; one that fails leaves its error;
// the prepare of a statement that reads the area (SHOW WARNINGS, the
// counts) leaves it to the statement.
func TestDiagnosticsPrepare(t *testing.T) {
	c := openConn(t)
	ctx := context.Background()
	_, err := c.Exec(ctx, "CREATE TABLE t (i INT PRIMARY KEY)")
	require.NoError(t, err)
	show := func(q string) string {
		t.Helper()
		rows, err := c.Query(ctx, q)
		require.NoError(t, err)
		var out strings.Builder
		require.NoError(t, diagRows(&out, rows))
		return out.String()
	}
	fail := func() {
		t.Helper()
		_, err := c.Exec(ctx, "SELECT * FROM nosuch")
		require.Error(t, err)
	}
	for run := range 3 { // a first prepare, then kept ones
		fail()
		st, err := c.Prepare(ctx, "SELECT * FROM t WHERE i = ?")
		require.NoError(t, err)
		require.Equal(t, "", show("SHOW WARNINGS"), "run %d", run)
		require.Equal(t, "0 0\n", show("SELECT @@warning_count, @@error_count"), "run %d", run)
		require.NoError(t, st.Close())

		fail()
		_, err = c.Prepare(ctx, "SELECT * FROM nosuch2")
		require.Error(t, err)
		require.Equal(t, "Error 1146 Table 'nosuch2' doesn't exist\n", show("SHOW WARNINGS"), "run %d", run)

		for _, q := range []string{"SHOW WARNINGS", "SHOW COUNT(*) ERRORS", "SELECT @@error_count"} {
			fail()
			st, err := c.Prepare(ctx, q)
			require.NoError(t, err)
			rows, err := st.Query(ctx)
			require.NoError(t, err)
			var out strings.Builder
			require.NoError(t, diagRows(&out, rows))
			require.NotEqual(t, "", out.String(), "run %d: %s", run, q)
			require.NotEqual(t, "0\n", out.String(), "run %d: %s", run, q)
			require.NoError(t, st.Close())
		}
	}
}
