package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// lockConns returns two connections in mydb over one engine, with plan
// reuse on or off, and innodb_lock_wait_timeout = 1.
func lockConns(t *testing.T, d *testDB, reuse bool) (a, b *Conn) {
	t.Helper()
	ctx := context.Background()
	e := d.s.OpenEngine()
	a, b = e.NewConn(), e.NewConn()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close(); _ = e.Close() })
	for _, c := range []*Conn{a, b} {
		require.NoError(t, c.UseDatabase(ctx, "mydb"))
		_, err := c.Exec(ctx, "SET innodb_lock_wait_timeout = 1")
		require.NoError(t, err)
		if !reuse {
			_, err = c.Exec(ctx, "SET strata_plan_reuse = OFF")
			require.NoError(t, err)
		}
	}
	return a, b
}

// prepQuery prepares q on c, as database/sql does in a transaction, runs
// it with args and returns its rows as text, or its error. It may run on
// another goroutine than the test's.
func prepQuery(t *testing.T, c *Conn, q string, args ...int64) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	st, err := c.Prepare(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	defer st.Close()
	var as []Arg
	for i, v := range args {
		as = append(as, Arg{Ordinal: i + 1, Value: v})
	}
	rows, err := st.Query(ctx, as...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for {
		vals, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprint(vals))
	}
}

// TestLockingSelectOnKeptPlan runs the locking point selects of a
// pessimistic transaction on kept plans and on plans GMS makes afresh
// (strata_plan_reuse = OFF), and requires the same results and the same
// locking: FOR UPDATE and FOR SHARE take the row's lock and read the
// latest committed row, a second session waits for it (and gives up with
// 1205), NOWAIT fails with 3572, SKIP LOCKED skips the row.
func TestLockingSelectOnKeptPlan(t *testing.T) {
	const (
		forUpdate  = "SELECT v FROM t WHERE id = ? FOR UPDATE"
		forShare   = "SELECT v FROM t WHERE id = ? FOR SHARE"
		nowait     = "SELECT v FROM t WHERE id = ? FOR UPDATE NOWAIT"
		shareNowai = "SELECT v FROM t WHERE id = ? FOR SHARE NOWAIT"
		skip       = "SELECT id FROM t WHERE id IN (?, ?, ?) FOR UPDATE SKIP LOCKED"
		inShare    = "SELECT v FROM t WHERE id = ? LOCK IN SHARE MODE"
	)
	for _, reuse := range []bool{true, false} {
		t.Run(fmt.Sprintf("reuse=%v", reuse), func(t *testing.T) {
			ctx := context.Background()
			d := newTestDB(t)
			d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
			d.exec("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
			a, b := lockConns(t, d, reuse)
			exec := func(c *Conn, q string) {
				t.Helper()
				_, err := c.Exec(ctx, q)
				require.NoError(t, err)
			}
			// Learn: each text runs a few times in transactions of its own.
			for _, c := range []*Conn{a, b} {
				for i := 0; i < 4; i++ {
					exec(c, "BEGIN")
					for _, q := range []string{forUpdate, forShare, nowait, shareNowai, inShare} {
						rows, err := prepQuery(t, c, q, 2)
						require.NoError(t, err, q)
						require.Equal(t, []string{"[20]"}, rows, q)
					}
					rows, err := prepQuery(t, c, skip, 3, 1, 2)
					require.NoError(t, err)
					require.Equal(t, []string{"[1]", "[2]", "[3]"}, rows)
					exec(c, "COMMIT")
				}
			}
			reusedBefore := a.sess.plansReused.Load() + b.sess.plansReused.Load()

			// a locks row 1; b's snapshot is taken before a changes it.
			exec(b, "BEGIN")
			rows, err := prepQuery(t, b, "SELECT v FROM t WHERE id = ?", 1)
			require.NoError(t, err)
			require.Equal(t, []string{"[10]"}, rows)
			exec(a, "BEGIN")
			rows, err = prepQuery(t, a, forUpdate, 1)
			require.NoError(t, err)
			require.Equal(t, []string{"[10]"}, rows)

			_, err = prepQuery(t, b, forUpdate, 1)
			require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
			_, err = prepQuery(t, b, forShare, 1)
			require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
			_, err = prepQuery(t, b, inShare, 1)
			require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
			_, err = prepQuery(t, b, nowait, 1)
			require.Equal(t, erLockNowait, sqlErrNum(err), "%v", err)
			_, err = prepQuery(t, b, shareNowai, 1)
			require.Equal(t, erLockNowait, sqlErrNum(err), "%v", err)
			rows, err = prepQuery(t, b, skip, 1, 2, 3)
			require.NoError(t, err)
			require.Equal(t, []string{"[2]", "[3]"}, rows)
			// b now holds 2 and 3: a's NOWAIT on them fails, on 1 (its own) not.
			_, err = prepQuery(t, a, nowait, 2)
			require.Equal(t, erLockNowait, sqlErrNum(err), "%v", err)
			rows, err = prepQuery(t, a, nowait, 1)
			require.NoError(t, err)
			require.Equal(t, []string{"[10]"}, rows)
			exec(b, "COMMIT")

			// b waits for a's lock on row 1, then reads the row a committed,
			// not its snapshot's.
			exec(b, "SET innodb_lock_wait_timeout = 50")
			exec(b, "BEGIN")
			rows, err = prepQuery(t, b, "SELECT v FROM t WHERE id = ?", 1)
			require.NoError(t, err)
			require.Equal(t, []string{"[10]"}, rows)
			done := make(chan []string, 1)
			errc := make(chan error, 1)
			go func() {
				rows, err := prepQuery(t, b, forUpdate, 1)
				done <- rows
				errc <- err
			}()
			require.Eventually(t, func() bool {
				return len(d.exec("CALL strata_lock_waits()")) == 1
			}, 10*time.Second, 5*time.Millisecond)
			exec(a, "UPDATE t SET v = v + 1 WHERE id = 1")
			exec(a, "COMMIT")
			require.Equal(t, []string{"[11]"}, <-done)
			require.NoError(t, <-errc)
			exec(b, "UPDATE t SET v = v + 1 WHERE id = 1")
			exec(b, "COMMIT")
			require.Equal(t, []string{"[12]"}, queryAll(t, a, "SELECT v FROM t WHERE id = 1"))

			reused := a.sess.plansReused.Load() + b.sess.plansReused.Load() - reusedBefore
			if reuse {
				require.GreaterOrEqual(t, reused, int64(10), "locking selects on kept plans")
				for _, q := range []string{forUpdate, forShare, nowait, shareNowai, skip, inShare} {
					k := b.kept[q]
					require.NotNil(t, k, q)
					require.NotNil(t, k.sel.tmpl, q)
				}
			} else {
				require.Zero(t, reused)
			}
		})
	}
}

// TestPrepareKeptPerConn: a text prepared again on a connection reuses
// the parsed statement and the PreparedSelect (with its template) of the
// last Prepare, until the catalog, the current database or the session's
// variables change; a dropped table fails the Prepare again.
func TestPrepareKeptPerConn(t *testing.T) {
	ctx := context.Background()
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (1, 10)")
	e := d.s.OpenEngine()
	c := e.NewConn()
	t.Cleanup(func() { _ = c.Close(); _ = e.Close() })
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	const q = "SELECT v FROM t WHERE id = ? FOR UPDATE"
	prep := func() *Stmt {
		t.Helper()
		st, err := c.Prepare(ctx, q)
		require.NoError(t, err)
		return st
	}
	run := func(st *Stmt) {
		t.Helper()
		_, err := c.Exec(ctx, "BEGIN")
		require.NoError(t, err)
		rows, err := st.Query(ctx, Arg{Ordinal: 1, Value: int64(1)})
		require.NoError(t, err)
		require.NoError(t, rows.Close())
		_, err = c.Exec(ctx, "COMMIT")
		require.NoError(t, err)
	}
	first := prep()
	require.NotNil(t, first.sel)
	run(first)
	require.NoError(t, first.Close())
	tmpl := first.sel.tmpl
	require.NotNil(t, tmpl, "a locking point select is a template")
	for i := 0; i < 3; i++ {
		st := prep()
		require.Same(t, first.sel, st.sel)
		require.Equal(t, first.parsed, st.parsed)
		run(st)
		require.Same(t, tmpl, st.sel.tmpl, "the template outlives the statements")
		require.NoError(t, st.Close())
	}

	// Two open statements of one text share what was kept.
	s1, s2 := prep(), prep()
	require.Same(t, s1.sel, s2.sel)
	run(s1)
	require.NoError(t, s1.Close())
	run(s2) // the parsed statement stays cached while s2 is open
	require.NoError(t, s2.Close())

	for _, q := range []string{"CREATE DATABASE db2", "CREATE TABLE db2.t (id INT PRIMARY KEY, v INT)", "INSERT INTO db2.t VALUES (1, 5)"} {
		_, err := c.Exec(ctx, q)
		require.NoError(t, err)
	}
	for _, change := range []string{"ALTER TABLE t ADD COLUMN w INT", "SET sql_mode = 'ANSI_QUOTES'", "USE db2"} {
		_, err := c.Exec(ctx, change)
		require.NoError(t, err)
		st := prep()
		require.NotSame(t, first.sel, st.sel, change)
		first = st
		run(st)
		require.NoError(t, st.Close())
	}
	st := prep()
	require.Same(t, first.sel, st.sel)
	require.NoError(t, st.Close())
	d.exec("DROP TABLE db2.t")
	_, err := c.Prepare(ctx, q)
	require.Error(t, err)
	require.Equal(t, mysql.ERNoSuchTable, sqlErrNum(err), "%v", err)
}
