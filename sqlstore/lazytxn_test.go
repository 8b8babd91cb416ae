package sqlstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConsistentSnapshotText(t *testing.T) {
	for q, want := range map[string]bool{
		"START TRANSACTION WITH CONSISTENT SNAPSHOT":          true,
		"  start transaction\n with  consistent snapshot ;":   true,
		"START TRANSACTION":                                   false,
		"START TRANSACTION READ ONLY":                         false,
		"BEGIN":                                               false,
		"SELECT 'START TRANSACTION WITH CONSISTENT SNAPSHOT'": false,
		"": false,
	} {
		require.Equal(t, want, consistentSnapshot(q), "%q", q)
	}
}

// TestLazyTxnUnused checks that a transaction that ends before its first
// use never begins an engine transaction, and that one begun sees one
// snapshot.
func TestLazyTxnUnused(t *testing.T) {
	d := newTestDB(t)
	for _, end := range []func(*txn){(*txn).rollback, func(t *txn) { _ = t.commit() }} {
		tx := d.s.beginTxn(false)
		require.False(t, tx.lazy.started())
		require.Zero(t, tx.tx.Count())
		require.NoError(t, tx.rollbackTo(tx.mark()))
		end(tx)
		require.True(t, tx.lazy.started())
		require.Equal(t, finishedTxn, tx.lazy.tx, "a transaction that ended unused began none")
	}
	tx := d.s.beginTxn(true)
	defer tx.rollback()
	v := tx.tx.StartVersion()
	require.True(t, tx.lazy.started())
	d.exec("CREATE TABLE lazy_t (id INT PRIMARY KEY)")
	require.Equal(t, v, tx.tx.StartVersion(), "one snapshot once begun")
}
