package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// registered counts the transactions in the store's lock registry.
func registered(d *testDB) int {
	d.s.locks.mu.Lock()
	defer d.s.locks.mu.Unlock()
	return len(d.s.locks.m)
}

// TestLockRegistryAtFirstLock: a pessimistic transaction enters the lock
// registry at its first lock, not as it begins (an autocommit read never
// does), and leaves it as it ends.
func TestLockRegistryAtFirstLock(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (7, 0)")
	ctx := lockSessions(t, d, 1)[0]
	_, err := lq(d, ctx, "SELECT * FROM t WHERE id = 7")
	require.NoError(t, err)
	require.Zero(t, registered(d), "an autocommit read")
	_, err = lq(d, ctx, "BEGIN")
	require.NoError(t, err)
	_, err = lq(d, ctx, "SELECT * FROM t WHERE id = 7")
	require.NoError(t, err)
	require.Zero(t, registered(d), "a transaction that has read")
	_, err = lq(d, ctx, "SELECT * FROM t WHERE id = 7 FOR UPDATE")
	require.NoError(t, err)
	require.Equal(t, 1, registered(d), "a transaction that has locked")
	_, err = lq(d, ctx, "UPDATE t SET v = 1 WHERE id = 7")
	require.NoError(t, err)
	require.Equal(t, 1, registered(d))
	_, err = lq(d, ctx, "COMMIT")
	require.NoError(t, err)
	require.Zero(t, registered(d), "after the commit")
	_, err = lq(d, ctx, "UPDATE t SET v = 2 WHERE id = 7")
	require.NoError(t, err)
	require.Zero(t, registered(d), "after an autocommit write")
}
