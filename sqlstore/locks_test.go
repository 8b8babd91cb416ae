package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// lq runs q in ctx with q as the statement's text, as Conn and the server
// give it.
func lq(d *testDB, ctx *sql.Context, q string) ([]sql.Row, error) {
	return query(d.e, ctx.WithQuery(q), q)
}

// sqlErrNum returns the MySQL error number of err, 0 for nil.
func sqlErrNum(err error) int {
	if err == nil {
		return 0
	}
	return MySQLError(err).Num
}

// TestCounterPessimistic runs the read-modify-write counter of issue 31:
// clients each commit BEGIN; SELECT v ... FOR UPDATE; UPDATE ... v = v + 1;
// COMMIT. Every transaction waits for the row instead of failing: the
// counter ends at the number of commits, with no error.
func TestCounterPessimistic(t *testing.T) {
	for _, clients := range []int{8, 32} {
		t.Run(fmt.Sprint(clients), func(t *testing.T) {
			const each = 50
			d := newTestDB(t)
			d.exec("CREATE TABLE c (id INT PRIMARY KEY, v INT)")
			d.exec("INSERT INTO c VALUES (1, 0)")
			runClients(t, d, clients, each, func(_, _ int) []string {
				return []string{"BEGIN", "SELECT v FROM c WHERE id = 1 FOR UPDATE", "UPDATE c SET v = v + 1 WHERE id = 1", "COMMIT"}
			})
			require.Equal(t, []sql.Row{{int32(clients * each)}}, d.exec("SELECT v FROM c WHERE id = 1"))
		})
	}
}

// TestCounterAutocommitPessimistic: autocommit UPDATE c SET v = v + 1 from
// many sessions all succeed at once, without reruns.
func TestCounterAutocommitPessimistic(t *testing.T) {
	const clients, each = 8, 50
	d := newTestDB(t)
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, v INT, KEY kv (v))")
	d.exec("INSERT INTO c VALUES (1, 0)")
	runClients(t, d, clients, each, func(_, _ int) []string { return []string{"UPDATE c SET v = v + 1 WHERE id = 1"} })
	require.Equal(t, []sql.Row{{int32(clients * each)}}, d.exec("SELECT v FROM c WHERE id = 1"))
	require.Equal(t, []sql.Row{{int64(1)}}, d.exec("SELECT COUNT(*) FROM c WHERE v = 400"))
}

// runClients runs the statements stmts(g, i) gives, in order, for each
// iteration i < each of each session g < clients, all sessions at once, and
// requires that none failed.
func runClients(t *testing.T, d *testDB, clients, each int, stmts func(g, i int) []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := d.newCtx()
			for i := range each {
				for _, q := range stmts(g, i) {
					if _, err := lq(d, ctx, q); err != nil {
						errs <- fmt.Errorf("session %d: %s: %w", g, q, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// lockSessions returns n sessions of d in open transactions.
func lockSessions(t *testing.T, d *testDB, n int) []*sql.Context {
	t.Helper()
	out := make([]*sql.Context, n)
	for i := range out {
		out[i] = d.newCtx()
		_, err := lq(d, out[i], "BEGIN")
		require.NoError(t, err)
	}
	return out
}

// awaitLockWaiters returns once n transactions wait for row locks (the
// engine's lock table, as CALL strata_lock_waits() lists it), so that a
// test orders its sessions by state, not by sleeping. It fails the test if
// done delivers first (the statement meant to wait ended); done may be nil.
func awaitLockWaiters[T any](t *testing.T, d *testDB, n int, done <-chan T) {
	t.Helper()
	for {
		waits, err := d.s.LockWaits(d.ctx)
		require.NoError(t, err)
		waiting := make(map[uint64]bool)
		for _, w := range waits {
			waiting[w.WaitingTxn] = true
		}
		if len(waiting) >= n {
			return
		}
		select {
		case v := <-done:
			t.Fatalf("the statement ended without being seen waiting: %v", v)
		default:
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDeadlocks: cycles of two and three transactions each waiting for a
// row the next holds give exactly one 1213, whose transaction is rolled
// back; the others go on and commit.
func TestDeadlocks(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			d := newTestDB(t)
			d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
			d.exec("INSERT INTO t VALUES (0, 0), (1, 0), (2, 0)")
			ctxs := lockSessions(t, d, n)
			for i, ctx := range ctxs {
				_, err := lq(d, ctx, fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", i))
				require.NoError(t, err)
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, ctx := range ctxs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = lq(d, ctx, fmt.Sprintf("UPDATE t SET v = v + 10 WHERE id = %d", (i+1)%n))
					if errs[i] == nil {
						_, errs[i] = lq(d, ctx, "COMMIT")
					} else {
						_, _ = lq(d, ctx, "ROLLBACK")
					}
				}()
				// Each waits before the next asks, so that the last one
				// closes the cycle.
				if i < n-1 {
					awaitLockWaiters[error](t, d, i+1, nil)
				}
			}
			wg.Wait()
			deadlocks := 0
			victim := -1
			for i, err := range errs {
				switch sqlErrNum(err) {
				case 0:
				case mysql.ERLockDeadlock:
					deadlocks++
					victim = i
				default:
					t.Fatalf("session %d: %v", i, err)
				}
			}
			require.Equal(t, 1, deadlocks)
			// The victim's first update was rolled back with it.
			want := 0
			for i := range n {
				if i != victim {
					want += 1 + 10
				}
			}
			require.Equal(t, []sql.Row{{int64(want)}}, d.exec("SELECT CAST(SUM(v) AS SIGNED) FROM t"))
		})
	}
}

// TestLockWaitTimeout: a wait longer than innodb_lock_wait_timeout fails
// the statement with 1205 and keeps the transaction and its locks.
func TestLockWaitTimeout(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (1, 0), (2, 0)")
	ctxs := lockSessions(t, d, 2)
	a, b := ctxs[0], ctxs[1]
	_, err := lq(d, a, "UPDATE t SET v = 1 WHERE id = 1")
	require.NoError(t, err)
	// Long enough for the wait to be seen before it ends.
	_, err = lq(d, b, "SET innodb_lock_wait_timeout = 3")
	require.NoError(t, err)
	_, err = lq(d, b, "UPDATE t SET v = 2 WHERE id = 2")
	require.NoError(t, err)
	// b waits for row 1 (it shows among the lock waits) until its timeout
	// gives 1205.
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, b, "UPDATE t SET v = 2 WHERE id = 1")
		done <- err
	}()
	waited := false
	for !waited {
		select {
		case err := <-done:
			t.Fatalf("the UPDATE ended without being seen waiting: %v", err)
		default:
		}
		rows := d.exec("CALL strata_lock_waits()")
		waited = len(rows) == 1 && rows[0][0] == b.Session.ID() && rows[0][2] == a.Session.ID()
		if !waited {
			time.Sleep(time.Millisecond)
		}
	}
	err = <-done
	require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
	require.Empty(t, d.exec("CALL strata_lock_waits()"))
	// b's transaction goes on, with its lock on row 2.
	_, err = lq(d, a, "SET innodb_lock_wait_timeout = 1")
	require.NoError(t, err)
	_, err = lq(d, a, "SELECT * FROM t WHERE id = 2 FOR UPDATE")
	require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
	_, err = lq(d, a, "COMMIT")
	require.NoError(t, err)
	_, err = lq(d, b, "COMMIT")
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(1), int32(1)}, {int32(2), int32(2)}}, d.exec("SELECT * FROM t ORDER BY id"))
}

// TestSkipLockedAndCancel: FOR UPDATE SKIP LOCKED skips locked rows, and a
// cancelled statement stops waiting.
func TestSkipLockedAndCancel(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (1, 0), (2, 0), (3, 0)")
	ctxs := lockSessions(t, d, 2)
	a, b := ctxs[0], ctxs[1]
	_, err := lq(d, a, "SELECT * FROM t WHERE id = 2 FOR UPDATE")
	require.NoError(t, err)
	rows, err := lq(d, b, "SELECT id FROM t FOR UPDATE SKIP LOCKED")
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(1)}, {int32(3)}}, rows)

	cctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = lq(d, b.WithContext(cctx), "UPDATE t SET v = 1 WHERE id = 2")
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	_, err = lq(d, a, "COMMIT")
	require.NoError(t, err)
	_, err = lq(d, b, "COMMIT")
	require.NoError(t, err)
}

// TestInsertWaitsForInsert: an insert of a key another transaction inserted
// and has not committed waits, then fails with 1062 once it commits.
func TestInsertWaitsForInsert(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, u INT, UNIQUE KEY ku (u))")
	ctxs := lockSessions(t, d, 2)
	a, b := ctxs[0], ctxs[1]
	_, err := lq(d, a, "INSERT INTO t VALUES (1, 10)")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, b, "INSERT INTO t VALUES (2, 10)")
		done <- err
	}()
	awaitLockWaiters(t, d, 1, done)
	_, err = lq(d, a, "COMMIT")
	require.NoError(t, err)
	err = <-done
	require.Equal(t, mysql.ERDupEntry, sqlErrNum(err), "%v", err)
	_, err = lq(d, b, "COMMIT")
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(1), int32(10)}}, d.exec("SELECT * FROM t"))
}

// TestLockWaitsView: CALL strata_lock_waits() shows a waiting statement's
// connection, the one it waits for, and the row, by table, index and key.
func TestLockWaitsView(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (7, 0)")
	ctxs := lockSessions(t, d, 2)
	a, b := ctxs[0], ctxs[1]
	_, err := lq(d, a, "UPDATE t SET v = 1 WHERE id = 7")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, b, "SELECT * FROM t WHERE id = 7 LOCK IN SHARE MODE")
		done <- err
	}()
	var rows []sql.Row
	require.Eventually(t, func() bool {
		rows = d.exec("CALL strata_lock_waits()")
		return len(rows) == 1
	}, 5*time.Second, 10*time.Millisecond)
	r := rows[0]
	require.Equal(t, b.Session.ID(), r[0])
	require.Equal(t, "S", r[1])
	require.Equal(t, a.Session.ID(), r[2])
	require.Equal(t, "X", r[3])
	require.Equal(t, false, r[4])
	require.Equal(t, []any{"mydb.t", "PRIMARY", "7"}, []any(r[6:]))
	// The same, as a DBA asks MySQL: performance_schema's lock waits joined
	// with the locks they name.
	pfs := d.exec(`SELECT r.THREAD_ID, r.LOCK_MODE, r.LOCK_STATUS, k.THREAD_ID, k.LOCK_MODE, k.LOCK_STATUS,
		r.OBJECT_SCHEMA, r.OBJECT_NAME, r.INDEX_NAME, r.LOCK_DATA
		FROM performance_schema.data_lock_waits w
		JOIN performance_schema.data_locks r ON r.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID
		JOIN performance_schema.data_locks k ON k.ENGINE_LOCK_ID = w.BLOCKING_ENGINE_LOCK_ID`)
	require.Equal(t, []sql.Row{{uint64(b.Session.ID()), "S,REC_NOT_GAP", "WAITING", uint64(a.Session.ID()), "X,REC_NOT_GAP", "GRANTED",
		"mydb", "t", "PRIMARY", "7"}}, pfs)
	_, err = lq(d, a, "COMMIT")
	require.NoError(t, err)
	require.NoError(t, <-done)
	_, err = lq(d, b, "COMMIT")
	require.NoError(t, err)
	require.Empty(t, d.exec("CALL strata_lock_waits()"))
	require.Empty(t, d.exec("SELECT * FROM performance_schema.data_lock_waits"))
	require.Empty(t, d.exec("SELECT * FROM performance_schema.data_locks"))
	require.Error(t, d.execErr("CREATE DATABASE performance_schema"))
}

func TestHideLockClauses(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1":                                      "SELECT 1",
		"SELECT * FROM t FOR SHARE":                     "SELECT * FROM t /*     */",
		"SELECT * FROM t FOR UPDATE NOWAIT":             "SELECT * FROM t FOR UPDATE /*  */",
		"select * from t for share nowait":              "select * from t /*     */ /*  */",
		"SELECT * FROM t FOR SHARE SKIP LOCKED":         "SELECT * FROM t /*     */ /*       */",
		"SELECT 'for share nowait' FROM t FOR UPDATE":   "SELECT 'for share nowait' FROM t FOR UPDATE",
		"SELECT nowait FROM t /* for share */":          "SELECT nowait FROM t /* for share */",
		"SELECT * FROM t FOR UPDATE SKIP LOCKED":        "SELECT * FROM t FOR UPDATE SKIP LOCKED",
		"SELECT \"a\\\" for share\" FROM t FOR\nSHARE;": "SELECT \"a\\\" for share\" FROM t /*     */;",
	} {
		got := hideLockClauses(q)
		require.Equal(t, want, got, q)
		require.Len(t, got, len(q))
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { hideLockClauses("SELECT * FROM t WHERE id = 1 FOR UPDATE") }))
}

// TestNowaitAndForShare: NOWAIT fails at once with 3572 on a locked row;
// FOR SHARE takes shared locks, which other shared locks do not wait for.
func TestNowaitAndForShare(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (1, 0), (2, 0)")
	ctxs := lockSessions(t, d, 3)
	a, b, c := ctxs[0], ctxs[1], ctxs[2]
	_, err := lq(d, a, "SELECT * FROM t WHERE id = 1 FOR SHARE")
	require.NoError(t, err)
	_, err = lq(d, b, "SELECT * FROM t WHERE id = 1 FOR SHARE NOWAIT")
	require.NoError(t, err)
	_, err = lq(d, c, "SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT")
	require.Equal(t, erLockNowait, sqlErrNum(err), "%v", err)
	_, err = lq(d, c, "UPDATE t SET v = 5 WHERE id = 2")
	require.NoError(t, err)
	_, err = lq(d, a, "SELECT * FROM t FOR SHARE NOWAIT")
	require.Equal(t, erLockNowait, sqlErrNum(err), "%v", err)
	rows, err := lq(d, a, "SELECT id FROM t FOR SHARE SKIP LOCKED")
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(1)}}, rows)
	for _, ctx := range ctxs {
		_, err = lq(d, ctx, "COMMIT")
		require.NoError(t, err)
	}
}

// TestKeylessCounterPessimistic: concurrent updates of a row of a keyless
// table find the row by its latest values, so it is neither lost nor
// duplicated.
func TestKeylessCounterPessimistic(t *testing.T) {
	const clients, each = 8, 25
	d := newTestDB(t)
	d.exec("CREATE TABLE k (a INT, v INT)")
	d.exec("INSERT INTO k VALUES (1, 0), (2, 0)")
	runClients(t, d, clients, each, func(_, _ int) []string { return []string{"UPDATE k SET v = v + 1 WHERE a = 1"} })
	require.Equal(t, []sql.Row{{int32(1), int32(clients * each)}, {int32(2), int32(0)}}, d.exec("SELECT * FROM k ORDER BY a"))
}

// TestLockedReadRechecksIndex: a row reached through a secondary index is
// checked again after the wait; if the committed change moved it out of the
// lookup's range it is skipped (also where the index covers the query).
func TestLockedReadRechecksIndex(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, v INT, KEY kk (k))")
	d.exec("INSERT INTO t VALUES (1, 1, 0), (2, 1, 0)")
	for _, q := range []string{"UPDATE t SET v = 9 WHERE k = 1", "SELECT id FROM t WHERE k = 1 FOR UPDATE"} {
		d.exec("UPDATE t SET k = 1, v = 0")
		ctxs := lockSessions(t, d, 2)
		a, b := ctxs[0], ctxs[1]
		_, err := lq(d, a, "UPDATE t SET k = 2 WHERE id = 1")
		require.NoError(t, err)
		type result struct {
			rows []sql.Row
			err  error
		}
		done := make(chan result, 1)
		go func() {
			rows, err := lq(d, b, q)
			done <- result{rows, err}
		}()
		awaitLockWaiters(t, d, 1, done)
		_, err = lq(d, a, "COMMIT")
		require.NoError(t, err)
		r := <-done
		require.NoError(t, r.err, q)
		_, err = lq(d, b, "COMMIT")
		require.NoError(t, err)
		if strings.HasPrefix(q, "SELECT") {
			require.Equal(t, []sql.Row{{int32(2)}}, r.rows, q)
		} else {
			require.Equal(t, []sql.Row{{int32(1), int32(2), int32(0)}, {int32(2), int32(1), int32(9)}}, d.exec("SELECT * FROM t ORDER BY id"), q)
		}
	}
}

// TestConflictNamesRow: an optimistic commit that loses a conflict names
// the row's table, index and key values, not the key's bytes.
func TestConflictNamesRow(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10), v INT)")
	d.exec("INSERT INTO t VALUES (7, 'x', 0)")
	ctxs := lockSessions(t, d, 1)
	a := ctxs[0]
	_, err := lq(d, a, "ROLLBACK")
	require.NoError(t, err)
	_, err = lq(d, a, "SET strata_txn_mode = 'optimistic'")
	require.NoError(t, err)
	_, err = lq(d, a, "BEGIN")
	require.NoError(t, err)
	_, err = lq(d, a, "UPDATE t SET v = 1 WHERE id = 7")
	require.NoError(t, err)
	d.exec("UPDATE t SET v = 2 WHERE id = 7")
	_, err = lq(d, a, "COMMIT")
	require.Equal(t, mysql.ERLockDeadlock, sqlErrNum(err), "%v", err)
	require.Contains(t, MySQLError(err).Message, "table mydb.t, index PRIMARY, key '7'")
}

// TestTriggerCounterPessimistic: an INSERT whose trigger updates a counter
// row, from many sessions: the trigger's update waits for the row like any
// other and none is lost.
func TestTriggerCounterPessimistic(t *testing.T) {
	const clients, each = 8, 25
	d := newTestDB(t)
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, n INT)")
	d.exec("INSERT INTO c VALUES (1, 0)")
	d.exec("CREATE TABLE e (id INT PRIMARY KEY)")
	d.exec("CREATE TRIGGER count_e AFTER INSERT ON e FOR EACH ROW UPDATE c SET n = n + 1 WHERE id = 1")
	runClients(t, d, clients, each, func(g, i int) []string {
		return []string{"BEGIN", fmt.Sprintf("INSERT INTO e VALUES (%d)", g*1000+i), "COMMIT"}
	})
	require.Equal(t, []sql.Row{{int32(clients * each)}}, d.exec("SELECT n FROM c"))
}

// TestForeignKeyLocks: a child insert and a parent delete wait for each
// other through the parent row's lock, and the second sees the first's
// commit: no child without a parent, no spurious conflict.
func TestForeignKeyLocks(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE p (id INT PRIMARY KEY, v INT)")
	d.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))")
	run := func(first, second string, firstCtx, secondCtx *sql.Context) error {
		_, err := lq(d, firstCtx, first)
		require.NoError(t, err, first)
		done := make(chan error, 1)
		go func() {
			_, err := lq(d, secondCtx, second)
			done <- err
		}()
		awaitLockWaiters(t, d, 1, done)
		_, err = lq(d, firstCtx, "COMMIT")
		require.NoError(t, err)
		err = <-done
		_, _ = lq(d, secondCtx, "ROLLBACK")
		return err
	}
	d.exec("INSERT INTO p VALUES (1, 0)")
	ctxs := lockSessions(t, d, 2)
	err := run("DELETE FROM p WHERE id = 1", "INSERT INTO c VALUES (1, 1)", ctxs[0], ctxs[1])
	require.Equal(t, mysql.ErNoReferencedRow2, sqlErrNum(err), "%v", err)

	d.exec("INSERT INTO p VALUES (2, 0)")
	ctxs = lockSessions(t, d, 2)
	err = run("INSERT INTO c VALUES (2, 2)", "DELETE FROM p WHERE id = 2", ctxs[0], ctxs[1])
	require.Equal(t, mysql.ERRowIsReferenced2, sqlErrNum(err), "%v", err)

	// A parent updated after the child's snapshot is no conflict.
	d.exec("INSERT INTO p VALUES (3, 0)")
	ctxs = lockSessions(t, d, 1)
	_, err = lq(d, ctxs[0], "SELECT COUNT(*) FROM c")
	require.NoError(t, err)
	d.exec("UPDATE p SET v = 1 WHERE id = 3")
	_, err = lq(d, ctxs[0], "INSERT INTO c VALUES (3, 3)")
	require.NoError(t, err)
	_, err = lq(d, ctxs[0], "COMMIT")
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(2), int32(2)}, {int32(3), int32(3)}}, d.exec("SELECT * FROM c ORDER BY id"))
}

// TestLockedPointReadReadsLatest: a pessimistic transaction's UPDATE and
// SELECT ... FOR UPDATE by primary key read the latest committed row, as
// InnoDB's locking reads do, also a row committed after the transaction's
// snapshot, which its plain reads do not see.
func TestLockedPointReadReadsLatest(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (1, 0)")
	ctxs := lockSessions(t, d, 2)
	a, b := ctxs[0], ctxs[1]
	rows, err := lq(d, b, "SELECT COUNT(*) FROM t")
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int64(1)}}, rows)
	_, err = lq(d, a, "INSERT INTO t VALUES (5, 1)")
	require.NoError(t, err)
	_, err = lq(d, a, "COMMIT")
	require.NoError(t, err)
	rows, err = lq(d, b, "SELECT v FROM t WHERE id = 5")
	require.NoError(t, err)
	require.Empty(t, rows, "a plain read reads the snapshot")
	rows, err = lq(d, b, "SELECT v FROM t WHERE id = 5 FOR UPDATE")
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(1)}}, rows)
	_, err = lq(d, b, "UPDATE t SET v = v + 6 WHERE id = 5")
	require.NoError(t, err)
	_, err = lq(d, b, "COMMIT")
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(1), int32(0)}, {int32(5), int32(7)}}, d.exec("SELECT * FROM t ORDER BY id"))
}

// TestLockedReadAfterSavepointRollback: the row a locking read kept (so
// that the write after it need not read it again) is not taken for the
// row after ROLLBACK TO SAVEPOINT undid writes made before the read and
// other writes brought the transaction back to as many writes: REPLACE
// reads the row as it is, and the index keeps no entry of a value the
// row no longer has.
func TestLockedReadAfterSavepointRollback(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY iv (v))")
	d.exec("INSERT INTO t VALUES (1, 10), (2, 20)")
	ctx := d.newCtx()
	for _, q := range []string{
		"BEGIN",
		"SAVEPOINT sp",
		"REPLACE INTO t VALUES (2, 21)",
		"UPDATE t SET v = 11 WHERE id = 1",
		"ROLLBACK TO SAVEPOINT sp",
		"REPLACE INTO t VALUES (1, 30)",
		"REPLACE INTO t VALUES (1, 40)",
		"COMMIT",
	} {
		_, err := lq(d, ctx, q)
		require.NoError(t, err, q)
	}
	require.Equal(t, []sql.Row{{int32(1), int32(40)}, {int32(2), int32(20)}}, d.exec("SELECT * FROM t ORDER BY id"))
	require.Empty(t, d.exec("SELECT id FROM t WHERE v = 30"))
	require.Empty(t, d.exec("SELECT id FROM t FORCE INDEX (iv) WHERE v = 10"))
	require.Equal(t, []sql.Row{{int32(1)}}, d.exec("SELECT id FROM t FORCE INDEX (iv) WHERE v = 40"))
}

// TestUniqueInsertsPessimistic: two pessimistic transactions inserting
// rows with the same unique value do not both commit, also when the
// second takes another lock after the first commits.
func TestUniqueInsertsPessimistic(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, u INT, UNIQUE KEY uu (u))")
	d.exec("CREATE TABLE o (id INT PRIMARY KEY)")
	d.exec("INSERT INTO o VALUES (1)")
	a, b := d.newCtx(), d.newCtx()
	_, err := lq(d, b, "SET innodb_lock_wait_timeout = 1")
	require.NoError(t, err)
	for _, q := range []string{"BEGIN", "INSERT INTO t VALUES (1, 5)"} {
		_, err := lq(d, a, q)
		require.NoError(t, err, q)
	}
	_, err = lq(d, b, "BEGIN")
	require.NoError(t, err)
	_, errB := lq(d, b, "INSERT INTO t VALUES (2, 5)")
	_, err = lq(d, a, "COMMIT")
	require.NoError(t, err)
	if errB == nil {
		_, _ = lq(d, b, "SELECT * FROM o WHERE id = 1 FOR UPDATE")
		_, errB = lq(d, b, "COMMIT")
	}
	_, _ = lq(d, b, "ROLLBACK")
	require.Error(t, errB)
	require.Equal(t, []sql.Row{{int32(1), int32(5)}}, d.exec("SELECT * FROM t ORDER BY id"))
	require.Equal(t, []sql.Row{{int32(1)}}, d.exec("SELECT id FROM t WHERE u = 5"))
}

// TestUpdateCollationEqualValue: an UPDATE to a value its index's
// collation finds equal ('abc' to 'ABC') keeps the index key, and reads
// through the index (covering ones too) give the new value.
func TestUpdateCollationEqualValue(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, u VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, KEY ks (s), UNIQUE KEY ku (u))")
	d.exec("INSERT INTO t VALUES (1, 'abc', 'xyz'), (2, 'b', 'c')")
	d.exec("UPDATE t SET s = 'ABC', u = 'XYZ' WHERE id = 1")
	require.Equal(t, []sql.Row{{"ABC"}}, d.exec("SELECT s FROM t FORCE INDEX (ks) WHERE s = 'abc'"))
	require.Equal(t, []sql.Row{{"XYZ"}}, d.exec("SELECT u FROM t FORCE INDEX (ku) WHERE u = 'xyz'"))
	require.Equal(t, []sql.Row{{"ABC"}, {"b"}}, d.exec("SELECT s FROM t FORCE INDEX (ks) ORDER BY s"))
	require.Equal(t, []sql.Row{{int32(1), "ABC", "XYZ"}}, d.exec("SELECT * FROM t WHERE id = 1"))
}

// TestDeleteAllUnderRowLock: DELETE FROM t without a WHERE (a range
// deletion) and a transaction holding a row's lock and updating it do not
// both commit with the row surviving the DELETE.
func TestDeleteAllUnderRowLock(t *testing.T) {
	for _, schema := range []string{"id INT PRIMARY KEY, v INT, KEY kv (v)", "id INT PRIMARY KEY, v INT"} {
		t.Run(schema, func(t *testing.T) { testDeleteAllUnderRowLock(t, schema) })
	}
}

func testDeleteAllUnderRowLock(t *testing.T, schema string) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (" + schema + ")")
	d.exec("INSERT INTO t VALUES (1, 10), (2, 20)")
	a, b := d.newCtx(), d.newCtx()
	_, err := lq(d, b, "SET innodb_lock_wait_timeout = 1")
	require.NoError(t, err)
	for _, q := range []string{"BEGIN", "UPDATE t SET v = 11 WHERE id = 1"} {
		_, err := lq(d, a, q)
		require.NoError(t, err, q)
	}
	_, errB := lq(d, b, "DELETE FROM t")
	_, errA := lq(d, a, "COMMIT")
	t.Logf("delete: %v; commit: %v", errB, errA)
	if errB == nil {
		require.Error(t, errA, "the row lock holder's update of a row the DELETE removed")
		require.Empty(t, d.exec("SELECT * FROM t"))
	} else {
		require.NoError(t, errA)
		require.Equal(t, []sql.Row{{int32(1), int32(11)}, {int32(2), int32(20)}}, d.exec("SELECT * FROM t ORDER BY id"))
	}
}
