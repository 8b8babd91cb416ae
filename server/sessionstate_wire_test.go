package server

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerFailedCommitEndsTransaction: after a COMMIT that fails with
// 1213 (an optimistic transaction's conflict) the session is outside any
// transaction, as in MySQL: its next INSERT commits on its own, and another
// connection sees it without a COMMIT.
func TestServerFailedCommitEndsTransaction(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO c VALUES (1, 0)")
	require.NoError(t, err)

	ctx := context.Background()
	c1, err := db.Conn(ctx)
	require.NoError(t, err)
	defer c1.Close()
	for _, q := range []string{"SET strata_txn_mode = 'optimistic'", "BEGIN", "UPDATE c SET n = n + 1 WHERE id = 1"} {
		_, err = c1.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = db.Exec("UPDATE c SET n = n + 10 WHERE id = 1")
	require.NoError(t, err)
	_, err = c1.ExecContext(ctx, "COMMIT")
	require.Equal(t, uint16(1213), mysqlNumber(err), "%v", err)

	_, err = c1.ExecContext(ctx, "INSERT INTO c VALUES (2, 2)")
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, queryInts(t, db, "SELECT id FROM c ORDER BY id"))
	require.Equal(t, []int{10}, queryInts(t, db, "SELECT n FROM c WHERE id = 1"))
}
