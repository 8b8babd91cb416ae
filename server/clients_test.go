package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server/servertest"
)

// Real MySQL clients against the server. They need Debian's mariadb-client
// and sysbench packages; without them the tests skip (servertest.NeedTool).

func TestSysbench(t *testing.T) {
	sysbench := servertest.NeedTool(t, "sysbench")
	s := testServer(t, Config{Password: "pw", MaxConnections: 20})
	host, port := servertest.HostPort(t, s.Addr())
	db := client(t, s.Addr(), "root", "pw", "")
	_, err := db.Exec("CREATE DATABASE sbtest")
	require.NoError(t, err)
	common := []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=root", "--mysql-password=pw", "--mysql-db=sbtest", "--tables=2", "--table-size=500"}
	out, err := servertest.Tool(t, "", sysbench, append(common, "prepare")...)
	require.NoError(t, err, out)
	out, err = servertest.Tool(t, "", sysbench, append(common, "--threads=4", "--time=3", "run")...)
	require.NoError(t, err, out)
	require.Contains(t, out, "transactions:")
	require.NotContains(t, out, "FATAL")
	out, err = servertest.Tool(t, "", sysbench, append(common, "cleanup")...)
	require.NoError(t, err, out)
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'").Scan(&n))
	require.Equal(t, 0, n)
}
