package server

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerHugeStringIsNull: a string function asked for a value past
// max_allowed_packet answers NULL with warning 1301, as MySQL does, over
// the wire. REPEAT('x', 3 GiB) took the whole process down with it
// ("fatal error: out of memory"). The connection and the server go on.
func TestServerHugeStringIsNull(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range []string{
		"SELECT REPEAT('x', 3221225472)",
		"SELECT SPACE(3221225472)",
		"SELECT LPAD('x', 3221225472, 'y')",
		"SELECT RPAD('x', 3221225472, 'y')",
		"SELECT CONCAT(REPEAT('x', 10000000), REPEAT('x', 10000000))",
	} {
		var v sql.NullString
		require.NoError(t, conn.QueryRowContext(ctx, q).Scan(&v), q)
		require.False(t, v.Valid, "%s: want NULL, got %d bytes", q, len(v.String))
		var level, msg string
		var code int
		require.NoError(t, conn.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg), q)
		require.Equal(t, 1301, code, "%s: %s", q, msg)
		require.Contains(t, msg, "max_allowed_packet", q)
	}
	var n int
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT LENGTH(REPEAT('x', 1000))").Scan(&n))
	require.Equal(t, 1000, n)
}

// TestServerMemoryQuota: a statement whose sort, grouping or window
// buffers more than strata_mem_quota_query fails with 3170 over the wire,
// the connection stays usable, and ORDER BY ... LIMIT over the same join
// keeps only its LIMIT rows and succeeds under the same quota.
func TestServerMemoryQuota(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	exec := func(q string) {
		t.Helper()
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	exec("CREATE TABLE h (id INT PRIMARY KEY, v INT)")
	var b strings.Builder
	b.WriteString("INSERT INTO h VALUES ")
	for i := range 300 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "(%d,%d)", i, (i*7919)%300)
	}
	exec(b.String())
	exec("SET strata_mem_quota_query = 1048576")
	for _, q := range []string{
		"SELECT a.id, b.id FROM h a, h b ORDER BY a.v * b.v",
		"SELECT a.id * 1000 + b.id AS g, COUNT(*) FROM h a, h b GROUP BY g",
		"SELECT SUM(a.id) OVER (ORDER BY a.v, b.v) FROM h a, h b",
	} {
		rows, err := conn.QueryContext(ctx, q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		require.Error(t, err, q)
		require.Equal(t, uint16(3170), mysqlNumber(err), "%s: %v", q, err)
	}
	var id int
	require.NoError(t, conn.QueryRowContext(ctx,
		"SELECT a.id FROM h a, h b ORDER BY a.v + b.v, a.id, b.id LIMIT 1").Scan(&id))
	require.Equal(t, 0, id)
}
