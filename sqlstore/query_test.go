package sqlstore

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// TestQueryRecoversEnginePanics: GMS v0.20.0 panics (a nil plan in its
// analyzer) on this EXECUTE of a prepared INSERT of a string that is not
// UTF-8, found by FuzzSQL.
// Through Query the statement fails with error 1105 and the session goes
// on.
func TestQueryRecoversEnginePanics(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(64))")
	d.exec("CREATE TABLE k (a INT, b VARCHAR(20), KEY kb (b))")
	run := func(q string) error {
		_, iter, err := Query(d.ctx, d.e, q, nil, nil)
		if err != nil {
			return err
		}
		_, err = sql.RowIterToRows(d.ctx, iter)
		return err
	}
	for _, q := range []string{
		"PREPARE s1 FROM 'SELECT id, s FROM t WHERE id = ?'",
		"SET @x = 3",
		"EXECUTE s1 USING @x",
		"PREPARE s2 FROM 'INSERT INTO k VALUES (?, ?)'",
		"SET @y = 'pr\xb4ep'", // not UTF-8
	} {
		require.NoError(t, run(q), q)
	}
	err := run("EXECUTE s2 USING @x, @y")
	var se *mysql.SQLError
	require.ErrorAs(t, err, &se)
	require.Equal(t, mysql.ERUnknownError, se.Number())
	require.Contains(t, err.Error(), "internal error in the SQL engine")
	require.NoError(t, run("INSERT INTO t VALUES (1, 'a')"))
	require.Len(t, d.exec("SELECT id FROM t"), 1)
}

// TestGuardedIterRecovers: a panic in a row iterator becomes its error.
func TestGuardedIterRecovers(t *testing.T) {
	g := &recoveringIter{RowIter: panicIter{}, query: "SELECT 1"}
	_, err := g.Next(sql.NewEmptyContext())
	var se *mysql.SQLError
	require.ErrorAs(t, err, &se)
	require.Equal(t, mysql.ERUnknownError, se.Number())
	require.Error(t, g.Close(sql.NewEmptyContext()))
}

type panicIter struct{}

func (panicIter) Next(*sql.Context) (sql.Row, error) { panic("boom") }
func (panicIter) Close(*sql.Context) error           { panic("boom") }
