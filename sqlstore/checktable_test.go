package sqlstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckTable: CHECK TABLE answers MySQL's result set: OK for sound
// tables (with secondary, unique, prefix and keyless indexes), MySQL's
// error for a missing table, and the problems and "Corrupt" when an index
// entry is missing, extra or names another row.
func TestCheckTable(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, a INT, s VARCHAR(20), g INT AS (a * 2) VIRTUAL, KEY ka (a), UNIQUE KEY us (s), KEY ks (s(3)), KEY kg (g))")
	d.exec("INSERT INTO t (id, a, s) VALUES (1, 10, 'alpha'), (2, 20, 'beta'), (3, NULL, NULL), (4, 10, 'gamma')")
	d.exec("CREATE TABLE k (a INT, b VARCHAR(5), KEY kb (b))")
	d.exec("INSERT INTO k VALUES (1, 'x'), (1, 'x'), (2, NULL)")
	d.exec("CREATE TABLE e (id INT PRIMARY KEY)")
	for _, q := range []string{"CHECK TABLE t, k", "check tables `t`, mydb.k EXTENDED;", "CHECK TABLE t QUICK FAST", "/* c */ CHECK TABLE e FOR UPGRADE"} {
		rows := d.exec(q)
		require.NotEmpty(t, rows, q)
		for _, r := range rows {
			require.Equal(t, "check", r[1], q)
			require.Equal(t, "status", r[2], "%s: %v", q, rows)
			require.Equal(t, "OK", r[3], q)
		}
	}
	require.Equal(t, "[[mydb.t check status OK] [mydb.nope check Error Table 'mydb.nope' doesn't exist] [mydb.nope check status Operation failed]]",
		fmt.Sprint(d.exec("CHECK TABLE t, nope")))

	// Damage the index: drop the entry of row 2 from ka and give row 1's
	// unique entry another row's key, behind the SQL layer's back.
	rt := d.s.beginTxn(true)
	v, ok, err := rt.get(catalogKey(kindTable, "mydb", "t"))
	require.NoError(t, err)
	require.True(t, ok)
	def, err := d.s.defs.get("mydb", v)
	require.NoError(t, err)
	rt.rollback()
	ka, us := def.index("ka"), def.index("us")
	pk := func(id int32) []byte {
		b, err := def.appendPK(nil, []any{id})
		require.NoError(t, err)
		return b
	}
	entry := func(ix *indexDef, row []any, id int32) (key, value []byte) {
		k, v, err := def.indexEntry(nil, ix, row, pk(id))
		require.NoError(t, err)
		return k, v
	}
	tx := d.s.beginTxn(false)
	k2, _ := entry(ka, []any{int32(2), int32(20), "beta", nil}, 2)
	require.NoError(t, tx.del(k2))
	k1, _ := entry(us, []any{int32(1), int32(10), "alpha", nil}, 1)
	require.NoError(t, tx.set(k1, pk(4)))
	require.NoError(t, tx.commit())
	rows := d.exec("CHECK TABLE t")
	require.Equal(t, fmt.Sprintf("[[mydb.t check Warning Index 'us' entry of row 0x%x names another row] [mydb.t check Warning Index 'ka' lacks the entry of row 0x%x] [mydb.t check Warning Index 'ka' contains 3 entries, should be 4.] [mydb.t check error Corrupt]]", pk(1), pk(2)),
		fmt.Sprint(rows))
}
