package sqlstore_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
	"github.com/strata-db/strata/sqlstore/kvstore"
)

// openConn opens a store in a temporary folder and a connection in
// database mydb, closed at the end of the test.
func openConn(t *testing.T) *sqlstore.Conn {
	t.Helper()
	st, _, err := kvstore.Open(t.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(t, err)
	e := st.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() {
		require.NoError(t, c.Close())
		require.NoError(t, e.Close())
	})
	require.NoError(t, c.UseDatabase(context.Background(), "mydb"))
	return c
}

// allRows reads rows to the end with Next, copying each row.
func allRows(t *testing.T, rows *sqlstore.Rows) [][]any {
	t.Helper()
	var out [][]any
	for {
		vals, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		out = append(out, append([]any(nil), vals...))
	}
	require.NoError(t, rows.Close())
	return out
}

func TestConnExecQuery(t *testing.T) {
	ctx := context.Background()
	c := openConn(t)
	_, err := c.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, d DECIMAL(6,2), s VARCHAR(20), b VARBINARY(8), ts DATETIME)")
	require.NoError(t, err)

	// Several statements: affected rows add up, the last insert ID stays.
	res, err := c.Exec(ctx, "INSERT INTO t (d, s) VALUES (1.5, 'a'); INSERT INTO t (d, s, b) VALUES (2, '', x'00ff'), (NULL, NULL, NULL)")
	require.NoError(t, err)
	require.Equal(t, int64(3), res.RowsAffected)
	require.Equal(t, int64(2), res.LastInsertID)

	res, err = c.Exec(ctx, "UPDATE t SET s = 'z' WHERE id > 0")
	require.NoError(t, err)
	require.Equal(t, int64(3), res.RowsAffected)
	require.Equal(t, "Rows matched: 3  Changed: 3  Warnings: 0", res.Info)

	when := time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC)
	res, err = c.Exec(ctx, "UPDATE t SET ts = ?, d = ?, b = ? WHERE id = ?",
		sqlstore.Arg{Ordinal: 1, Value: when}, sqlstore.Arg{Ordinal: 2, Value: decimal.RequireFromString("7.25")},
		sqlstore.Arg{Ordinal: 3, Value: []byte("hi")}, sqlstore.Arg{Ordinal: 4, Value: int64(1)})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.RowsAffected)

	rows, err := c.Query(ctx, "SELECT id, d, s, b, ts FROM t ORDER BY id")
	require.NoError(t, err)
	cols := rows.Columns()
	require.Len(t, cols, 5)
	require.Equal(t, sqlstore.Column{Name: "id", TypeName: "INT", ScanType: reflect.TypeFor[int64](), Numeric: true}, cols[0])
	require.Equal(t, "DECIMAL", cols[1].TypeName)
	require.Equal(t, [2]int64{6, 2}, [2]int64{cols[1].Precision, cols[1].Scale})
	require.True(t, cols[1].Numeric && cols[1].Nullable)
	require.Equal(t, int64(20), cols[2].Length)
	require.Equal(t, reflect.TypeFor[string](), cols[2].ScanType)
	require.True(t, cols[3].Binary)
	require.Equal(t, int64(8), cols[3].Length)
	require.Equal(t, reflect.TypeFor[time.Time](), cols[4].ScanType)
	require.Equal(t, [][]any{
		{int64(1), "7.25", "z", []byte("hi"), when},
		{int64(2), "2.00", "z", []byte{0, 0xff}, nil},
		{int64(3), nil, "z", nil, nil},
	}, allRows(t, rows))

	// The text form tells NULL (nil) from the empty string.
	_, err = c.Exec(ctx, "UPDATE t SET s = '' WHERE id = 2")
	require.NoError(t, err)
	rows, err = c.Query(ctx, "SELECT s, d FROM t WHERE id >= 2 ORDER BY id")
	require.NoError(t, err)
	row, err := rows.NextText()
	require.NoError(t, err)
	require.Equal(t, [][]byte{{}, []byte("2.00")}, row)
	row, err = rows.NextText()
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("z"), nil}, row)
	_, err = rows.NextText()
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, rows.Close())

	// A statement without rows: no columns, its result in Result.
	rows, err = c.Query(ctx, "DELETE FROM t WHERE id = 3")
	require.NoError(t, err)
	require.Zero(t, rows.NumColumns())
	require.Empty(t, allRows(t, rows))
	require.Equal(t, int64(1), rows.Result().RowsAffected)
}

func TestConnPrepare(t *testing.T) {
	ctx := context.Background()
	c := openConn(t)
	_, err := c.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	require.NoError(t, err)
	_, err = c.Exec(ctx, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
	require.NoError(t, err)

	_, err = c.Prepare(ctx, "SELECT v FROM missing WHERE id = ?")
	require.Error(t, err, "an unknown table is reported at Prepare")

	st, err := c.Prepare(ctx, "SELECT v FROM t WHERE id = ?")
	require.NoError(t, err)
	require.Equal(t, 1, st.NumInput())
	for i := int64(1); i <= 3; i++ {
		for range 3 { // later executions reuse the plan
			rows, err := st.Query(ctx, sqlstore.Arg{Ordinal: 1, Value: i})
			require.NoError(t, err)
			require.Equal(t, [][]any{{i * 10}}, allRows(t, rows))
		}
	}
	require.NoError(t, st.Close())
	_, err = st.Query(ctx, sqlstore.Arg{Ordinal: 1, Value: int64(1)})
	require.ErrorIs(t, err, sqlstore.ErrConnClosed)

	ins, err := c.Prepare(ctx, "INSERT INTO t VALUES (:id, :v)")
	require.NoError(t, err)
	res, err := ins.Exec(ctx, sqlstore.Arg{Name: "id", Value: int64(4)}, sqlstore.Arg{Name: "v", Value: uint64(40)})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.RowsAffected)
	require.NoError(t, ins.Close())
}

// A failed autocommit statement leaves nothing, and a transaction goes on
// past a failed statement.
func TestConnAbortAndTransactions(t *testing.T) {
	ctx := context.Background()
	c := openConn(t)
	_, err := c.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY)")
	require.NoError(t, err)
	require.True(t, c.Autocommitting(ctx))
	require.False(t, c.HoldsTransaction())

	_, err = c.Exec(ctx, "INSERT INTO t VALUES (1), (2), (1)")
	require.Error(t, err)
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM t")
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(0)}}, allRows(t, rows))

	_, err = c.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	require.False(t, c.Autocommitting(ctx))
	require.True(t, c.HoldsTransaction())
	_, err = c.Exec(ctx, "INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	_, err = c.Exec(ctx, "INSERT INTO t VALUES (2), (1)")
	require.Error(t, err)
	_, err = c.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	rows, err = c.Query(ctx, "SELECT id FROM t")
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1)}}, allRows(t, rows))
}

// A cancelled context stops a running statement with its error.
func TestConnCancel(t *testing.T) {
	c := openConn(t)
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(50*time.Millisecond, cancel)
	defer timer.Stop()
	// A sleep far longer than any test: it ends with context.Canceled only
	// if the cancel stopped it.
	_, err := c.Exec(ctx, "SELECT SLEEP(60)")
	require.ErrorIs(t, err, context.Canceled)
	rows, err := c.Query(context.Background(), "SELECT 1")
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(1)}}, allRows(t, rows))
}

// TestConnRowsWidenedInts: narrow integer columns come out of Next as
// int64 (unsigned ones too), and a value kept from an earlier row keeps its
// value while later rows are read.
func TestConnRowsWidenedInts(t *testing.T) {
	c := openConn(t)
	ctx := context.Background()
	_, err := c.Exec(ctx, "CREATE TABLE n (id INT PRIMARY KEY, a TINYINT, b SMALLINT UNSIGNED, m MEDIUMINT, u INT UNSIGNED, y YEAR, e ENUM('x','y'), big BIGINT)")
	require.NoError(t, err)
	_, err = c.Exec(ctx, "INSERT INTO n VALUES (1, -5, 65535, -8388608, 4294967295, 2024, 'y', 7), (2, 127, 0, 8388607, 0, 1999, 'x', -7), (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
	require.NoError(t, err)
	rows, err := c.Query(ctx, "SELECT * FROM n ORDER BY id")
	require.NoError(t, err)
	require.Equal(t, [][]any{
		{int64(1), int64(-5), int64(65535), int64(-8388608), int64(4294967295), int64(2024), "y", int64(7)},
		{int64(2), int64(127), int64(0), int64(8388607), int64(0), int64(1999), "x", int64(-7)},
		{int64(3), nil, nil, nil, nil, nil, nil, nil},
	}, allRows(t, rows))
}
