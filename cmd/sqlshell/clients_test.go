package main

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Real MySQL clients against the server. They need Debian's mariadb-client
// and sysbench packages; without them the tests skip.

func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (apt-get install -y mariadb-client sysbench)", name)
	}
	return p
}

func hostPort(t *testing.T, addr string) (string, string) {
	h, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	return h, p
}

// tool runs a client program and returns its output; stdin may be empty.
func tool(t *testing.T, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestMariaDBClients(t *testing.T) {
	mariadb := needTool(t, "mariadb")
	dump := needTool(t, "mariadb-dump")
	admin := needTool(t, "mariadb-admin")
	s := testServer(t, "pw")
	host, port := hostPort(t, s.Addr())
	conn := []string{"-h", host, "-P", port, "-uroot", "-ppw"}

	out, err := tool(t, "", admin, append(conn, "ping")...)
	require.NoError(t, err, out)
	require.Contains(t, out, "mysqld is alive")

	script := `CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL, price DECIMAL(6,2), added DATETIME, KEY by_name (name));
INSERT INTO items (name, price, added) VALUES ('pen', 1.50, '2024-01-02 03:04:05'), ('it''s', NULL, NULL), ('bag', 30, NOW());
START TRANSACTION;
UPDATE items SET price = 2 WHERE name = 'pen';
COMMIT;
SELECT id, name, price FROM items ORDER BY id;
`
	out, err = tool(t, script, mariadb, append(conn, "--batch", "main")...)
	require.NoError(t, err, out)
	require.Equal(t, "id\tname\tprice\n1\tpen\t2.00\n2\tit's\tNULL\n3\tbag\t30.00\n", out)

	// SQL-level PREPARE answers with a short info text, which once made
	// the packet malformed for this client (2027).
	out, err = tool(t, "", mariadb, append(conn, "--batch", "main", "-e", "PREPARE p FROM 'SELECT 7'; EXECUTE p; DEALLOCATE PREPARE p")...)
	require.NoError(t, err, out)
	require.Equal(t, "7\n7\n", out)

	out, err = tool(t, "", mariadb, append(conn, "main", "-e", "SELECT * FROM nope")...)
	require.Error(t, err)
	require.Contains(t, out, "ERROR 1146 (42S02)")
	out, err = tool(t, "", mariadb, "-h", host, "-P", port, "-uroot", "-pwrong", "-e", "SELECT 1")
	require.Error(t, err)
	require.Contains(t, out, "ERROR 1045 (28000)")

	// Dump, restore into another database of the server and into a new
	// folder through the shell, and compare.
	dumped, err := tool(t, "", dump, append(conn, "main")...)
	require.NoError(t, err, dumped)
	require.Contains(t, dumped, "CREATE TABLE `items`")
	out, err = tool(t, "", mariadb, append(conn, "-e", "CREATE DATABASE restored")...)
	require.NoError(t, err, out)
	out, err = tool(t, dumped, mariadb, append(conn, "restored")...)
	require.NoError(t, err, out)
	want, err := tool(t, "", mariadb, append(conn, "--batch", "main", "-e", "SELECT * FROM items ORDER BY id")...)
	require.NoError(t, err, want)
	got, err := tool(t, "", mariadb, append(conn, "--batch", "restored", "-e", "SELECT * FROM items ORDER BY id")...)
	require.NoError(t, err, got)
	require.Equal(t, want, got)

	shellDir := t.TempDir()
	res := runShell(t, dumped, "--data", shellDir)
	require.Contains(t, res, "-- exit 0 --", res)
	res = runShell(t, "", "--data", shellDir, "-e", "SELECT * FROM items ORDER BY id")
	require.Equal(t, want+"-- stderr --\n-- exit 0 --\n", res)
}
