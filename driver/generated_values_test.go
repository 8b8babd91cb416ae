package driver_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedValuesPrepared: out of strict mode, the values that prepared
// INSERTs and UPDATEs bind for generated columns are ignored, execution
// after execution (the statement keeps its count of arguments, and its
// kept plan computes the columns); in strict mode they are refused with
// 3105, also by a statement prepared out of it.
func TestGeneratedValuesPrepared(t *testing.T) {
	db, _ := openDB(t)
	ctx := t.Context()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	exec := func(q string, args ...any) error {
		_, err := conn.ExecContext(ctx, q, args...)
		return err
	}
	require.NoError(t, exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL, s INT AS (a + 1) STORED)"))
	const insert = "INSERT INTO t (id, a, g) VALUES (?, ?, ?)"
	require.ErrorContains(t, exec(insert, 1, 1, 5), "errno 3105")

	require.NoError(t, exec("SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO'"))
	ins, err := conn.PrepareContext(ctx, insert)
	require.NoError(t, err)
	for i := 1; i <= 5; i++ {
		_, err = ins.ExecContext(ctx, i, i, 100)
		require.NoError(t, err)
	}
	for i := 6; i <= 8; i++ {
		require.NoError(t, exec(insert, i, i, 100))
	}
	var code int
	var level, msg string
	require.NoError(t, conn.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg))
	require.Equal(t, 1906, code)
	require.Equal(t, "The value specified for generated column 'g' in table 't' has been ignored", msg)
	upd, err := conn.PrepareContext(ctx, "UPDATE t SET g = ?, a = ? WHERE id = ?")
	require.NoError(t, err)
	for i := 1; i <= 4; i++ {
		_, err = upd.ExecContext(ctx, 7, i+10, i)
		require.NoError(t, err)
	}
	var n, big int
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT COUNT(*), SUM(a > 10) FROM t WHERE g = a * 2 AND s = a + 1").Scan(&n, &big))
	require.Equal(t, 8, n)
	require.Equal(t, 4, big)

	require.NoError(t, exec("SET sql_mode = DEFAULT"))
	_, err = ins.ExecContext(ctx, 20, 1, 100)
	require.ErrorContains(t, err, "errno 3105")
	require.NoError(t, ins.Close())
	require.NoError(t, upd.Close())
}
