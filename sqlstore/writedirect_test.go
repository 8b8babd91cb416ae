package sqlstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// directConn opens a connection on a store holding t (id, k, c) with rows
// 0..99, in transaction mode mode.
func directConn(t *testing.T, mode string) (*testDB, *Engine, *Conn) {
	t.Helper()
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(20) NOT NULL, KEY k_idx (k))")
	for i := 0; i < 100; i += 50 {
		q := "INSERT INTO t VALUES "
		for j := i; j < i+50; j++ {
			if j > i {
				q += ","
			}
			q += fmt.Sprintf("(%d, 0, 'c%d')", j, j)
		}
		d.exec(q)
	}
	e := d.s.OpenEngine()
	t.Cleanup(func() { _ = e.Close() })
	return d, e, directConnOn(t, e, mode)
}

func directConnOn(t *testing.T, e *Engine, mode string) *Conn {
	t.Helper()
	ctx := context.Background()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	_, err := c.Exec(ctx, "SET strata_txn_mode = '"+mode+"'")
	require.NoError(t, err)
	return c
}

// TestDirectWriteAllocs: an UPDATE or DELETE by key on a kept plan makes no
// GMS iterator, and allocates a bounded number of objects per execution
// (the statement's context and arguments, the engine transaction, its
// batch and locks), where GMS's path made about 130.
func TestDirectWriteAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold in race builds")
	}
	ctx := context.Background()
	_, _, c := directConn(t, txnPessimistic)
	for _, w := range []struct {
		q    string
		args func(i int) []Arg
		max  float64
	}{
		{"UPDATE t SET k = k + 1 WHERE id = ?", func(i int) []Arg {
			return []Arg{{Ordinal: 1, Value: int64(i % 100)}}
		}, 26},
		{"UPDATE t SET c = ? WHERE id = ?", func(i int) []Arg {
			return []Arg{{Ordinal: 1, Value: "same"}, {Ordinal: 2, Value: int64(i % 100)}}
		}, 26},
		{"DELETE FROM t WHERE id = ?", func(i int) []Arg {
			return []Arg{{Ordinal: 1, Value: int64(1000 + i)}} // no such row
		}, 11},
	} {
		st, err := c.Prepare(ctx, w.q)
		require.NoError(t, err)
		args := make([][]Arg, 300)
		for i := range args {
			args[i] = w.args(i)
		}
		for i := 0; i < 3; i++ {
			_, err := st.Exec(ctx, args[i]...)
			require.NoError(t, err)
		}
		before := st.wr.directRuns
		i := 0
		allocs := testing.AllocsPerRun(200, func() {
			i++
			if _, err := st.Exec(ctx, args[i]...); err != nil {
				t.Fatal(err)
			}
		})
		require.Equal(t, 201, st.wr.directRuns-before, w.q)
		require.LessOrEqual(t, allocs, w.max, w.q)
		t.Logf("%s: %.0f allocations", w.q, allocs)
		require.NoError(t, st.Close())
	}
}

// TestDirectUpdateConcurrent: connections incrementing the same rows by key
// at once lose no increment, in both transaction modes (optimistic
// autocommit writes that lose a conflict run again).
func TestDirectUpdateConcurrent(t *testing.T) {
	for _, mode := range []string{txnPessimistic, txnOptimistic} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			_, e, c0 := directConn(t, mode)
			const conns, each = 4, 150
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			direct := make([]int, conns)
			for n := 0; n < conns; n++ {
				c := directConnOn(t, e, mode)
				wg.Add(1)
				go func() {
					defer wg.Done()
					st, err := c.Prepare(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
					if err != nil {
						errs <- err
						return
					}
					defer st.Close()
					for i := 0; i < each; i++ {
						if _, err := st.Exec(ctx, Arg{Ordinal: 1, Value: int64(i % 3)}); err != nil {
							errs <- err
							return
						}
					}
					direct[n] = st.wr.directRuns
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			for _, n := range direct {
				require.Greater(t, n, 0)
			}
			require.Equal(t, []string{"[0 200]", "[1 200]", "[2 200]"}, queryAll(t, c0, "SELECT id, k FROM t WHERE id < 3 ORDER BY id"))
		})
	}
}

// TestDirectUpdateReadsLatest: in a pessimistic transaction an UPDATE by
// key locks the row and computes from its latest committed version, as
// InnoDB does, also one committed after the transaction's snapshot; in an
// optimistic one the first committer wins.
func TestDirectUpdateReadsLatest(t *testing.T) {
	for _, mode := range []string{txnPessimistic, txnOptimistic} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			_, e, a := directConn(t, mode)
			b := directConnOn(t, e, mode)
			up, err := a.Prepare(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
			require.NoError(t, err)
			for i := int64(10); i < 13; i++ { // learned, then kept
				_, err := up.Exec(ctx, Arg{Ordinal: 1, Value: i})
				require.NoError(t, err)
			}
			_, err = a.Exec(ctx, "BEGIN")
			require.NoError(t, err)
			require.Equal(t, []string{"[0]"}, queryAll(t, a, "SELECT k FROM t WHERE id = 5"))
			_, err = b.Exec(ctx, "UPDATE t SET k = 100 WHERE id = 5")
			require.NoError(t, err)
			before := up.wr.directRuns
			res, err := up.Exec(ctx, Arg{Ordinal: 1, Value: int64(5)})
			require.NoError(t, err)
			require.Equal(t, before+1, up.wr.directRuns)
			require.Equal(t, int64(1), res.RowsAffected)
			require.Equal(t, "Rows matched: 1  Changed: 1  Warnings: 0", res.Info)
			// Its own write is seen by the next statement, direct or not.
			_, err = up.Exec(ctx, Arg{Ordinal: 1, Value: int64(5)})
			require.NoError(t, err)
			if mode == txnPessimistic {
				require.Equal(t, []string{"[102]"}, queryAll(t, a, "SELECT k FROM t WHERE id = 5"))
				_, err = a.Exec(ctx, "COMMIT")
				require.NoError(t, err)
				require.Equal(t, []string{"[102]"}, queryAll(t, b, "SELECT k FROM t WHERE id = 5"))
				return
			}
			require.Equal(t, []string{"[2]"}, queryAll(t, a, "SELECT k FROM t WHERE id = 5"))
			_, err = a.Exec(ctx, "COMMIT")
			require.Error(t, err)
			require.Equal(t, 1213, int(MySQLError(err).Num), "%v", err)
			require.Equal(t, []string{"[100]"}, queryAll(t, b, "SELECT k FROM t WHERE id = 5"))
		})
	}
}

// TestDirectWriteResults: the OK results, FOUND_ROWS, ROW_COUNT and
// access plans (Strata_last_access) of updates and deletes by key (a row
// changed, a row matched and left as it was, a row whose value changes
// only in letter case, no row, a value too long) are those of the
// statements planned by GMS.
func TestDirectWriteResults(t *testing.T) {
	ctx := context.Background()
	type outcome struct {
		res    Result
		err    string
		counts []string
	}
	run := func(reuse bool) (out []outcome, direct int) {
		_, _, c := directConn(t, txnPessimistic)
		if !reuse {
			_, err := c.Exec(ctx, "SET strata_plan_reuse = OFF")
			require.NoError(t, err)
		}
		up, err := c.Prepare(ctx, "UPDATE t SET c = ? WHERE id = ?")
		require.NoError(t, err)
		del, err := c.Prepare(ctx, "DELETE FROM t WHERE id = ?")
		require.NoError(t, err)
		for i := int64(20); i < 23; i++ {
			_, err := up.Exec(ctx, Arg{Ordinal: 1, Value: "x"}, Arg{Ordinal: 2, Value: i})
			require.NoError(t, err)
			_, err = del.Exec(ctx, Arg{Ordinal: 1, Value: i})
			require.NoError(t, err)
		}
		before := up.wr.directRuns + del.wr.directRuns
		for _, x := range []struct {
			st  *Stmt
			arg []any
		}{
			{up, []any{"y", int64(1)}},
			{up, []any{"y", int64(1)}},
			{up, []any{"Y", int64(1)}},
			{up, []any{"y", int64(120)}},
			{up, []any{"much too long for the column", int64(2)}},
			{del, []any{int64(1)}},
			{del, []any{int64(1)}},
		} {
			args := make([]Arg, len(x.arg))
			for i, v := range x.arg {
				args[i] = Arg{Ordinal: i + 1, Value: v}
			}
			var o outcome
			var err error
			if o.res, err = x.st.Exec(ctx, args...); err != nil {
				o.err = err.Error()
			}
			o.counts = queryAll(t, c, "SELECT ROW_COUNT(), FOUND_ROWS()")
			o.counts = append(o.counts, queryAll(t, c, "SHOW STATUS LIKE 'Strata_last_access'")...)
			out = append(out, o)
		}
		out = append(out, outcome{counts: queryAll(t, c, "SELECT * FROM t WHERE id < 3 ORDER BY id")})
		return out, up.wr.directRuns + del.wr.directRuns - before
	}
	fast, direct := run(true)
	slow, _ := run(false)
	require.Equal(t, slow, fast)
	require.Equal(t, 7, direct)
	require.Equal(t, "Rows matched: 1  Changed: 1  Warnings: 0", fast[2].res.Info)
}

// TestDirectWriteReadOnlyTransaction: an UPDATE or DELETE by key on a kept
// plan in a READ ONLY transaction fails with 1792 before it locks or reads
// the row, as planning fails it: another transaction writes the row
// without waiting for a lock.
func TestDirectWriteReadOnlyTransaction(t *testing.T) {
	ctx := context.Background()
	_, e, c := directConn(t, txnPessimistic)
	other := directConnOn(t, e, txnPessimistic)
	up, err := c.Prepare(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
	require.NoError(t, err)
	del, err := c.Prepare(ctx, "DELETE FROM t WHERE id = ?")
	require.NoError(t, err)
	for i := int64(10); i < 14; i++ {
		_, err := up.Exec(ctx, Arg{Ordinal: 1, Value: i})
		require.NoError(t, err)
		_, err = del.Exec(ctx, Arg{Ordinal: 1, Value: i})
		require.NoError(t, err)
	}
	_, err = c.Exec(ctx, "START TRANSACTION READ ONLY")
	require.NoError(t, err)
	for _, st := range []*Stmt{up, del} {
		_, err := st.Exec(ctx, Arg{Ordinal: 1, Value: int64(1)})
		require.Error(t, err)
		var me *mysql.SQLError
		require.ErrorAs(t, err, &me)
		require.Equal(t, 1792, me.Num, err.Error())
	}
	// No lock was taken: the other transaction does not wait (it would
	// fail with 1205 after the one-second wait).
	for _, q := range []string{"SET innodb_lock_wait_timeout = 1", "BEGIN", "UPDATE t SET k = 7 WHERE id = 1", "COMMIT"} {
		_, err := other.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = c.Exec(ctx, "COMMIT")
	require.NoError(t, err)
}

// TestDirectWriteMetadataLockFirst: an UPDATE or DELETE by key on a kept
// plan takes the table's SHARED_WRITE metadata lock before it locks the
// row: when the metadata lock times out (1205, here against an index
// build's lock), the row was never locked, and another transaction writes
// it without waiting.
func TestDirectWriteMetadataLockFirst(t *testing.T) {
	ctx := context.Background()
	d, e, c := directConn(t, txnPessimistic)
	other := directConnOn(t, e, txnPessimistic)
	up, err := c.Prepare(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
	require.NoError(t, err)
	del, err := c.Prepare(ctx, "DELETE FROM t WHERE id = ?")
	require.NoError(t, err)
	for i := int64(10); i < 14; i++ {
		_, err := up.Exec(ctx, Arg{Ordinal: 1, Value: i})
		require.NoError(t, err)
		_, err = del.Exec(ctx, Arg{Ordinal: 1, Value: i})
		require.NoError(t, err)
	}
	db, err := d.s.Provider().Database(d.ctx, "mydb")
	require.NoError(t, err)
	tbl, ok, err := db.GetTableInsensitive(d.ctx, "t")
	require.NoError(t, err)
	require.True(t, ok)
	id := tbl.(*Table).def.id
	build := mdlOwner()
	_, err = d.s.mdl.acquire(context.Background(), build, id, mdlSharedNoWrite, time.Hour)
	require.NoError(t, err)
	for _, q := range []string{"SET lock_wait_timeout = 1", "BEGIN"} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	for _, st := range []*Stmt{up, del} {
		_, err := st.Exec(ctx, Arg{Ordinal: 1, Value: int64(1)})
		var me *mysql.SQLError
		require.ErrorAs(t, err, &me)
		require.Equal(t, mysql.ERLockWaitTimeout, me.Num, err.Error())
	}
	d.s.mdl.release(build, id)
	for _, q := range []string{"SET innodb_lock_wait_timeout = 1", "BEGIN", "UPDATE t SET k = 7 WHERE id = 1", "COMMIT"} {
		_, err := other.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	// The lock is free now: the same transaction's next execution asks
	// for it again (it failed by timeout, not for a stale plan) and runs.
	_, err = up.Exec(ctx, Arg{Ordinal: 1, Value: int64(1)})
	require.NoError(t, err)
	_, err = c.Exec(ctx, "ROLLBACK")
	require.NoError(t, err)
}

// TestDirectWriteAfterAlter: a write by key on a kept plan whose metadata
// lock waited for an ALTER that changed the table is planned afresh, and
// writes the row in the table's new definition.
func TestDirectWriteAfterAlter(t *testing.T) {
	ctx := context.Background()
	d, e, c := directConn(t, txnPessimistic)
	holder := directConnOn(t, e, txnPessimistic)
	alter := directConnOn(t, e, txnPessimistic)
	up, err := c.Prepare(ctx, "UPDATE t SET k = k + 1 WHERE id = ?")
	require.NoError(t, err)
	for i := int64(10); i < 14; i++ {
		_, err := up.Exec(ctx, Arg{Ordinal: 1, Value: i})
		require.NoError(t, err)
	}
	require.Positive(t, up.wr.directRuns)
	for _, q := range []string{"BEGIN", "UPDATE t SET k = 5 WHERE id = 50"} {
		_, err := holder.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	altered := make(chan error, 1)
	go func() {
		_, err := alter.Exec(ctx, "ALTER TABLE t ADD COLUMN extra INT NOT NULL DEFAULT 9")
		altered <- err
	}()
	waitQueued(&d.s.mdl, 1)
	updated := make(chan error, 1)
	go func() {
		_, err := up.Exec(ctx, Arg{Ordinal: 1, Value: int64(7)})
		updated <- err
	}()
	waitQueued(&d.s.mdl, 2)
	_, err = holder.Exec(ctx, "COMMIT")
	require.NoError(t, err)
	require.NoError(t, <-altered)
	require.NoError(t, <-updated)
	require.Equal(t, []string{"[7 1 c7 9]"}, queryAll(t, c, "SELECT id, k, c, extra FROM t WHERE id = 7"))
	_, err = up.Exec(ctx, Arg{Ordinal: 1, Value: int64(7)})
	require.NoError(t, err)
	require.Equal(t, []string{"[7 2 c7 9]"}, queryAll(t, c, "SELECT id, k, c, extra FROM t WHERE id = 7"))
}
