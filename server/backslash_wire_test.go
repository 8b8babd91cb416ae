package server

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBackslashLiteralWire: a string literal with \_ first in an
// executable comment keeps its backslash over the wire, in the text
// protocol and prepared, and the session (its open transaction) lives on.
// Reading the literal's position from the text panicked and reset the
// session (mysqlcompat/likeescapes.go).
func TestBackslashLiteralWire(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	db := client(t, s.Addr(), "root", "pw", "")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))",
		"BEGIN",
		"INSERT INTO t VALUES (1, 'a_b'), (2, 'axb')",
	} {
		_, err := conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	var got, got2 string
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT /*!50000 'a\_b' */, 'x\%'`).Scan(&got, &got2))
	require.Equal(t, []string{`a\_b`, `x\%`}, []string{got, got2})
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT /*!50000 'a\_b' */ AS x, ?`, "p").Scan(&got, &got2))
	require.Equal(t, []string{`a\_b`, "p"}, []string{got, got2})
	var n int
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM t WHERE s LIKE /*!50000 'a\_b' */`).Scan(&n))
	require.Equal(t, 1, n)
	// The transaction is still open: its rows go with ROLLBACK.
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	require.NoError(t, err)
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n))
	require.Equal(t, 0, n)
}
