package server

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"
)

// TestServerFailedStatementUndone: over the MySQL protocol, an INSERT whose
// AFTER trigger fails inside an explicit transaction leaves nothing of its
// writes and keeps the transaction's earlier ones, as text and as a
// server-side prepared statement, run four times each so that the
// server's kept plans run it (sqlstore's TestFailedStatementUndone has
// the whole table of statements).
func TestServerFailedStatementUndone(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	execAll(t, db,
		"CREATE TABLE t (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE log (id INT PRIMARY KEY)",
		"INSERT INTO log VALUES (1)",
		"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.k)",
	)
	ctx := context.Background()
	count := func(q string) (n int) {
		t.Helper()
		require.NoError(t, db.QueryRowContext(ctx, q).Scan(&n))
		return n
	}
	id := 10
	for _, mode := range []string{"pessimistic", "optimistic"} {
		for _, prepared := range []bool{false, true} {
			conn, err := db.Conn(ctx)
			require.NoError(t, err)
			_, err = conn.ExecContext(ctx, "SET strata_txn_mode = '"+mode+"'")
			require.NoError(t, err)
			for run := range 4 {
				id++
				rowsT, rowsLog := count("SELECT COUNT(*) FROM t"), count("SELECT COUNT(*) FROM log")
				_, err = conn.ExecContext(ctx, "BEGIN")
				require.NoError(t, err)
				_, err = conn.ExecContext(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", id, id))
				require.NoError(t, err)
				if prepared {
					_, err = conn.ExecContext(ctx, "INSERT INTO t VALUES (?, ?)", 5, 1)
				} else {
					_, err = conn.ExecContext(ctx, "INSERT INTO t VALUES (5, 1)")
				}
				var me *mysql.MySQLError
				require.True(t, errors.As(err, &me), "%s prepared=%v run %d: %v", mode, prepared, run, err)
				require.EqualValues(t, 1062, me.Number)
				_, err = conn.ExecContext(ctx, "COMMIT")
				require.NoError(t, err)
				require.Equal(t, rowsT+1, count("SELECT COUNT(*) FROM t"), "%s prepared=%v run %d", mode, prepared, run)
				require.Equal(t, rowsLog+1, count("SELECT COUNT(*) FROM log"), "%s prepared=%v run %d", mode, prepared, run)
				require.Zero(t, count("SELECT COUNT(*) FROM t WHERE id = 5"))
			}
			require.NoError(t, conn.Close())
		}
	}
}
