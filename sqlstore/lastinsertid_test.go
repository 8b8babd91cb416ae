package sqlstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLastInsertIDFromValue: an AUTO_INCREMENT value given as a string
// that is zero ('0', '00', ' 0'), or NULL, generates an id, and
// LAST_INSERT_ID reports it, as MySQL does, on every path: planned, the
// kept plan of a repeated text and a prepared statement run by key. Under
// NO_AUTO_VALUE_ON_ZERO '0' is stored as 0 and LAST_INSERT_ID is kept; a
// given id is not generated either.
func TestLastInsertIDFromValue(t *testing.T) {
	d := newTestDB(t)
	e := d.s.OpenEngine()
	t.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	for _, path := range []string{"planned", "kept", "prepared"} {
		t.Run(path, func(t *testing.T) {
			c := e.NewConn()
			defer c.Close()
			require.NoError(t, c.UseDatabase(ctx, "mydb"))
			tbl := "ai_" + path
			for _, q := range []string{
				"DROP TABLE IF EXISTS " + tbl,
				"CREATE TABLE " + tbl + " (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
			} {
				_, err := c.Exec(ctx, q)
				require.NoError(t, err, q)
			}
			if path == "planned" {
				_, err := c.Exec(ctx, "SET strata_plan_reuse = OFF")
				require.NoError(t, err)
			}
			insert := func(id any, v int) Result {
				t.Helper()
				var res Result
				var err error
				if path == "prepared" {
					res, err = c.Exec(ctx, "INSERT INTO "+tbl+" (id, v) VALUES (?, ?)", Arg{Ordinal: 1, Value: id}, Arg{Ordinal: 2, Value: int64(v)})
				} else {
					res, err = c.Exec(ctx, fmt.Sprintf("INSERT INTO %s (id, v) VALUES (%s, %d)", tbl, sqlLiteral(id), v))
				}
				require.NoError(t, err, "%v", id)
				return res
			}
			one := func(q string) string {
				t.Helper()
				rows := connRows(t, c, q)
				require.Len(t, rows, 1, q)
				return fmt.Sprint(rows[0][0])
			}
			// Several times each, so that the kept and direct paths run.
			last := "0"
			for i, id := range []any{nil, int64(0), "0", "00", nil, "0", int64(50), "0", int64(0), "0", " 0"} {
				res := insert(id, i)
				stored := one(fmt.Sprintf("SELECT id FROM %s WHERE v = %d", tbl, i))
				if id != int64(50) {
					last = stored
				}
				require.Equal(t, last, one("SELECT LAST_INSERT_ID()"), "%d: %#v", i, id)
				// The OK packet's id is the one stored, given or made
				// (mysql_insert_id).
				require.Equal(t, stored, fmt.Sprint(res.LastInsertID), "%d: %#v", i, id)
			}
			_, err := c.Exec(ctx, "SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO'")
			require.NoError(t, err)
			for i := range 3 {
				_, err := c.Exec(ctx, "DELETE FROM "+tbl+" WHERE id = 0")
				require.NoError(t, err)
				res := insert("0", 100+i)
				require.Equal(t, "0", one(fmt.Sprintf("SELECT id FROM %s WHERE v = %d", tbl, 100+i)))
				require.Equal(t, last, one("SELECT LAST_INSERT_ID()"), "%d", i)
				require.Equal(t, int64(0), res.LastInsertID, "%d", i)
			}
		})
	}
}
