package server

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/stretchr/testify/require"
)

// TestFieldsCache: a result's column descriptions are kept for the same
// schema, and for another schema whose columns are described alike (a
// plan that makes its schema per execution); made again when a column is
// described otherwise or the character set of results changed.
func TestFieldsCache(t *testing.T) {
	ctx := gsql.NewEmptyContext()
	text := types.MustCreateStringWithDefaults(types.Text.Type(), 1000)
	s1 := gsql.Schema{{Name: "c", Source: "t", Type: text, Nullable: true}}
	s2 := gsql.Schema{{Name: "c", Source: "t", Type: text, Nullable: true}}

	var fc fieldsCache
	f1 := fc.of(ctx, s1)
	require.Equal(t, fieldsOf(ctx, s1), f1)
	require.Same(t, f1[0], fc.of(ctx, s1)[0], "the same schema: kept")
	require.Zero(t, testing.AllocsPerRun(100, func() { fc.of(ctx, s1) }))
	require.Same(t, f1[0], fc.of(ctx, s2)[0], "another schema of the same columns: kept")
	require.Zero(t, testing.AllocsPerRun(100, func() { fc.of(ctx, s2) }))

	for _, other := range []gsql.Schema{
		{{Name: "d", Source: "t", Type: text, Nullable: true}},
		{{Name: "c", Source: "u", Type: text, Nullable: true}},
		{{Name: "c", Source: "t", Type: text}},
		{{Name: "c", Source: "t", Type: types.MustCreateStringWithDefaults(sqltypes.VarChar, 20), Nullable: true}},
		{{Name: "c", Source: "t", Type: types.MustCreateStringWithDefaults(sqltypes.VarChar, 30), Nullable: true}},
		{{Name: "c", Source: "t", Type: types.LongBlob, Nullable: true}},
		{{Name: "c", Source: "t", Type: types.Int32, Nullable: true}},
		{{Name: "c", Source: "t", Type: types.Uint32, Nullable: true}},
		{{Name: "c", Source: "t", Type: types.MustCreateDecimalType(10, 2), Nullable: true}},
		{{Name: "c", Source: "t", Type: types.MustCreateDecimalType(10, 3), Nullable: true}},
		{{Name: "c", Source: "t", Type: types.DatetimeMaxPrecision, Nullable: true}},
		{{Name: "c", Source: "t", Type: text, Nullable: true}, {Name: "c", Source: "t", Type: text, Nullable: true}},
	} {
		before := fc.of(ctx, s1)
		got := fc.of(ctx, other)
		require.Equal(t, fieldsOf(ctx, other), got)
		require.NotSame(t, before[0], got[0], "%v: made again", other)
	}

	f2 := fc.of(ctx, s2)
	require.NoError(t, ctx.SetSessionVariable(ctx, "character_set_results", "latin1"))
	f3 := fc.of(ctx, s2)
	require.NotSame(t, f2[0], f3[0], "another character set of results: made again")
	require.Equal(t, fieldsOf(ctx, s2), f3)
	require.NotEqual(t, f2[0].ColumnLength, f3[0].ColumnLength)
	require.NotEqual(t, f2[0].Charset, f3[0].Charset)

	require.Len(t, fc.of(ctx, s1[:0]), 0)

	// A transaction's results in turn, each with a schema made per
	// execution (two sets of the same columns, alternated): all kept,
	// none described afresh.
	var kept fieldsCache
	dec := types.MustCreateDecimalType(32, 0)
	results := func() []gsql.Schema {
		return []gsql.Schema{
			{{Name: "c", Source: "t", Type: text, Nullable: true}},
			{{Name: "SUM(k)", Type: dec, Nullable: true}},
			{{Name: "id", Source: "t", Type: types.Int32, PrimaryKey: true}, {Name: "c", Source: "t", Type: text}},
		}
	}
	sets := [2][]gsql.Schema{results(), results()}
	n := 0
	turn := func() {
		n++
		for _, s := range sets[n%2] {
			kept.of(ctx, s)
		}
	}
	turn()
	require.Zero(t, testing.AllocsPerRun(100, turn))
	for i := range fieldsKept + 1 {
		kept.of(ctx, gsql.Schema{{Name: fmt.Sprint("x", i), Type: types.Int64}})
	}
	f4 := kept.of(ctx, s1)
	require.Equal(t, fieldsOf(ctx, s1), f4, "evicted, then described again")
}

// TestServerDirectFieldsFollowSession: the column descriptions of results
// on kept plans, kept per connection, follow character_set_results and
// the table's definition as those of planned statements do.
func TestServerDirectFieldsFollowSession(t *testing.T) {
	ctx := context.Background()
	s := testServer(t, Config{Data: t.TempDir(), Password: "pw"})
	root := client(t, s.Addr(), "root", "pw", "")
	execAll(t, root, "CREATE TABLE t (id INT PRIMARY KEY, c TEXT)", "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	cached, err := root.Conn(ctx)
	require.NoError(t, err)
	defer cached.Close()
	planned, err := root.Conn(ctx)
	require.NoError(t, err)
	defer planned.Close()
	_, err = planned.ExecContext(ctx, "SET strata_plan_reuse = OFF")
	require.NoError(t, err)

	check := func(step string) {
		t.Helper()
		for _, q := range []struct {
			text string
			args []any
		}{
			{"SELECT c FROM t WHERE id = ?", []any{1}},
			{"SELECT c FROM t WHERE id = 2", nil},
		} {
			for i := 0; i < 3; i++ {
				wantCols, want := describe(t)(planned.QueryContext(ctx, q.text, q.args...))
				gotCols, got := describe(t)(cached.QueryContext(ctx, q.text, q.args...))
				require.Equal(t, wantCols, gotCols, "%s: %s", step, q.text)
				require.Equal(t, want, got, "%s: %s", step, q.text)
			}
		}
	}
	check("utf8mb4")
	for _, c := range []*sql.Conn{cached, planned} {
		_, err := c.ExecContext(ctx, "SET character_set_results = latin1")
		require.NoError(t, err)
	}
	check("latin1")
	execAll(t, root, "ALTER TABLE t MODIFY c VARCHAR(20) NOT NULL")
	check("altered")
}
