package server

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/sqltest"
)

// TestServerStalePlanAfterDDL: over the wire, a write planned while an
// ALTER TABLE waited for another connection's transaction, and whose
// metadata lock then waited behind the ALTER, runs on the table as the
// ALTER left it, as MySQL prepares the statement again: the UPDATE takes
// effect (it matched nothing on the old plan after the copying ALTER), an
// INSERT with as many values as the old
// definition has columns gets 1136 (it failed with a codec
// error).
func TestServerStalePlanAfterDDL(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO t VALUES (1, 10), (2, 10)",
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
	for i, tc := range []struct {
		write  string
		errNum uint16
		sum    int // SUM(v) afterwards
	}{
		{"UPDATE t SET v = 5", 0, 10},
		{"INSERT INTO t VALUES (9, 9, 9)", 1136, 10}, // t (id, v, c0)
	} {
		_, err := holder.ExecContext(ctx, "BEGIN")
		require.NoError(t, err)
		require.Equal(t, []int{2}, connInts(t, holder, "SELECT COUNT(*) FROM t"))
		altered := make(chan error, 1)
		go func() {
			_, err := alter.ExecContext(ctx, fmt.Sprintf("ALTER TABLE t ADD COLUMN c%d INT", i))
			altered <- err
		}()
		waitFor(t, "the ALTER waiting for its metadata lock", pending("EXCLUSIVE"))
		wrote := make(chan error, 1)
		go func() {
			_, err := writer.ExecContext(ctx, tc.write)
			wrote <- err
		}()
		waitFor(t, "the write waiting behind the ALTER", pending("SHARED_WRITE"))
		_, err = holder.ExecContext(ctx, "COMMIT")
		require.NoError(t, err)
		require.NoError(t, <-altered)
		err = <-wrote
		require.Equal(t, tc.errNum, mysqlNumber(err), "%s: %v", tc.write, err)
		require.Equal(t, []int{tc.sum}, queryInts(t, db, "SELECT SUM(v) FROM t"))
	}
	require.Equal(t, []int{2}, queryInts(t, db, "SELECT COUNT(*) FROM t"))
}
