package sqlstore

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"
)

// TestFailedCommitEndsTransaction: a COMMIT that fails (an optimistic
// transaction's conflict, 1213) rolls the transaction back and leaves the
// session outside any transaction, as in MySQL: the statements after it
// commit one by one, without a ROLLBACK first.
func TestFailedCommitEndsTransaction(t *testing.T) {
	d, a, b := twoSessions(t)
	optimistic(t, d, a, b)
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "UPDATE t SET v = v + 1 WHERE id = 1")
	run(t, d, b, "UPDATE t SET v = v + 100 WHERE id = 1")
	_, err := query(d.e, a, "COMMIT")
	requireConflict(t, err)
	require.False(t, a.GetIgnoreAutoCommit(), "the failed COMMIT left the session in its transaction")

	// A's later write commits on its own: another session sees it at once.
	run(t, d, a, "INSERT INTO t VALUES (3, 30)")
	require.Equal(t, []sql.Row{{int64(3)}}, run(t, d, b, "SELECT COUNT(*) FROM t"))
	// Nothing of the failed transaction was applied.
	require.Equal(t, []sql.Row{{int32(110)}}, run(t, d, b, "SELECT v FROM t WHERE id = 1"))

	// And a new explicit transaction still works as one.
	run(t, d, a, "BEGIN")
	run(t, d, a, "INSERT INTO t VALUES (4, 40)")
	require.Equal(t, []sql.Row{{int64(3)}}, run(t, d, b, "SELECT COUNT(*) FROM t"))
	run(t, d, a, "COMMIT")
	require.Equal(t, []sql.Row{{int64(4)}}, run(t, d, b, "SELECT COUNT(*) FROM t"))
}
