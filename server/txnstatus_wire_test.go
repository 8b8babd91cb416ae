package server

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerTxnStatements: over the protocol, BEGIN, COMMIT and ROLLBACK
// leave ROW_COUNT() 0 and count Com_begin, Com_commit and Com_rollback,
// run often enough that the server's fast paths answer them.
func TestServerTxnStatements(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	status := func(name string) (n int64) {
		t.Helper()
		var v string
		require.NoError(t, conn.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE '"+name+"'").Scan(&v, &n))
		return n
	}
	begins, commits, rollbacks := status("Com_begin"), status("Com_commit"), status("Com_rollback")
	for run := range 6 {
		for _, q := range []string{"BEGIN", "COMMIT", "START TRANSACTION", "ROLLBACK"} {
			_, err := conn.ExecContext(ctx, q)
			require.NoError(t, err)
			var rc int64
			require.NoError(t, conn.QueryRowContext(ctx, "SELECT ROW_COUNT()").Scan(&rc))
			require.Zero(t, rc, "run %d: %s", run, q)
		}
	}
	require.Equal(t, begins+12, status("Com_begin"))
	require.Equal(t, commits+6, status("Com_commit"))
	require.Equal(t, rollbacks+6, status("Com_rollback"))
}
