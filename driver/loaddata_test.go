package driver_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// TestLoadDataLocal: with localInfile=true a connection loads a CSV file of
// the process with LOAD DATA LOCAL INFILE; without it, 3948.
func TestLoadDataLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.csv")
	require.NoError(t, os.WriteFile(path, []byte("1,\"a, b\"\n2,\"say \"\"hi\"\"\"\n"), 0o644))
	load := "LOAD DATA LOCAL INFILE '" + path + "' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'"

	plain, err := sql.Open("strata", filepath.Join(dir, "db")+"?db=mydb&sync=false")
	require.NoError(t, err)
	defer plain.Close()
	mustExec(t, plain, "SET GLOBAL local_infile = 0")
	mustExec(t, plain, "CREATE TABLE t (id INT PRIMARY KEY, s TEXT)")
	_, err = plain.Exec(load)
	var se *mysql.SQLError
	require.True(t, errors.As(err, &se), "%v", err)
	require.Equal(t, 3948, se.Num)

	local, err := sql.Open("strata", filepath.Join(dir, "db")+"?db=mydb&sync=false&localInfile=true")
	require.NoError(t, err)
	defer local.Close()
	defer mustExec(t, local, "SET GLOBAL local_infile = 0")
	res := mustExec(t, local, load)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	var s string
	require.NoError(t, local.QueryRow("SELECT s FROM t WHERE id = 2").Scan(&s))
	require.Equal(t, `say "hi"`, s)
}
