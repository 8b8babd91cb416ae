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

// TestServerReadOnlyStartReadWrite: under read_only, START TRANSACTION
// READ WRITE fails with 1290 for an account without CONNECTION_ADMIN or
// SUPER, as MySQL's does (planned, and again and again on the kept plan),
// while BEGIN and START TRANSACTION READ ONLY run; root may.
func TestServerReadOnlyStartReadWrite(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY)",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT, INSERT ON main.* TO 'u'@'%'",
	)
	u := client(t, s.Addr(), "u", "upw", "")
	u.SetMaxOpenConns(1)
	for range 4 { // kept before read_only is on
		execAll(t, u, "START TRANSACTION READ WRITE", "COMMIT")
	}
	execAll(t, root, "SET GLOBAL read_only = ON")
	defer execAll(t, root, "SET GLOBAL read_only = OFF")
	for run := range 4 {
		_, err := u.Exec("START TRANSACTION READ WRITE")
		require.Equal(t, uint16(1290), mysqlNumber(err), "run %d: %v", run, err)
		execAll(t, u, "BEGIN", "COMMIT", "START TRANSACTION READ ONLY", "COMMIT")
		execAll(t, root, "START TRANSACTION READ WRITE", "COMMIT")
	}
	execAll(t, root, "SET GLOBAL read_only = OFF")
	execAll(t, u, "START TRANSACTION READ WRITE", "INSERT INTO t VALUES (1)", "COMMIT")
}
