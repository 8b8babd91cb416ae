package sqlstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSessionVarsFollowSet: the variables a statement reads at its start
// are read from the session once per change of them, and every SET that
// changes one is seen by the next statement.
func TestSessionVarsFollowSet(t *testing.T) {
	d := newTestDB(t)
	sess := d.ctx.Session.(*Session)
	v := sess.vars(d.ctx)
	require.True(t, v.pessimistic)
	require.True(t, v.planReuse)
	require.True(t, v.autocommit)
	require.Equal(t, 50*time.Second, v.lockWait)
	require.Same(t, v, sess.vars(d.ctx), "unchanged variables are not read again")
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = sess.vars(d.ctx) }))

	d.exec("SET strata_txn_mode = 'optimistic'")
	require.False(t, sess.vars(d.ctx).pessimistic)
	require.False(t, sessionPessimistic(d.ctx))
	d.exec("SET innodb_lock_wait_timeout = 7")
	require.Equal(t, 7*time.Second, sessionLockWait(d.ctx))
	d.exec("SET strata_plan_reuse = OFF")
	require.False(t, planReuse(d.ctx))
	d.exec("SET autocommit = 0")
	require.False(t, sess.autocommit(d.ctx))
	d.exec("SET strata_access = 'naive'")
	require.Equal(t, "naive", sess.vars(d.ctx).access)
	d.exec("SET sql_select_limit = 3")
	require.EqualValues(t, 3, sess.vars(d.ctx).selLimit)

	// A SET to the value a variable has changes nothing.
	v = sess.vars(d.ctx)
	d.exec("SET strata_txn_mode = 'optimistic'")
	require.Same(t, v, sess.vars(d.ctx))
}

// TestOneIntervalLookupAllocs guards the allocations of a point lookup on a
// kept plan: its ranges (with what ToRanges returns) in one, its encoded
// plan and span in one, and the keys' buffer in one.
func TestOneIntervalLookupAllocs(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id BIGINT PRIMARY KEY, k INT, KEY k_idx (k))")
	db, err := d.s.Provider().Database(d.ctx, "mydb")
	require.NoError(t, err)
	tbl, _, err := db.GetTableInsensitive(d.ctx, "t")
	require.NoError(t, err)
	indexes, err := tbl.(*Table).GetIndexes(d.ctx)
	require.NoError(t, err)
	for _, idx := range indexes {
		ix := idx.(*Index)
		typ := ix.t.schema[ix.ix.cols[0]].Type
		set := intervalSet{{1 << 20, 1 << 20}}
		n := testing.AllocsPerRun(100, func() {
			r := newIntervalRanges(d.ctx, typ, set, false)
			_ = r.ToRanges()
			if _, ok := encodeIntervals(ix.t, ix.ix, r, false); !ok {
				t.Fatal("the interval does not encode")
			}
		})
		require.LessOrEqual(t, n, 3.0, ix.ix.name)
	}
}
