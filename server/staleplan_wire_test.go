package server

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/sqltest"
)

// TestServerStalePlanAfterDDL: over the wire, a statement planned while an
// ALTER TABLE waited for another connection's transaction, and whose
// metadata lock then waited behind the ALTER, runs on the table as the
// ALTER left it, as MySQL prepares the statement again: the UPDATE takes
// effect (it matched nothing on the old plan after the copying ALTER), an
// INSERT with as many values as the old definition has columns gets 1136
// (it failed with a codec error), a transaction's first read returns the
// rows with the added column (it got 1412), and so do an EXECUTE of a
// statement PREPAREd in SQL, a procedure's UPDATE and a trigger's (they
// got 1412). A transaction that read another table before gets 1412.
func TestServerStalePlanAfterDDL(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO t VALUES (1, 10), (2, 10)",
		"CREATE TABLE other (id INT PRIMARY KEY)",
		"CREATE TABLE fired (id INT PRIMARY KEY)",
		"CREATE PROCEDURE pu() UPDATE t SET v = 7",
		"CREATE TRIGGER tr AFTER INSERT ON fired FOR EACH ROW UPDATE t SET v = 8",
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	var conns [3]*sql.Conn
	for i := range conns {
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		defer c.Close()
		conns[i] = c
	}
	holder, alter, writer := conns[0], conns[1], conns[2]
	local := s.store.NewEngine()
	pending := func(mode string) func() bool {
		return func() bool {
			rows, err := sqltest.Query(local, s.store.NewContext(ctx, "main"), "SELECT COUNT(*) FROM performance_schema.metadata_locks WHERE OBJECT_NAME = 't' AND LOCK_TYPE = '"+mode+"' AND LOCK_STATUS = 'PENDING'")
			require.NoError(t, err)
			return rows[0][0] == int64(1)
		}
	}
	const columns = -1 // a read: the number of columns it returned
	for i, tc := range []struct {
		before []string
		stmt   string
		mode   string // the lock stmt waits for
		errNum uint16
		sum    int // SUM(v) afterwards; for a read, its column count
	}{
		{nil, "UPDATE t SET v = 5", "SHARED_WRITE", 0, 10},
		{nil, "INSERT INTO t VALUES (9, 9, 9)", "SHARED_WRITE", 1136, 10}, // t (id, v, c0)
		{[]string{"BEGIN"}, "SELECT * FROM t", "SHARED_READ", 0, columns},
		{[]string{"BEGIN", "SELECT * FROM other"}, "SELECT * FROM t", "SHARED_READ", 1412, columns},
		{[]string{"PREPARE p FROM 'UPDATE t SET v = 6'"}, "EXECUTE p", "SHARED_WRITE", 0, 12},
		{nil, "CALL pu()", "SHARED_WRITE", 0, 14},
		{nil, "INSERT INTO fired VALUES (1)", "SHARED_WRITE", 0, 16},
	} {
		for _, q := range tc.before {
			_, err := writer.ExecContext(ctx, q)
			require.NoError(t, err, q)
		}
		_, err := holder.ExecContext(ctx, "BEGIN")
		require.NoError(t, err)
		require.Equal(t, []int{2}, connInts(t, holder, "SELECT COUNT(*) FROM t"))
		altered := make(chan error, 1)
		go func() {
			_, err := alter.ExecContext(ctx, fmt.Sprintf("ALTER TABLE t ADD COLUMN c%d INT", i))
			altered <- err
		}()
		waitFor(t, "the ALTER waiting for its metadata lock", pending("EXCLUSIVE"))
		type result struct {
			cols int
			err  error
		}
		ran := make(chan result, 1)
		go func() {
			if tc.sum != columns {
				_, err := writer.ExecContext(ctx, tc.stmt)
				ran <- result{0, err}
				return
			}
			rows, err := writer.QueryContext(ctx, tc.stmt)
			if err != nil {
				ran <- result{0, err}
				return
			}
			defer rows.Close()
			cols, err := rows.Columns()
			for err == nil && rows.Next() {
			}
			if err == nil {
				err = rows.Err()
			}
			ran <- result{len(cols), err}
		}()
		waitFor(t, "the statement waiting behind the ALTER", pending(tc.mode))
		_, err = holder.ExecContext(ctx, "COMMIT")
		require.NoError(t, err)
		require.NoError(t, <-altered)
		r := <-ran
		require.Equal(t, tc.errNum, mysqlNumber(r.err), "%s: %v", tc.stmt, r.err)
		if tc.sum == columns {
			if tc.errNum == 0 {
				require.Equal(t, 3+i, r.cols, "the read's columns: id, v, c0 ... c%d", i)
			}
			_, err := writer.ExecContext(ctx, "COMMIT")
			require.NoError(t, err)
			continue
		}
		require.Equal(t, []int{tc.sum}, queryInts(t, db, "SELECT SUM(v) FROM t"), tc.stmt)
	}
	require.Equal(t, []int{2}, queryInts(t, db, "SELECT COUNT(*) FROM t"))
}
