package sqlstore_test

import (
	"context"
	"testing"

	"github.com/strata-db/strata/sqlstore"
	"github.com/stretchr/testify/require"
)

// TestExplainPrepared: a prepared EXPLAIN counts the placeholders of the
// statement it explains, and each execution explains it with its own
// arguments, in the form its text asks for.
func TestExplainPrepared(t *testing.T) {
	ctx := context.Background()
	c := openConn(t)
	_, err := c.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	require.NoError(t, err)
	_, err = c.Exec(ctx, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
	require.NoError(t, err)

	st, err := c.Prepare(ctx, "EXPLAIN SELECT v FROM t WHERE id IN (?, ?)")
	require.NoError(t, err)
	require.Equal(t, 2, st.NumInput())
	rows, err := st.Query(ctx, sqlstore.Arg{Ordinal: 1, Value: int64(1)}, sqlstore.Arg{Ordinal: 2, Value: int64(3)})
	require.NoError(t, err)
	got := allRows(t, rows)
	require.Len(t, got, 1)
	require.Equal(t, "range", got[0][4])
	require.Equal(t, "Strata: MultiGet(keys=2, batch=32)", got[0][11])
	require.NoError(t, st.Close())

	st, err = c.Prepare(ctx, "EXPLAIN ANALYZE SELECT v FROM t WHERE id = ?")
	require.NoError(t, err)
	require.Equal(t, 1, st.NumInput())
	rows, err = st.Query(ctx, sqlstore.Arg{Ordinal: 1, Value: int64(2)})
	require.NoError(t, err)
	got = allRows(t, rows)
	require.Len(t, got, 1)
	require.Contains(t, got[0][0], "-> Single-row index lookup on t using PRIMARY (id=2); Strata: Get(key=1)")
	require.Contains(t, got[0][0], "rows=1 loops=1)")
	require.NoError(t, st.Close())
}
