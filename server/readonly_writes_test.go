package server

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerReadOnlyKeptWrites: prepared UPDATEs and DELETEs by key, and
// single-row INSERTs prepared or as text, that run on kept plans are
// refused under read_only (1290) as planned ones are, also after
// executions that wrote.
func TestServerReadOnlyKeptWrites(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root,
		"CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL)",
		"INSERT INTO t VALUES (1, 0), (2, 0), (3, 0)",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'upw'",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON main.* TO 'u'@'%'",
	)
	u := client(t, s.Addr(), "u", "upw", "")
	u.SetMaxOpenConns(1)
	up, err := u.Prepare("UPDATE t SET k = k + 1 WHERE id = ?")
	require.NoError(t, err)
	defer up.Close()
	del, err := u.Prepare("DELETE FROM t WHERE id = ?")
	require.NoError(t, err)
	defer del.Close()
	for range 4 {
		_, err := up.Exec(1)
		require.NoError(t, err)
	}
	_, err = del.Exec(3)
	require.NoError(t, err)
	ins, err := u.Prepare("INSERT INTO t VALUES (?, ?)")
	require.NoError(t, err)
	defer ins.Close()
	for i := range 4 {
		_, err := ins.Exec(10+i, 0)
		require.NoError(t, err)
		_, err = u.Exec(fmt.Sprintf("INSERT INTO t VALUES (%d, 0)", 20+i))
		require.NoError(t, err)
	}
	execAll(t, root, "SET GLOBAL read_only = ON")
	_, err = ins.Exec(30, 0)
	require.Equal(t, uint16(1290), mysqlNumber(err), "%v", err)
	_, err = u.Exec("INSERT INTO t VALUES (31, 0)")
	require.Equal(t, uint16(1290), mysqlNumber(err), "%v", err)
	_, err = up.Exec(1)
	require.Equal(t, uint16(1290), mysqlNumber(err), "%v", err)
	_, err = del.Exec(2)
	require.Equal(t, uint16(1290), mysqlNumber(err), "%v", err)
	execAll(t, root, "SET GLOBAL read_only = OFF")
	require.Equal(t, []int{4, 0, 0, 0, 0, 0, 0, 0, 0, 0}, queryInts(t, root, "SELECT k FROM t ORDER BY id"))
}
