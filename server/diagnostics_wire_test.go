package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// TestServerDiagnosticsSpec runs sqlstore's testdata/diagnostics over the
// MySQL protocol on one connection: text statements (the handler and, once
// the plan cache runs them, the fast path) and prepared ones (COM_STMT_*;
// what MySQL does not prepare, as text after the prepare's 1295).
func TestServerDiagnosticsSpec(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "CREATE DATABASE mydb")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "USE mydb")
	require.NoError(t, err)
	datadriven.RunTest(t, "../sqlstore/testdata/diagnostics", func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "run" {
			td.Fatalf(t, "unknown command %q", td.Cmd)
		}
		prepared := td.HasArg("prepared")
		var out strings.Builder
		for _, q := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			fmt.Fprintf(&out, "> %s\n", q)
			var rows *sql.Rows
			var err error
			if prepared {
				var st *sql.Stmt
				if st, err = conn.PrepareContext(ctx, q); err == nil {
					rows, err = st.QueryContext(ctx)
					defer st.Close()
				} else if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == erUnsupportedPS {
					// SHOW WARNINGS, SHOW ERRORS and SHOW COUNT(*) are
					// not prepared, as in MySQL (1295, answered before
					// the session sees the command, so its diagnostics
					// stay): a client runs them as text.
					rows, err = conn.QueryContext(ctx, q)
				}
			} else {
				rows, err = conn.QueryContext(ctx, q)
			}
			if err == nil {
				err = wireDiagRows(&out, rows)
			}
			if err != nil {
				var me *mysql.MySQLError
				if !errors.As(err, &me) {
					t.Fatalf("%s: %v", q, err)
				}
				fmt.Fprintf(&out, "error %d (%s): %s\n", me.Number, me.SQLState[:], me.Message)
			}
		}
		return out.String()
	})
}

// wireDiagRows writes a result as sqlstore's TestDiagnosticsSpec does.
func wireDiagRows(out *strings.Builder, rows *sql.Rows) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			return err
		}
		out.WriteString("ok\n")
		return nil
	}
	vals := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
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
	return rows.Err()
}

// TestServerDiagnosticsFastPaths: a failing statement the plan cache runs,
// answered below the protocol layer (server_text.go, server_exec.go),
// leaves its error for SHOW WARNINGS and @@error_count as the handler's
// path does, and a statement that succeeds there clears it.
func TestServerDiagnosticsFastPaths(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range []string{"CREATE DATABASE d", "USE d", "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)"} {
		_, err = conn.ExecContext(ctx, q)
		require.NoError(t, err)
	}
	ins, err := conn.PrepareContext(ctx, "INSERT INTO t VALUES (?)")
	require.NoError(t, err)
	defer ins.Close()
	sel, err := conn.PrepareContext(ctx, "SELECT id FROM t WHERE id = ?")
	require.NoError(t, err)
	defer sel.Close()
	warnings := func() (out []string) {
		t.Helper()
		rows, err := conn.QueryContext(ctx, "SHOW WARNINGS")
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var level, msg string
			var code int
			require.NoError(t, rows.Scan(&level, &code, &msg))
			out = append(out, fmt.Sprintf("%s %d %s", level, code, msg))
		}
		require.NoError(t, rows.Err())
		return out
	}
	dup := []string{"Error 1062 Duplicate entry '1' for key 't.PRIMARY'"}
	for run := range 6 {
		_, err = conn.ExecContext(ctx, "INSERT INTO t VALUES (1)")
		require.EqualValues(t, 1062, mysqlNumber(err), "text run %d", run)
		require.Equal(t, dup, warnings(), "text run %d", run)
		var n int
		require.NoError(t, conn.QueryRowContext(ctx, "SELECT id FROM t WHERE id = 1").Scan(&n))
		require.Empty(t, warnings(), "text run %d", run)

		_, err = ins.ExecContext(ctx, 1)
		require.EqualValues(t, 1062, mysqlNumber(err), "prepared run %d", run)
		require.Equal(t, dup, warnings(), "prepared run %d", run)
		require.NoError(t, conn.QueryRowContext(ctx, "SELECT @@error_count").Scan(&n))
		require.Equal(t, 1, n, "prepared run %d", run)
		require.NoError(t, sel.QueryRowContext(ctx, 1).Scan(&n))
		require.Empty(t, warnings(), "prepared run %d", run)
	}
	texts := fastServed(s, func(f *fastExec) int64 { return f.texts.Load() })
	served := fastServed(s, func(f *fastExec) int64 { return f.served.Load() })
	require.Positive(t, texts, "no text answered below the protocol layer")
	require.Positive(t, served, "no execution answered below the protocol layer")
}
