package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// TestDiagnosticsAskKeepsStatement: asking the connection whether a
// statement autocommits or runs optimistically (as RunWrite does between
// the runs of a write, after a conflict) starts no statement, so the
// statement's failure afterwards keeps its own warnings beside its error.
func TestDiagnosticsAskKeepsStatement(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	ctx := context.Background()
	for _, q := range []string{"USE mydb", "CREATE TABLE t (i TINYINT PRIMARY KEY)", "SET sql_mode = ''", "BEGIN", "INSERT INTO t VALUES (300)"} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	// The INSERT's warning is in the area, the INSERT's own: as when its
	// commit or its write lost a conflict and RunWrite asks.
	require.False(t, c.Autocommitting(ctx))
	_ = c.Optimistic(ctx)
	c.failed(mysql.NewSQLError(mysql.ERLockDeadlock, mysql.SSLockDeadlock, "Deadlock found when trying to get lock; try restarting transaction"))
	rows, err := c.Query(ctx, "SHOW WARNINGS")
	require.NoError(t, err)
	var got []string
	for {
		vals, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, fmt.Sprint(vals...))
	}
	require.NoError(t, rows.Close())
	require.Equal(t, []string{
		"Warning1264Out of range value for column 'i' at row 1",
		"Error1213Deadlock found when trying to get lock; try restarting transaction",
	}, got, strings.Join(got, "\n"))
}
