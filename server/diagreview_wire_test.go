package server

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerReadOnlyStartReadWriteText: under read_only, whether START
// TRANSACTION is READ WRITE is told from the statement, not from text in
// it: the words split by white space or a comment are refused with 1290,
// comments and strings saying "read write" are not, and in a
// multi-statement text only the statement itself counts.
func TestServerReadOnlyStartReadWriteText(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY)",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT, INSERT ON main.* TO 'u'@'%'",
		"SET GLOBAL read_only = ON",
	)
	defer execAll(t, root, "SET GLOBAL read_only = OFF")
	for _, params := range []string{"", "multiStatements=true"} {
		u := client(t, s.Addr(), "u", "upw", params)
		u.SetMaxOpenConns(1)
		for _, tc := range []struct {
			query   string
			refused bool
		}{
			{"START TRANSACTION READ WRITE", true},
			{"START TRANSACTION READ  WRITE", true},
			{"START TRANSACTION READ\nWRITE", true},
			{"START TRANSACTION READ/**/WRITE", true},
			{"BEGIN /* read write */", false},
			{"START TRANSACTION /* read write */", false},
			{"START TRANSACTION READ ONLY /* read write */", false},
			{"BEGIN; SELECT 'read write'", false},
		} {
			if params == "" && tc.query == "BEGIN; SELECT 'read write'" {
				continue
			}
			for run := range 3 { // planned, then kept
				_, err := u.Exec(tc.query)
				if tc.refused {
					require.Equal(t, uint16(1290), mysqlNumber(err), "%s run %d %q: %v", params, run, tc.query, err)
				} else {
					require.NoError(t, err, "%s run %d %q", params, run, tc.query)
				}
				execAll(t, u, "ROLLBACK")
			}
		}
	}
}

// TestServerPrepareClearsDiagnostics: a COM_STMT_PREPARE that succeeds
// clears the previous statement's error from the area, as MySQL's does;
// one that fails leaves its own.
func TestServerPrepareClearsDiagnostics(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "CREATE TABLE a (i INT PRIMARY KEY)")
	require.NoError(t, err)
	count := func(q string) (n int64) {
		t.Helper()
		require.NoError(t, conn.QueryRowContext(ctx, q).Scan(&n))
		return n
	}
	for run := range 3 {
		_, err = conn.ExecContext(ctx, "SELECT * FROM nosuch")
		require.Error(t, err)
		st, err := conn.PrepareContext(ctx, "SELECT * FROM a WHERE i = ?")
		require.NoError(t, err)
		require.Zero(t, count("SHOW COUNT(*) WARNINGS"), "run %d", run)
		require.NoError(t, st.Close())

		_, err = conn.ExecContext(ctx, "SELECT * FROM nosuch")
		require.Error(t, err)
		_, err = conn.PrepareContext(ctx, "SELECT * FROM nosuch2 WHERE i = ?")
		require.Equal(t, uint16(1146), mysqlNumber(err))
		require.Equal(t, int64(1), count("SHOW COUNT(*) ERRORS"), "run %d", run)
	}
}
