package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/server/servertest"
)

// TestServerLoadDataLocal: the mariadb client loads a CSV file of its own
// with LOAD DATA LOCAL INFILE (quoted fields holding commas, doubled
// quotes and newlines); with local_infile off the server refuses with
// MySQL's 3948.
func TestServerLoadDataLocal(t *testing.T) {
	mariadb := servertest.NeedTool(t, "mariadb")
	s := testServer(t, Config{Password: "pw"})
	host, port := servertest.HostPort(t, s.Addr())
	path := filepath.Join(t.TempDir(), "client rows.csv")
	require.NoError(t, os.WriteFile(path, []byte("id,s\n1,\"a, b\"\n2,\"say \"\"hi\"\"\"\n3,\"two\nlines\"\n4,\\N\n"), 0o644))
	conn := []string{"-h", host, "-P", port, "-uroot", "-ppw", "--batch", "--skip-column-names", "--local-infile=1", "main"}
	load := "LOAD DATA LOCAL INFILE '" + path + "' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' IGNORE 1 LINES;\n"

	out, err := servertest.Tool(t, "SET GLOBAL local_infile = 0;\nCREATE TABLE t (id INT PRIMARY KEY, s TEXT);\n"+load, mariadb, conn...)
	require.Error(t, err)
	require.Contains(t, out, "ERROR 3948 (42000)", out)
	require.Contains(t, out, "Loading local data is disabled; this must be enabled on both the client and server sides")

	out, err = servertest.Tool(t, "SET GLOBAL local_infile = 1;\n"+load+"SELECT id, REPLACE(COALESCE(s, 'NULL'), '\\n', '|') FROM t ORDER BY id;\nSET GLOBAL local_infile = 0;\n", mariadb, conn...)
	require.NoError(t, err, out)
	require.Equal(t, "1\ta, b\n2\tsay \"hi\"\n3\ttwo|lines\n4\tNULL", strings.TrimSpace(out))
}
