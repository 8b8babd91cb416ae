package sqlstore

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// TestDeleteAllInTransaction: GMS runs DELETE without WHERE as a table
// truncation; inside a transaction it must delete the rows and index
// entries within that transaction, visible to it, undone by ROLLBACK and
// kept by COMMIT, while TRUNCATE still empties the table.
func TestDeleteAllInTransaction(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY kv (v))")
	d.exec("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
	count := func() int64 {
		rows := d.exec("SELECT COUNT(*) FROM t")
		return rows[0][0].(int64)
	}

	d.exec("BEGIN")
	d.exec("DELETE FROM t")
	require.EqualValues(t, 0, count(), "the transaction sees its delete")
	d.exec("ROLLBACK")
	require.EqualValues(t, 3, count(), "ROLLBACK undoes it")

	d.exec("SET autocommit = 0")
	d.exec("DELETE FROM t")
	d.exec("INSERT INTO t VALUES (4, 40)")
	d.exec("COMMIT")
	d.exec("SET autocommit = 1")
	require.EqualValues(t, 1, count())
	require.Equal(t, []sql.Row{{int32(4), int32(40)}}, d.exec("SELECT * FROM t WHERE v = 40"))
	require.Empty(t, d.exec("SELECT * FROM t WHERE v = 10"), "index entries went with the rows")
	d.reopen()
	require.EqualValues(t, 1, count())

	d.exec("TRUNCATE t")
	require.EqualValues(t, 0, count())
	require.True(t, isTruncateStatement("  /* x */ TRUNCATE TABLE t"))
	require.False(t, isTruncateStatement("DELETE FROM t"))
}
