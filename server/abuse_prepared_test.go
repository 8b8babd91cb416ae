package server

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAbusePreparedStatements holds the prepared statements of all
// connections, by COM_STMT_PREPARE and by SQL PREPARE, under
// max_prepared_stmt_count as MySQL does: past it a prepare fails with
// 1461; deallocated and closed statements, and those of a closed
// connection, free their slots; statements still open keep working.
func TestAbusePreparedStatements(t *testing.T) {
	s := testServer(t, Config{Password: "pw"})
	ctx := context.Background()
	conn := func() *sql.Conn {
		db := client(t, s.Addr(), "root", "pw", "")
		db.SetMaxIdleConns(0) // closing a *sql.Conn closes its connection
		c, err := db.Conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	a, b := conn(), conn()

	var def int
	require.NoError(t, a.QueryRowContext(ctx, "SELECT @@global.max_prepared_stmt_count").Scan(&def))
	require.Equal(t, 16382, def, "MySQL's default")
	_, err := a.ExecContext(ctx, "SET GLOBAL max_prepared_stmt_count = 5")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = client(t, s.Addr(), "root", "pw", "").Exec(fmt.Sprintf("SET GLOBAL max_prepared_stmt_count = %d", def))
	})
	tooMany := func(err error) {
		t.Helper()
		require.Equal(t, uint16(1461), mysqlNumber(err), "%v", err)
		require.ErrorContains(t, err, "Can't create more than max_prepared_stmt_count statements (current value: 5)")
	}

	// Three by the protocol on a (two of the same text), two by SQL on b.
	var stmts []*sql.Stmt
	for _, q := range []string{"SELECT ? + 1", "SELECT ? + 2", "SELECT ? + 1"} {
		st, err := a.PrepareContext(ctx, q)
		require.NoError(t, err, q)
		stmts = append(stmts, st)
	}
	for _, q := range []string{"PREPARE s1 FROM 'SELECT 1'", "PREPARE s2 FROM 'SELECT 2'"} {
		_, err := b.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = a.PrepareContext(ctx, "SELECT ? + 3")
	tooMany(err)
	_, err = b.ExecContext(ctx, "PREPARE s3 FROM 'SELECT 3'")
	tooMany(err)
	_, err = b.ExecContext(ctx, "EXECUTE s3")
	require.Error(t, err, "the refused statement does not exist")
	_, err = b.ExecContext(ctx, "PREPARE s2 FROM 'SELECT 22'")
	require.NoError(t, err, "preparing a name again replaces its statement")

	// Deallocating frees a slot.
	_, err = b.ExecContext(ctx, "DEALLOCATE PREPARE s1")
	require.NoError(t, err)
	_, err = b.ExecContext(ctx, "PREPARE s3 FROM 'SELECT 3'")
	require.NoError(t, err)
	var n int
	require.NoError(t, b.QueryRowContext(ctx, "SELECT 1").Scan(&n), "statements not prepared run")
	_, err = b.ExecContext(ctx, "PREPARE s4 FROM 'SELECT 4'")
	tooMany(err)

	// Closing frees a slot; the other statement of the same text runs on.
	require.NoError(t, stmts[0].Close())
	st, err := a.PrepareContext(ctx, "SELECT ? + 4")
	require.NoError(t, err)
	require.NoError(t, st.QueryRowContext(ctx, 1).Scan(&n))
	require.Equal(t, 5, n)
	require.NoError(t, stmts[2].QueryRowContext(ctx, 1).Scan(&n))
	require.Equal(t, 2, n)

	// A closed connection frees its own.
	require.NoError(t, a.Close())
	waitFor(t, "the connection's statements are freed", func() bool {
		s.h.prepared.mu.Lock()
		defer s.h.prepared.mu.Unlock()
		return s.h.prepared.total == 2
	})
	for i := range 3 {
		_, err := b.ExecContext(ctx, fmt.Sprintf("PREPARE t%d FROM 'SELECT %d'", i, i))
		require.NoError(t, err)
	}
	_, err = b.ExecContext(ctx, "PREPARE t3 FROM 'SELECT 3'")
	tooMany(err)
	var v string
	require.NoError(t, b.QueryRowContext(ctx, "EXECUTE s2").Scan(&v))
	require.Equal(t, "22", v)
}
