package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWaitsNamesWaitingConnections: Store.Waits names the connection whose
// statement waits for a metadata lock, then the one waiting for a row
// lock, and nothing once the waits end.
func TestWaitsNamesWaitingConnections(t *testing.T) {
	d, a, b := twoSessions(t)
	bID := b.Session.ID()
	require.Empty(t, d.s.Waits())

	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "INSERT INTO t VALUES (3, 30)")
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, b, "ALTER TABLE t ADD COLUMN c INT")
		done <- err
	}()
	waitMDLQueued(d)
	require.Equal(t, map[uint32]Wait{bID: WaitMetadataLock}, d.s.Waits())
	run(t, d, a, "COMMIT")
	require.NoError(t, <-done)
	require.Empty(t, d.s.Waits())

	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "UPDATE t SET v = 11 WHERE id = 1")
	go func() {
		_, err := lq(d, b, "UPDATE t SET v = 12 WHERE id = 1")
		done <- err
	}()
	awaitLockWaiters(t, d, 1, done)
	require.Equal(t, map[uint32]Wait{bID: WaitRowLock}, d.s.Waits())
	run(t, d, a, "COMMIT")
	require.NoError(t, <-done)
	require.Empty(t, d.s.Waits())
}

// TestWaitState: the process list States of waits, as MySQL 8 names them.
func TestWaitState(t *testing.T) {
	for _, tc := range []struct {
		w     Wait
		query string
		state string
	}{
		{WaitMetadataLock, "ALTER TABLE t ADD COLUMN c INT", "Waiting for table metadata lock"},
		{WaitMetadataLock, "SELECT * FROM t", "Waiting for table metadata lock"},
		{WaitRowLock, "UPDATE t SET v = 1", "updating"},
		{WaitRowLock, " /* c */ delete FROM t", "updating"},
		{WaitRowLock, "INSERT INTO t VALUES (1)", "update"},
		{WaitRowLock, "REPLACE INTO t VALUES (1)", "update"},
		{WaitRowLock, "SELECT * FROM t FOR UPDATE", "executing"},
		{WaitRowLock, "", "executing"},
	} {
		require.Equal(t, tc.state, tc.w.State(tc.query), "%v %q", tc.w, tc.query)
	}
}
