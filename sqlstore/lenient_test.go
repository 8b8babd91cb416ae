package sqlstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLenientPreparedWrites: out of strict mode, prepared INSERTs and
// UPDATEs run on kept plans (writetemplate.go, writedirect.go) store
// adjusted values with MySQL's warnings, each execution numbering its own
// rows from 1; in strict mode the same executions fail, and the kept plans
// follow the session's mode as it changes.
func TestLenientPreparedWrites(t *testing.T) {
	ctx := context.Background()
	d, _, c := directConn(t, txnPessimistic)
	_ = d
	ins, err := c.Prepare(ctx, "INSERT INTO t (id, k, c) VALUES (?, ?, ?)")
	require.NoError(t, err)
	defer ins.Close()
	upd, err := c.Prepare(ctx, "UPDATE t SET k = ?, c = ? WHERE id = ?")
	require.NoError(t, err)
	defer upd.Close()
	warnings := func() string {
		rows, err := c.Query(ctx, "SHOW WARNINGS")
		require.NoError(t, err)
		defer rows.Close()
		var out string
		for {
			row, err := rows.Next()
			if err != nil {
				break
			}
			out += fmt.Sprintln(row)
		}
		return out
	}
	long := "abcdefghijklmnopqrstuvwxyz"
	for mode := 0; mode < 2; mode++ {
		// Strict (the default): errors.
		_, err = ins.Exec(ctx, Arg{Ordinal: 1, Value: int64(1000 + mode)}, Arg{Ordinal: 2, Value: "abc"}, Arg{Ordinal: 3, Value: "x"})
		require.Equal(t, 1366, errNum(err), "%v", err)
		_, err = upd.Exec(ctx, Arg{Ordinal: 1, Value: int64(1)}, Arg{Ordinal: 2, Value: long}, Arg{Ordinal: 3, Value: int64(1)})
		require.Equal(t, 1406, errNum(err), "%v", err)
		// A blank string for a number, which GMS read as 0 without a word.
		_, err = ins.Exec(ctx, Arg{Ordinal: 1, Value: int64(1100 + mode)}, Arg{Ordinal: 2, Value: " "}, Arg{Ordinal: 3, Value: "x"})
		require.Equal(t, 1366, errNum(err), "%v", err)
		_, err = upd.Exec(ctx, Arg{Ordinal: 1, Value: ""}, Arg{Ordinal: 2, Value: "x"}, Arg{Ordinal: 3, Value: int64(1)})
		require.Equal(t, 1366, errNum(err), "%v", err)

		_, err = c.Exec(ctx, "SET sql_mode = ''")
		require.NoError(t, err)
		for i := 0; i < 3; i++ {
			id := int64(2000 + 10*mode + i)
			res, err := ins.Exec(ctx, Arg{Ordinal: 1, Value: id}, Arg{Ordinal: 2, Value: "12abc"}, Arg{Ordinal: 3, Value: long})
			require.NoError(t, err)
			require.EqualValues(t, 2, res.Warnings)
			require.Equal(t, "[Warning 1265 Data truncated for column 'k' at row 1]\n[Warning 1265 Data truncated for column 'c' at row 1]\n", warnings())
			res, err = upd.Exec(ctx, Arg{Ordinal: 1, Value: "x"}, Arg{Ordinal: 2, Value: long}, Arg{Ordinal: 3, Value: int64(3*mode + i)})
			require.NoError(t, err)
			require.Equal(t, "Rows matched: 1  Changed: 1  Warnings: 2", res.Info)
			require.Equal(t, "[Warning 1366 Incorrect integer value: 'x' for column 'k' at row 1]\n[Warning 1265 Data truncated for column 'c' at row 1]\n", warnings())
		}
		_, err = c.Exec(ctx, "SET sql_mode = DEFAULT")
		require.NoError(t, err)
	}
	rows, err := c.Query(ctx, "SELECT id, k, c FROM t WHERE id IN (0, 2000) ORDER BY id")
	require.NoError(t, err)
	defer rows.Close()
	var got string
	for {
		row, err := rows.Next()
		if err != nil {
			break
		}
		got += fmt.Sprint(row)
	}
	require.Equal(t, "[0 0 abcdefghijklmnopqrst][2000 12 abcdefghijklmnopqrst]", got)
}

func errNum(err error) int {
	if se := MySQLError(err); se != nil {
		return se.Num
	}
	return 0
}
