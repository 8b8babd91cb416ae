package sqlstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReaderMutableAgrees: what the planner is told of a reader
// (mutableLocked, which EXPLAIN asks through readerMutable) is what
// readerLocked, which the row iterator reads through, makes of it, in
// every state of a transaction: before and after it writes, for a cursor's
// older boundary, for foreign key checks, and once it is done.
func TestReaderMutableAgrees(t *testing.T) {
	d := accessDB(t)
	check := func(state string, wantMutable bool) {
		t.Helper()
		tx := txnOf(d.ctx)
		require.NotNil(t, tx, state)
		tx.mu.Lock()
		boundary := tx.boundary
		tx.mu.Unlock()
		for _, onView := range []bool{true, false} {
			for _, at := range []int{-1, 0, boundary} {
				tx.mu.Lock()
				_, frozen, err := tx.readerLocked(onView, at)
				mutable := tx.mutableLocked(onView, at)
				tx.mu.Unlock()
				require.NoError(t, err)
				require.Equal(t, !frozen, mutable, fmt.Sprintf("%s, onView=%v, at=%d", state, onView, at))
			}
		}
		require.Equal(t, wantMutable, d.s.readerMutable(d.ctx, true), state)
	}
	d.exec("START TRANSACTION")
	check("not written", false)
	d.exec("UPDATE t SET c = 'new' WHERE id = 1")
	check("written", true)
	d.exec("SELECT c FROM t WHERE k IN (1, 2)") // makes the view
	check("written and read", true)
	d.exec("ROLLBACK")
	if tx := txnOf(d.ctx); tx != nil && tx.isDone() {
		check("done", false)
	}
}
