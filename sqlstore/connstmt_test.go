package sqlstore

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStmtArgValuesReused: a statement's executions fill one map of
// arguments by name, so a kept plan's execution allocates none for it, and
// an execution sees none of the last one's arguments.
func TestStmtArgValuesReused(t *testing.T) {
	s := &Stmt{}
	named := []Arg{{Name: "id", Value: int64(1)}, {Name: "v", Value: int64(2)}}
	require.Equal(t, map[string]any{"id": int64(1), "v": int64(2)}, s.argValues(named))
	require.Equal(t, map[string]any{"id": int64(3)}, s.argValues([]Arg{{Name: "id", Value: int64(3)}}))

	pos := []Arg{{Ordinal: 1, Value: int64(7)}, {Ordinal: 2, Value: "x"}}
	require.Equal(t, map[string]any{"v1": int64(7), "v2": "x"}, s.argValues(pos))
	allocs := testing.AllocsPerRun(100, func() {
		pos[0].Value = int64(8) // boxed outside: an argument arrives as any
		s.argValues(pos)
	})
	require.Zero(t, allocs)
}

// TestResolvedContextQueryTime: a statement the plan cache runs starts
// with a query time of its own on the connection's reused context, except
// a constant SELECT, whose execution never reads it
// (Conn.resolvedContext); the statement after that one reads the clock
// again.
func TestResolvedContextQueryTime(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
	ctx := context.Background()
	require.NoError(t, c.UseDatabase(ctx, "qt"))
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, c INT)", "INSERT INTO t VALUES (1, 1), (2, 2)"} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err)
	}
	for i := range 3 {
		for _, tc := range []struct {
			query string
			clock bool
		}{
			{"SELECT 1", false},
			{"SELECT c FROM t WHERE id = 1", true},
			{"SELECT @@autocommit", false},
			{"SELECT c FROM t WHERE c > 0", true},
			{"UPDATE t SET c = 5 WHERE id = 2", true},
		} {
			if i == 0 { // learned by the plan cache
				rows, err := c.Query(ctx, tc.query)
				require.NoError(t, err)
				require.NoError(t, rows.Close())
				continue
			}
			require.True(t, c.resolve(ctx, tc.query, nil), tc.query)
			sctx := c.resolvedContext(ctx, tc.query)
			require.Equal(t, tc.clock, !sctx.QueryTime().IsZero(), "%s: query time %v", tc.query, sctx.QueryTime())
			_, iter, err := c.runResolved(sctx, tc.query)
			require.NoError(t, err)
			for err == nil {
				_, err = iter.Next(sctx)
			}
			require.ErrorIs(t, err, io.EOF)
			require.NoError(t, iter.Close(sctx))
			c.endContext(sctx)
		}
	}
}
