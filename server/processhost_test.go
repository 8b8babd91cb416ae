package server

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerProcessListHost: SHOW PROCESSLIST and
// information_schema.PROCESSLIST show where each client connects from
// (host:port), not the host of its account ('%'), also after USE (COM_INIT_DB)
// and a connection reset; and an account of host '%' still has its
// privileges.
func TestServerProcessListHost(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	_, err := root.Exec("CREATE USER 'u'@'%' IDENTIFIED BY 'upw'")
	require.NoError(t, err)
	_, err = root.Exec("GRANT SELECT ON main.* TO 'u'@'%'")
	require.NoError(t, err)
	_, err = root.Exec("GRANT PROCESS ON *.* TO 'u'@'%'") // GMS asks it even for one's own connection
	require.NoError(t, err)

	db := client(t, s.Addr(), "u", "upw", "")
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()
	var id int64
	require.NoError(t, conn.QueryRowContext(t.Context(), "SELECT CONNECTION_ID()").Scan(&id))
	// host returns the Host of this connection's row of q's result.
	host := func(q string) string {
		t.Helper()
		rows, err := conn.QueryContext(t.Context(), q)
		require.NoError(t, err)
		defer rows.Close()
		cols, err := rows.Columns()
		require.NoError(t, err)
		var h string
		idCol := -1
		for i, c := range cols {
			if strings.EqualFold(c, "id") {
				idCol = i
			}
		}
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			if idCol >= 0 && vals[idCol].String != strconv.FormatInt(id, 10) {
				continue
			}
			for i, c := range cols {
				if strings.EqualFold(c, "host") {
					h = vals[i].String
				}
			}
		}
		require.NoError(t, rows.Err())
		return h
	}
	local := host("SHOW PROCESSLIST")
	require.True(t, strings.HasPrefix(local, "127.0.0.1:"), "Host %q", local)
	var fromSchema string
	require.NoError(t, root.QueryRow("SELECT host FROM information_schema.processlist WHERE id = ?", id).Scan(&fromSchema))
	require.Equal(t, local, fromSchema)
	_, err = conn.ExecContext(t.Context(), "USE main")
	require.NoError(t, err)
	require.Equal(t, local, host("SHOW PROCESSLIST"))
	// The account's privileges are looked up by its host as before.
	var n int
	require.NoError(t, conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM information_schema.tables").Scan(&n))
	_, err = conn.ExecContext(t.Context(), "CREATE TABLE main.x (id INT)")
	require.Equal(t, uint16(1142), mysqlNumber(err), "%v", err)
}
