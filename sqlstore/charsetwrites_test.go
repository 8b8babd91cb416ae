package sqlstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
)

// TestCharsetWritesSpec runs testdata/charset_writes: text written to
// latin1, ascii and utf8mb3 columns that their character set cannot hold,
// in strict mode, out of it and with IGNORE, as text and prepared, on the
// planned and the kept paths ("run" and "kept" as in strict_writes).
func TestCharsetWritesSpec(t *testing.T) {
	runWritesSpec(t, "testdata/charset_writes")
}

// TestCharsetWritesParams: a parameter bound to a latin1 column is
// converted as a literal is, on the first run of a prepared INSERT or
// UPDATE and on the runs of its kept plan (the direct single-row path).
func TestCharsetWritesParams(t *testing.T) {
	c := openConn(t)
	ctx := context.Background()
	exec := func(q string, args ...sqlstore.Arg) {
		t.Helper()
		_, err := c.Exec(ctx, q, args...)
		require.NoError(t, err, q)
	}
	exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10) CHARACTER SET latin1, KEY (s))")
	ins, err := c.Prepare(ctx, "INSERT INTO t (id, s) VALUES (?, ?)")
	require.NoError(t, err)
	defer ins.Close()
	upd, err := c.Prepare(ctx, "UPDATE t SET s = ? WHERE id = ?")
	require.NoError(t, err)
	defer upd.Close()
	arg := func(i int, v any) sqlstore.Arg { return sqlstore.Arg{Ordinal: i, Value: v} }
	for run := range 3 {
		id := int64(run * 10)
		_, err := ins.Exec(ctx, arg(1, id), arg(2, "a中"))
		var se *mysql.SQLError
		require.ErrorAs(t, err, &se, "strict INSERT, run %d", run)
		require.Equal(t, mysql.ERTruncatedWrongValueForField, se.Num)
		require.Equal(t, `Incorrect string value: '\xE4\xB8\xAD' for column 's' at row 1`, se.Message)

		_, err = ins.Exec(ctx, arg(1, id), arg(2, "é"))
		require.NoError(t, err)
		_, err = upd.Exec(ctx, arg(1, "z中"), arg(2, id))
		require.ErrorAs(t, err, &se, "strict UPDATE, run %d", run)
		require.Equal(t, mysql.ERTruncatedWrongValueForField, se.Num)
	}
	exec("SET sql_mode = ''")
	for run := range 3 {
		id := int64(run*10 + 1)
		res, err := ins.Exec(ctx, arg(1, id), arg(2, "a中"))
		require.NoError(t, err)
		require.Equal(t, uint16(1), res.Warnings, "INSERT, run %d", run)
		res, err = upd.Exec(ctx, arg(1, "b中"), arg(2, int64(run*10)))
		require.NoError(t, err)
		require.Equal(t, uint16(1), res.Warnings, "UPDATE, run %d", run)
	}
	rows, err := c.Query(ctx, "SELECT GROUP_CONCAT(s ORDER BY id), HEX(GROUP_CONCAT(s ORDER BY id)) FROM t FORCE INDEX (s) WHERE s LIKE '%?'")
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, diagRows(&out, rows))
	require.Equal(t, "b?,a?,b?,a?,b?,a? 623F2C613F2C623F2C613F2C623F2C613F\n", out.String())
}
