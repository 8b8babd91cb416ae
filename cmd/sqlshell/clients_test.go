package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server/servertest"
)

// Real MySQL clients against the server. They need Debian's mariadb-client
// and sysbench packages; without them the tests skip (servertest.NeedTool).

func TestMariaDBClients(t *testing.T) {
	mariadb := servertest.NeedTool(t, "mariadb")
	dump := servertest.NeedTool(t, "mariadb-dump")
	admin := servertest.NeedTool(t, "mariadb-admin")
	s := testServer(t, "pw")
	host, port := servertest.HostPort(t, s.Addr())
	conn := []string{"-h", host, "-P", port, "-uroot", "-ppw"}

	out, err := servertest.Tool(t, "", admin, append(conn, "ping")...)
	require.NoError(t, err, out)
	require.Contains(t, out, "mysqld is alive")

	script := `CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL, price DECIMAL(6,2), added DATETIME, KEY by_name (name));
INSERT INTO items (name, price, added) VALUES ('pen', 1.50, '2024-01-02 03:04:05'), ('it''s', NULL, NULL), ('bag', 30, NOW());
START TRANSACTION;
UPDATE items SET price = 2 WHERE name = 'pen';
COMMIT;
SELECT id, name, price FROM items ORDER BY id;
`
	out, err = servertest.Tool(t, script, mariadb, append(conn, "--batch", "main")...)
	require.NoError(t, err, out)
	require.Equal(t, "id\tname\tprice\n1\tpen\t2.00\n2\tit's\tNULL\n3\tbag\t30.00\n", out)

	// SQL-level PREPARE answers with a short info text, which once made
	// the packet malformed for this client (2027).
	out, err = servertest.Tool(t, "", mariadb, append(conn, "--batch", "main", "-e", "PREPARE p FROM 'SELECT 7'; EXECUTE p; DEALLOCATE PREPARE p")...)
	require.NoError(t, err, out)
	require.Equal(t, "7\n7\n", out)

	out, err = servertest.Tool(t, "", mariadb, append(conn, "main", "-e", "SELECT * FROM nope")...)
	require.Error(t, err)
	require.Contains(t, out, "ERROR 1146 (42S02)")
	out, err = servertest.Tool(t, "", mariadb, "-h", host, "-P", port, "-uroot", "-pwrong", "-e", "SELECT 1")
	require.Error(t, err)
	require.Contains(t, out, "ERROR 1045 (28000)")

	// Dump, restore into another database of the server and into a new
	// folder through the shell, and compare.
	dumped, err := servertest.Tool(t, "", dump, append(conn, "main")...)
	require.NoError(t, err, dumped)
	require.Contains(t, dumped, "CREATE TABLE `items`")
	out, err = servertest.Tool(t, "", mariadb, append(conn, "-e", "CREATE DATABASE restored")...)
	require.NoError(t, err, out)
	out, err = servertest.Tool(t, dumped, mariadb, append(conn, "restored")...)
	require.NoError(t, err, out)
	want, err := servertest.Tool(t, "", mariadb, append(conn, "--batch", "main", "-e", "SELECT * FROM items ORDER BY id")...)
	require.NoError(t, err, want)
	got, err := servertest.Tool(t, "", mariadb, append(conn, "--batch", "restored", "-e", "SELECT * FROM items ORDER BY id")...)
	require.NoError(t, err, got)
	require.Equal(t, want, got)

	shellDir := t.TempDir()
	res := runShell(t, dumped, "--data", shellDir)
	require.Contains(t, res, "-- exit 0 --", res)
	res = runShell(t, "", "--data", shellDir, "-e", "SELECT * FROM items ORDER BY id")
	require.Equal(t, want+"-- stderr --\n-- exit 0 --\n", res)
}
