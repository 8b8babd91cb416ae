package server

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

func TestSysbench(t *testing.T) {
	sysbench := needTool(t, "sysbench")
	s := testServer(t, Config{Password: "pw", MaxConnections: 20})
	host, port := hostPort(t, s.Addr())
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE DATABASE sbtest")
	require.NoError(t, err)
	common := []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=root", "--mysql-password=pw", "--mysql-db=sbtest", "--tables=2", "--table-size=500"}
	out, err := tool(t, "", sysbench, append(common, "prepare")...)
	require.NoError(t, err, out)
	out, err = tool(t, "", sysbench, append(common, "--threads=4", "--time=3", "run")...)
	require.NoError(t, err, out)
	require.Contains(t, out, "transactions:")
	require.NotContains(t, out, "FATAL")
	out, err = tool(t, "", sysbench, append(common, "cleanup")...)
	require.NoError(t, err, out)
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'").Scan(&n))
	require.Equal(t, 0, n)
}
