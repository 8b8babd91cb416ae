package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"
)

// mdlOwner returns a transaction of its own session, as the metadata lock
// table knows owners.
func mdlOwner() *txn { return &txn{sess: &Session{}} }

// mdlAcquire acquires in the background; the channel yields the result.
func mdlAcquire(m *mdlTable, t *txn, id uint64, mode mdlMode, wait time.Duration) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := m.acquire(context.Background(), t, id, mode, wait)
		ch <- err
	}()
	return ch
}

// waitQueued waits until n requests are queued in m (the test's own
// timeout bounds it).
func waitQueued(m *mdlTable, n int) {
	for {
		q := 0
		for _, r := range m.rows() {
			if !r.granted {
				q++
			}
		}
		if q >= n {
			return
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

func requireGranted(t *testing.T, ch <-chan error) {
	t.Helper()
	require.NoError(t, <-ch)
}

func requirePending(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("granted (%v), expected to wait", err)
	default:
	}
}

// TestMDLQueue: MySQL's compatibility of the modes and FIFO waiting. A
// queued exclusive request keeps new shared-write requests out (DDL is not
// starved by a stream of writers); shared-no-write lets readers in and
// keeps writers out; a session's own locks never conflict.
func TestMDLQueue(t *testing.T) {
	const id = 7
	var m mdlTable
	w1, w2, ddl, w3 := mdlOwner(), mdlOwner(), mdlOwner(), mdlOwner()
	requireGranted(t, mdlAcquire(&m, w1, id, mdlSharedWrite, time.Hour))
	requireGranted(t, mdlAcquire(&m, w2, id, mdlSharedWrite, time.Hour))
	x := mdlAcquire(&m, ddl, id, mdlExclusive, time.Hour)
	waitQueued(&m, 1)
	sw := mdlAcquire(&m, w3, id, mdlSharedWrite, time.Hour)
	waitQueued(&m, 2)
	m.release(w1, id)
	requirePending(t, x)
	m.release(w2, id)
	requireGranted(t, x)
	requirePending(t, sw)
	// The same session: granted over its own exclusive lock.
	same := &txn{sess: ddl.sess}
	requireGranted(t, mdlAcquire(&m, same, id, mdlSharedWrite, time.Hour))
	m.release(same, id)
	m.release(ddl, id)
	requireGranted(t, sw)
	m.release(w3, id)
	require.Empty(t, m.rows())

	// Shared-no-write (an index build): readers in, writers wait, the
	// wait ends at its timeout with 1205.
	build, r, w := mdlOwner(), mdlOwner(), mdlOwner()
	requireGranted(t, mdlAcquire(&m, build, id, mdlSharedNoWrite, time.Hour))
	requireGranted(t, mdlAcquire(&m, r, id, mdlSharedRead, time.Hour))
	err := <-mdlAcquire(&m, w, id, mdlSharedWrite, time.Millisecond)
	require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
	// A reader queued behind no writer is granted; after the timed-out
	// writer left, nothing is queued.
	require.Len(t, m.rows(), 2)
	// An upgrade waits only for the holders, not for the queue.
	sw = mdlAcquire(&m, w, id, mdlSharedWrite, time.Hour)
	waitQueued(&m, 1)
	up := mdlAcquire(&m, r, id, mdlExclusive, time.Hour)
	waitQueued(&m, 2)
	m.release(build, id)
	requireGranted(t, up)
	requirePending(t, sw)
	m.release(r, id)
	requireGranted(t, sw)
	m.release(w, id)
	require.Empty(t, m.rows())
}

// TestMDLCancel: a killed statement stops waiting, and the requests queued
// behind it go on.
func TestMDLCancel(t *testing.T) {
	var m mdlTable
	holder, ddl, w := mdlOwner(), mdlOwner(), mdlOwner()
	requireGranted(t, mdlAcquire(&m, holder, 1, mdlSharedRead, time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	x := make(chan error, 1)
	go func() {
		_, err := m.acquire(ctx, ddl, 1, mdlExclusive, time.Hour)
		x <- err
	}()
	waitQueued(&m, 1)
	sw := mdlAcquire(&m, w, 1, mdlSharedWrite, time.Hour)
	waitQueued(&m, 2)
	cancel()
	require.ErrorIs(t, <-x, context.Canceled)
	requireGranted(t, sw)
}

// TestMDLRace: many owners taking and releasing random modes on a few
// tables never hold incompatible locks at once. Run with -race.
func TestMDLRace(t *testing.T) {
	var m mdlTable
	const tables = 3
	var held [tables][4]atomic.Int32
	var wg sync.WaitGroup
	var bad atomic.Int32
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 300 {
				tx := mdlOwner()
				id := uint64(rng.IntN(tables))
				mode := mdlMode(rng.IntN(4))
				if _, err := m.acquire(context.Background(), tx, id, mode, time.Hour); err != nil {
					bad.Add(1)
					return
				}
				held[id][mode].Add(1)
				for other := range mdlMode(4) {
					n := held[id][other].Load()
					if other == mode {
						n--
					}
					if n > 0 && !mdlCompatible[other][mode] {
						bad.Add(1)
					}
				}
				runtime.Gosched()
				held[id][mode].Add(-1)
				m.release(tx, id)
			}
		}()
	}
	wg.Wait()
	require.Zero(t, bad.Load())
	require.Empty(t, m.rows())
}

// waitMDLQueued waits until a request for a metadata lock of d's store is
// queued.
func waitMDLQueued(d *testDB) { waitQueued(&d.s.mdl, 1) }

// TestDDLWaitsForWriters: a DDL statement on a table an open transaction
// has written waits for that transaction's end, which commits, and then
// runs over its rows. (Without metadata locks the DDL ran and the
// transaction's commit failed with 1213; MySQL 8 makes the DDL wait, as
// here.)
func TestDDLWaitsForWriters(t *testing.T) {
	for _, tc := range []struct {
		ddl  string
		rows int // rows of t after both
	}{
		{"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 0", 3},
		{"ALTER TABLE t MODIFY v BIGINT", 3},
		{"TRUNCATE TABLE t", 0},
		{"DROP TABLE t", -1},
		{"RENAME TABLE t TO t2", -1},
		{"DROP DATABASE mydb", -1},
		{"CREATE INDEX iv ON t (v)", 3},
		{"CREATE UNIQUE INDEX uv ON t (v)", 3},
		{"ALTER TABLE t ADD INDEX iv (v)", 3},
		{"ALTER TABLE t DROP INDEX kv", 3},
	} {
		t.Run(tc.ddl, func(t *testing.T) {
			d, a, b := twoSessions(t)
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, "INSERT INTO t VALUES (3, 30)")
			done := make(chan error, 1)
			go func() {
				_, err := lq(d, b, tc.ddl)
				done <- err
			}()
			waitMDLQueued(d)
			// The writer goes on while the DDL waits, and commits.
			run(t, d, a, "UPDATE t SET v = 31 WHERE id = 3")
			run(t, d, a, "COMMIT")
			require.NoError(t, <-done)
			if tc.rows < 0 {
				require.Error(t, d.execErr("SELECT * FROM t"))
				return
			}
			require.Equal(t, []sql.Row{{int64(tc.rows)}}, d.exec("SELECT COUNT(*) FROM t"))
			if tc.rows > 0 {
				require.Len(t, d.exec("SELECT id FROM t WHERE v = 31"), 1)
				// Every index agrees with the table.
				require.Equal(t, d.exec("SELECT id FROM t IGNORE INDEX (kv) WHERE v + 0 >= 0 ORDER BY id"),
					d.exec("SELECT id FROM t WHERE v >= 0 ORDER BY id"))
			}
		})
	}
}

// TestDDLLockWaitTimeout: a DDL statement waits for a writing transaction
// at most lock_wait_timeout seconds, then fails with 1205 and changes
// nothing; the transaction commits.
func TestDDLLockWaitTimeout(t *testing.T) {
	d, a, b := twoSessions(t)
	run(t, d, b, "SET lock_wait_timeout = 1")
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "UPDATE t SET v = 11 WHERE id = 1")
	_, err := lq(d, b, "ALTER TABLE t ADD COLUMN c INT")
	require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
	run(t, d, a, "COMMIT")
	require.Len(t, d.exec("SHOW COLUMNS FROM t"), 2)
	require.Equal(t, []sql.Row{{int32(11)}}, d.exec("SELECT v FROM t WHERE id = 1"))
	// Released at the commit: the DDL runs now.
	_, err = lq(d, b, "ALTER TABLE t ADD COLUMN c INT")
	require.NoError(t, err)
}

// TestMDLReleasedAtSessionEnd: a session closed in a transaction releases
// its metadata locks with the rollback. performance_schema.metadata_locks
// shows the lock and the request waiting for it.
func TestMDLReleasedAtSessionEnd(t *testing.T) {
	d, a, b := twoSessions(t)
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "INSERT INTO t VALUES (3, 30)")
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, b, "DROP TABLE t")
		done <- err
	}()
	waitMDLQueued(d)
	require.Equal(t, "[[t SHARED_WRITE GRANTED] [t EXCLUSIVE PENDING]]", fmt.Sprint(
		d.exec("SELECT OBJECT_NAME, LOCK_TYPE, LOCK_STATUS FROM performance_schema.metadata_locks ORDER BY LOCK_STATUS")))
	a.Session.(*Session).SessionEnd()
	require.NoError(t, <-done)
}

// TestCreateIndexReadersGoOn: while an index is built (its shared-no-write
// lock, held here on the build's behalf), reads of the table run and
// writes wait, up to lock_wait_timeout.
func TestCreateIndexReadersGoOn(t *testing.T) {
	d, a, _ := twoSessions(t)
	db, err := d.s.Provider().Database(d.ctx, "mydb")
	require.NoError(t, err)
	tbl, ok, err := db.GetTableInsensitive(d.ctx, "t")
	require.NoError(t, err)
	require.True(t, ok)
	id := tbl.(*Table).def.id
	build := mdlOwner()
	_, err = d.s.mdl.acquire(context.Background(), build, id, mdlSharedNoWrite, time.Hour)
	require.NoError(t, err)
	run(t, d, a, "SET lock_wait_timeout = 1")
	require.Equal(t, []sql.Row{{int64(2)}}, run(t, d, a, "SELECT COUNT(*) FROM t"))
	require.Len(t, run(t, d, a, "SELECT * FROM t WHERE id = 1"), 1)
	_, err = lq(d, a, "INSERT INTO t VALUES (3, 30)")
	require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
	_, err = lq(d, a, "UPDATE t SET v = 0")
	require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
	d.s.mdl.release(build, id)
	run(t, d, a, "INSERT INTO t VALUES (3, 30)")
	require.Equal(t, []sql.Row{{int64(3)}}, run(t, d, a, "SELECT COUNT(*) FROM t"))
}

// TestCreateIndexUnderWriters: CREATE INDEX while writers insert and update
// the table without pause completes; every writer waits for the build
// instead of failing, and the index holds every row.
func TestCreateIndexUnderWriters(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE w (id INT PRIMARY KEY, g INT, v INT)")
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	var writes atomic.Int64
	for g := range 4 {
		ctx := d.newCtx()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load() || i < 50; i++ {
				id := g*1_000_000 + i
				q := fmt.Sprintf("INSERT INTO w VALUES (%d, %d, %d)", id, g, i)
				if i%3 == 2 {
					q = fmt.Sprintf("UPDATE w SET v = v + 1 WHERE id = %d", id-1)
				}
				if _, err := lq(d, ctx, q); err != nil {
					errs <- fmt.Errorf("%s: %w", q, err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	for writes.Load() < 100 {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	ddl := d.newCtx()
	_, err := lq(d, ddl, "CREATE INDEX iv ON w (v)")
	require.NoError(t, err)
	_, err = lq(d, ddl, "ALTER TABLE w ADD UNIQUE INDEX ug (g, id)")
	require.NoError(t, err)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all := d.exec("SELECT COUNT(*) FROM w IGNORE INDEX (iv, ug)")
	require.Equal(t, all, d.exec("SELECT COUNT(*) FROM w USE INDEX (iv) WHERE v >= 0"))
	require.Equal(t, all, d.exec("SELECT COUNT(*) FROM w USE INDEX (ug) WHERE g >= 0"))
	require.Equal(t, d.exec("SELECT SUM(v) FROM w IGNORE INDEX (iv, ug)"), d.exec("SELECT SUM(v) FROM w USE INDEX (iv) WHERE v >= 0"))
}

func requireDeadlock(t *testing.T, err error) {
	t.Helper()
	require.Equal(t, mysql.ERLockDeadlock, sqlErrNum(err), "%v", err)
}

// TestMDLDeadlock: a wait that closes a cycle of metadata lock waits ends
// at once with 1213 for one transaction of the cycle, MySQL's victim: the
// lightest request (DML before DDL), the requester on a tie. The others go
// on once the victim's transaction has released its locks (the SQL layer
// rolls it back); nothing waits for lock_wait_timeout.
func TestMDLDeadlock(t *testing.T) {
	const t1, t2 = 1, 2
	t.Run("writers crossing two DDL statements", func(t *testing.T) {
		var m mdlTable
		w1, w2, d1, d2 := mdlOwner(), mdlOwner(), mdlOwner(), mdlOwner()
		requireGranted(t, mdlAcquire(&m, w1, t1, mdlSharedWrite, time.Hour))
		requireGranted(t, mdlAcquire(&m, w2, t2, mdlSharedWrite, time.Hour))
		x1 := mdlAcquire(&m, d1, t1, mdlExclusive, time.Hour)
		waitQueued(&m, 1)
		x2 := mdlAcquire(&m, d2, t2, mdlExclusive, time.Hour)
		waitQueued(&m, 2)
		// w1 queues behind d2's request, which waits for w2.
		sw1 := mdlAcquire(&m, w1, t2, mdlSharedWrite, time.Hour)
		waitQueued(&m, 3)
		// w2 behind d1's, which waits for w1: a cycle, w2 the victim.
		requireDeadlock(t, <-mdlAcquire(&m, w2, t1, mdlSharedWrite, time.Hour))
		requirePending(t, x1)
		requirePending(t, x2)
		requirePending(t, sw1)
		m.release(w2, t2) // its rollback
		requireGranted(t, x2)
		m.release(d2, t2)
		requireGranted(t, sw1)
		m.release(w1, t1)
		m.release(w1, t2)
		requireGranted(t, x1)
		m.release(d1, t1)
		require.Empty(t, m.rows())
	})
	t.Run("DML victim for a DDL requester", func(t *testing.T) {
		var m mdlTable
		w, d := mdlOwner(), mdlOwner()
		requireGranted(t, mdlAcquire(&m, d, t2, mdlExclusive, time.Hour))
		requireGranted(t, mdlAcquire(&m, w, t1, mdlSharedWrite, time.Hour))
		sw := mdlAcquire(&m, w, t2, mdlSharedWrite, time.Hour)
		waitQueued(&m, 1)
		// d closes the cycle; w, waiting already, is woken as the victim.
		x := mdlAcquire(&m, d, t1, mdlExclusive, time.Hour)
		requireDeadlock(t, <-sw)
		requirePending(t, x)
		m.release(w, t1)
		requireGranted(t, x)
		m.release(d, t1)
		m.release(d, t2)
		require.Empty(t, m.rows())
	})
	t.Run("two DDL statements in opposite orders", func(t *testing.T) {
		var m mdlTable
		d1, d2 := mdlOwner(), mdlOwner()
		requireGranted(t, mdlAcquire(&m, d1, t1, mdlExclusive, time.Hour))
		requireGranted(t, mdlAcquire(&m, d2, t2, mdlSharedNoWrite, time.Hour))
		x := mdlAcquire(&m, d1, t2, mdlExclusive, time.Hour)
		waitQueued(&m, 1)
		requireDeadlock(t, <-mdlAcquire(&m, d2, t1, mdlExclusive, time.Hour))
		m.release(d2, t2)
		requireGranted(t, x)
	})
	t.Run("read then write under a queued DDL", func(t *testing.T) {
		// MySQL gives the pending EXCLUSIVE request priority over w's new
		// SHARED_WRITE: w waits for d, which waits for w's SHARED_READ.
		// w (DML) is the victim.
		var m mdlTable
		w, d := mdlOwner(), mdlOwner()
		requireGranted(t, mdlAcquire(&m, w, t1, mdlSharedRead, time.Hour))
		x := mdlAcquire(&m, d, t1, mdlExclusive, time.Hour)
		waitQueued(&m, 1)
		requireDeadlock(t, <-mdlAcquire(&m, w, t1, mdlSharedWrite, time.Hour))
		requirePending(t, x)
		m.release(w, t1) // its rollback
		requireGranted(t, x)
		m.release(d, t1)
		require.Empty(t, m.rows())
	})
	t.Run("read then write", func(t *testing.T) {
		// With no DDL queued the write lock is granted at once, and one
		// queued after it waits for the writer's end.
		var m mdlTable
		w, r, d := mdlOwner(), mdlOwner(), mdlOwner()
		requireGranted(t, mdlAcquire(&m, w, t1, mdlSharedRead, time.Hour))
		requireGranted(t, mdlAcquire(&m, r, t1, mdlSharedRead, time.Hour))
		requireGranted(t, mdlAcquire(&m, w, t1, mdlSharedWrite, time.Hour))
		x := mdlAcquire(&m, d, t1, mdlExclusive, time.Hour)
		waitQueued(&m, 1)
		m.release(r, t1)
		requirePending(t, x)
		m.release(w, t1)
		requireGranted(t, x)
		m.release(d, t1)
		require.Empty(t, m.rows())
	})
	t.Run("two upgrades", func(t *testing.T) {
		var m mdlTable
		a, b, w := mdlOwner(), mdlOwner(), mdlOwner()
		requireGranted(t, mdlAcquire(&m, a, t1, mdlSharedRead, time.Hour))
		requireGranted(t, mdlAcquire(&m, b, t1, mdlSharedRead, time.Hour))
		up := mdlAcquire(&m, a, t1, mdlExclusive, time.Hour)
		waitQueued(&m, 1)
		sw := mdlAcquire(&m, w, t1, mdlSharedWrite, time.Hour)
		waitQueued(&m, 2)
		// b's upgrade waits for a's, which waits for b's read lock: the
		// requester is the victim.
		requireDeadlock(t, <-mdlAcquire(&m, b, t1, mdlExclusive, time.Hour))
		requirePending(t, up)
		m.release(b, t1)
		requireGranted(t, up)
		requirePending(t, sw)
		m.release(a, t1)
		requireGranted(t, sw)
	})
	t.Run("no cycle", func(t *testing.T) {
		// A chain of waits, and a session's own locks, are no deadlock.
		var m mdlTable
		w1, d, w2 := mdlOwner(), mdlOwner(), mdlOwner()
		same := &txn{sess: w1.sess}
		requireGranted(t, mdlAcquire(&m, w1, t1, mdlSharedWrite, time.Hour))
		requireGranted(t, mdlAcquire(&m, same, t2, mdlExclusive, time.Hour))
		x := mdlAcquire(&m, d, t1, mdlExclusive, time.Hour)
		waitQueued(&m, 1)
		sw := mdlAcquire(&m, w2, t1, mdlSharedWrite, time.Hour)
		waitQueued(&m, 2)
		// w1 waits for nobody on t2 (its session holds it); w2 waits for
		// d, which waits for w1.
		requireGranted(t, mdlAcquire(&m, w1, t2, mdlSharedWrite, time.Hour))
		requirePending(t, x)
		requirePending(t, sw)
		m.release(w1, t1)
		requireGranted(t, x)
		m.release(d, t1)
		requireGranted(t, sw)
	})
	t.Run("search depth", func(t *testing.T) {
		// A chain longer than MySQL's search depth counts as a deadlock.
		var m mdlTable
		owners := make([]*txn, mdlMaxSearchDepth+2)
		for i := range owners {
			owners[i] = mdlOwner()
			requireGranted(t, mdlAcquire(&m, owners[i], uint64(i), mdlSharedWrite, time.Hour))
		}
		var pending []<-chan error
		for i := 1; i < len(owners)-1; i++ {
			pending = append(pending, mdlAcquire(&m, owners[i], uint64(i-1), mdlExclusive, time.Hour))
			waitQueued(&m, i)
		}
		last := len(owners) - 1
		requireDeadlock(t, <-mdlAcquire(&m, owners[last], uint64(last-1), mdlExclusive, time.Hour))
		for _, p := range pending {
			requirePending(t, p)
		}
		for i := range owners {
			m.release(owners[i], uint64(i))
		}
		for _, p := range pending {
			require.NoError(t, <-p)
		}
	})
}

// TestMDLDeadlockRace: owners each taking two locks in random modes on
// random tables (upgrades too), waiting without a useful bound, all finish:
// every cycle their waits close is found, and its victim lets go of its
// locks. Incompatible locks are never held together. Run with -race.
func TestMDLDeadlockRace(t *testing.T) {
	var m mdlTable
	const tables = 3
	var held [tables][4]atomic.Int32
	var bad, deadlocks atomic.Int32
	hold := func(id uint64, mode mdlMode) {
		held[id][mode].Add(1)
		for other := range mdlMode(4) {
			n := held[id][other].Load()
			if other == mode {
				n--
			}
			if n > 0 && !mdlCompatible[other][mode] {
				bad.Add(1)
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for range 300 {
				tx := mdlOwner()
				var ids []uint64
				var modes []mdlMode
				for range 2 {
					id, mode := uint64(rng.IntN(tables)), mdlMode(rng.IntN(4))
					_, err := m.acquire(context.Background(), tx, id, mode, time.Hour)
					if err != nil {
						if sqlErrNum(err) != mysql.ERLockDeadlock {
							bad.Add(1)
						}
						deadlocks.Add(1)
						break
					}
					// An upgrade holds the stronger mode only.
					for i, x := range ids {
						if x == id {
							held[id][modes[i]].Add(-1)
							mode = max(mode, modes[i])
							ids, modes = slices.Delete(ids, i, i+1), slices.Delete(modes, i, i+1)
							break
						}
					}
					hold(id, mode)
					ids, modes = append(ids, id), append(modes, mode)
					runtime.Gosched()
				}
				for i, id := range ids {
					held[id][modes[i]].Add(-1)
					m.release(tx, id)
				}
			}
		}()
	}
	wg.Wait()
	require.Zero(t, bad.Load())
	require.Empty(t, m.rows())
	t.Logf("%d deadlocks", deadlocks.Load())
}

// TestMDLDeadlockSQL: a transaction that wrote t1 and then writes t2, which
// a RENAME TABLE renaming t2 and then t1 locks, waits for the RENAME, which
// waits for it: the transaction (DML) is the victim, fails with 1213 and
// is rolled back, and the RENAME goes on at once.
func TestMDLDeadlockSQL(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t1 (id INT PRIMARY KEY)")
	d.exec("CREATE TABLE t2 (id INT PRIMARY KEY)")
	a, b := d.newCtx(), d.newCtx()
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "INSERT INTO t1 VALUES (1)")
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, b, "RENAME TABLE t2 TO u2, t1 TO u1")
		done <- err
	}()
	waitMDLQueued(d) // the RENAME holds t2 and waits for t1
	_, err := lq(d, a, "INSERT INTO t2 VALUES (2)")
	requireDeadlock(t, err)
	require.NoError(t, <-done)
	// a's transaction was rolled back: its first row is gone, and the
	// session goes on in a new transaction.
	require.Empty(t, run(t, d, a, "SELECT * FROM u1"))
	run(t, d, a, "ROLLBACK")
	run(t, d, a, "INSERT INTO u1 VALUES (3)")
	require.Equal(t, []sql.Row{{int32(3)}}, d.exec("SELECT * FROM u1"))
	require.Empty(t, d.s.mdl.rows())
}

// TestAddConstraintChecksUnderLock: ALTER TABLE ... ADD CHECK and ADD
// FOREIGN KEY wait for the transactions that wrote the table (and, for a
// foreign key, the parent), then check the rows as those committed them:
// a violating row fails the statement with MySQL's 3819 or 1452 (GMS
// checked them at the statement's snapshot, and the commit failed with
// 1213), and the constraint is not added; without one it is.
func TestAddConstraintChecksUnderLock(t *testing.T) {
	for _, tc := range []struct {
		name, write, ddl string
		code             int // 0: the DDL succeeds
	}{
		{"check violated", "INSERT INTO c VALUES (3, 30)", "ALTER TABLE c ADD CONSTRAINT ck CHECK (pid < 25)", 3819},
		{"check holds", "INSERT INTO c VALUES (3, 3)", "ALTER TABLE c ADD CONSTRAINT ck CHECK (pid < 25)", 0},
		{"child row without parent", "INSERT INTO c VALUES (3, 30)", "ALTER TABLE c ADD CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id)", 1452},
		{"parent row deleted", "DELETE FROM p WHERE id = 2", "ALTER TABLE c ADD CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id)", 1452},
		{"foreign key holds", "INSERT INTO p VALUES (30)", "ALTER TABLE c ADD CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id)", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDB(t)
			d.exec("CREATE TABLE p (id INT PRIMARY KEY)")
			d.exec("CREATE TABLE c (id INT PRIMARY KEY, pid INT, KEY (pid))")
			d.exec("INSERT INTO p VALUES (1), (2)")
			d.exec("INSERT INTO c VALUES (1, 1), (2, 2)")
			a, b := d.newCtx(), d.newCtx()
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, tc.write)
			done := make(chan error, 1)
			go func() {
				_, err := lq(d, b, tc.ddl)
				done <- err
			}()
			waitMDLQueued(d)
			run(t, d, a, "COMMIT")
			err := <-done
			require.Equal(t, tc.code, sqlErrNum(err), "%v", err)
			constraints := d.exec("SELECT COUNT(*) FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_NAME = 'c' AND CONSTRAINT_TYPE <> 'PRIMARY KEY'")
			if tc.code != 0 {
				require.Equal(t, []sql.Row{{int64(0)}}, constraints)
			} else {
				require.Equal(t, []sql.Row{{int64(1)}}, constraints)
			}
			require.Empty(t, d.s.mdl.rows())
		})
	}
}

// TestReadsHoldMDL: a transaction that has read a table holds a shared-read
// lock on it to its end, as in MySQL: a DDL statement on the table waits
// for the transaction, which reads what it read before and commits.
// (Without the lock the DDL ran at once, and the transaction's reads and
// writes of the table saw it rewritten under them.) An autocommitting read
// takes no lock. Writing the table while the DDL waits is a deadlock
// (TestMDLReadThenWriteDeadlock).
func TestReadsHoldMDL(t *testing.T) {
	for _, ddl := range []string{
		"ALTER TABLE t ADD COLUMN c INT DEFAULT 5",
		"ALTER TABLE t MODIFY v BIGINT",
		"ALTER TABLE t DROP INDEX kv",
		"CREATE INDEX kv2 ON t (v)",
		"TRUNCATE TABLE t",
		"RENAME TABLE t TO t2",
		"ALTER TABLE t RENAME COLUMN v TO w",
	} {
		t.Run(ddl, func(t *testing.T) {
			d, a, b := twoSessions(t)
			run(t, d, a, "START TRANSACTION")
			require.Equal(t, []sql.Row{{int64(2)}}, run(t, d, a, "SELECT COUNT(*) FROM t"))
			done := make(chan error, 1)
			go func() {
				_, err := lq(d, b, ddl)
				done <- err
			}()
			waitMDLQueued(d)
			require.Equal(t, "[[1 10] [2 20]]", fmt.Sprint(run(t, d, a, "SELECT * FROM t ORDER BY id")))
			require.Equal(t, "[[2]]", fmt.Sprint(run(t, d, a, "SELECT id FROM t WHERE v = 20")))
			requirePending(t, done)
			run(t, d, a, "COMMIT")
			require.NoError(t, <-done)
			require.Empty(t, d.s.mdl.rows())
		})
	}
	// Autocommitting reads lock nothing: they run while a DDL statement
	// waits for a transaction.
	d, a, b := twoSessions(t)
	c := d.newCtx()
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "SELECT * FROM t WHERE id = 1")
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, b, "ALTER TABLE t ADD COLUMN c INT")
		done <- err
	}()
	waitMDLQueued(d)
	require.Len(t, run(t, d, c, "SELECT * FROM t"), 2)
	run(t, d, a, "COMMIT")
	require.NoError(t, <-done)
}

// TestTableDefChanged: a transaction whose snapshot predates a DDL
// statement on a table it had not used gets MySQL's 1412 when it then reads
// or writes the table, where it read the old table (its UPDATE matched no
// row after a copying ALTER) or its commit failed with 1213.
func TestTableDefChanged(t *testing.T) {
	for _, q := range []string{"UPDATE t SET v = v + 1 WHERE id = 1", "SELECT * FROM t"} {
		t.Run(q, func(t *testing.T) {
			d, a, b := twoSessions(t)
			d.exec("CREATE TABLE other (id INT PRIMARY KEY)")
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, "SELECT * FROM other")
			run(t, d, b, "ALTER TABLE t ADD COLUMN c INT DEFAULT 5")
			_, err := lq(d, a, q)
			require.Equal(t, 1412, sqlErrNum(err), "%v", err)
			run(t, d, a, "ROLLBACK")
			run(t, d, a, q)
		})
	}
}

// TestMDLReadThenWriteDeadlock: a transaction that read a table, and then
// writes it while a DDL statement waits for the transaction's shared-read
// lock, waits for the DDL (MySQL gives a pending EXCLUSIVE request priority
// over new SHARED_WRITE ones), which waits for it: MySQL's "read, ALTER
// waits, write: deadlock". The transaction (DML) is the victim: the write
// fails with 1213 at once, the transaction is rolled back, its earlier
// writes with it, and the session is outside any transaction: the next
// statement autocommits, and a ROLLBACK after it undoes nothing. The DDL
// then runs.
func TestMDLReadThenWriteDeadlock(t *testing.T) {
	for _, write := range []string{
		"UPDATE t SET v = v + 1 WHERE id = 1",
		"INSERT INTO t VALUES (3, 30)",
		"DELETE FROM t WHERE id = 2",
	} {
		t.Run(write, func(t *testing.T) {
			d, a, b := twoSessions(t)
			d.exec("CREATE TABLE other (id INT PRIMARY KEY)")
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, "INSERT INTO other VALUES (1)")
			require.Len(t, run(t, d, a, "SELECT * FROM t"), 2)
			done := make(chan error, 1)
			go func() {
				_, err := lq(d, b, "ALTER TABLE t ADD COLUMN c INT DEFAULT 5")
				done <- err
			}()
			waitMDLQueued(d)
			_, err := lq(d, a, write)
			requireDeadlock(t, err)
			require.NoError(t, <-done)
			require.Len(t, d.exec("SHOW COLUMNS FROM t"), 3)
			require.Equal(t, "[[1 10 5] [2 20 5]]", fmt.Sprint(d.exec("SELECT * FROM t ORDER BY id")))
			// Rolled back, and outside a transaction: the next statement
			// autocommits.
			require.Empty(t, d.exec("SELECT * FROM other"))
			run(t, d, a, "INSERT INTO other VALUES (2)")
			require.Equal(t, "[[2]]", fmt.Sprint(d.exec("SELECT * FROM other")))
			run(t, d, a, "ROLLBACK")
			require.Equal(t, "[[2]]", fmt.Sprint(d.exec("SELECT * FROM other")))
			require.Empty(t, d.s.mdl.rows())
		})
	}
}

// TestMDLReleasedByFailedDDL: a DDL statement that fails after it has locked
// its tables releases the locks when it ends, as MySQL does, not at the
// session's next statement: another session's DDL on the table runs while
// the first session stays idle. Both with autocommit and without.
func TestMDLReleasedByFailedDDL(t *testing.T) {
	for _, ddl := range []string{
		"CREATE UNIQUE INDEX uv ON t (v)",
		"ALTER TABLE t ADD UNIQUE INDEX uv (v)",
		"ALTER TABLE t MODIFY v TINYINT",
		"ALTER TABLE t ADD CONSTRAINT ck CHECK (v < 100)",
		"ALTER TABLE t ADD COLUMN c INT NOT NULL, ADD UNIQUE INDEX uc (c)",
		"RENAME TABLE t TO t2, nosuch TO t3",
		"DROP TABLE t, nosuch",
		"ALTER TABLE t ADD PRIMARY KEY (v)",
	} {
		for _, autocommit := range []int{1, 0} {
			t.Run(fmt.Sprintf("%s/autocommit=%d", ddl, autocommit), func(t *testing.T) {
				d, a, b := twoSessions(t)
				d.exec("INSERT INTO t VALUES (3, 200), (4, 200)")
				run(t, d, a, fmt.Sprintf("SET autocommit = %d", autocommit))
				_, err := lq(d, a, ddl)
				require.Error(t, err)
				// a is idle: its failed statement holds nothing.
				require.Empty(t, d.s.mdl.rows())
				run(t, d, b, "SET lock_wait_timeout = 1")
				_, err = lq(d, b, "ALTER TABLE t ADD COLUMN z INT")
				require.NoError(t, err)
				require.Equal(t, []sql.Row{{int64(4)}}, run(t, d, a, "SELECT COUNT(*) FROM t"))
			})
		}
	}
}

// TestDeadlocksVictimLeavesTransaction: a row lock deadlock's victim is
// rolled back as InnoDB's is, its earlier writes with it, and its session is
// outside any transaction: the next statement autocommits, as in MySQL.
// The other transaction goes on and commits.
func TestDeadlocksVictimLeavesTransaction(t *testing.T) {
	d, a, b := twoSessions(t)
	d.exec("CREATE TABLE other (id INT PRIMARY KEY)")
	run(t, d, a, "BEGIN")
	run(t, d, b, "BEGIN")
	run(t, d, a, "INSERT INTO other VALUES (1)")
	run(t, d, a, "UPDATE t SET v = 11 WHERE id = 1")
	run(t, d, b, "UPDATE t SET v = 22 WHERE id = 2")
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, b, "UPDATE t SET v = 12 WHERE id = 1")
		done <- err
	}()
	for {
		waits, err := d.s.LockWaits(d.ctx)
		require.NoError(t, err)
		if len(waits) == 1 {
			break
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	// a closes the cycle: the requester is the victim.
	_, err := lq(d, a, "UPDATE t SET v = 21 WHERE id = 2")
	requireDeadlock(t, err)
	require.NoError(t, <-done)
	run(t, d, b, "COMMIT")
	require.Equal(t, "[[1 12] [2 22]]", fmt.Sprint(d.exec("SELECT * FROM t ORDER BY id")))
	require.Empty(t, d.exec("SELECT * FROM other"))
	run(t, d, a, "INSERT INTO other VALUES (2)")
	require.Equal(t, "[[2]]", fmt.Sprint(d.exec("SELECT * FROM other")))
	run(t, d, a, "ROLLBACK")
	require.Equal(t, "[[2]]", fmt.Sprint(d.exec("SELECT * FROM other")))
}

// TestConsistentSnapshotKeptAcrossDDL: a transaction begun WITH CONSISTENT
// SNAPSHOT reads its snapshot at its first statement even when a DDL
// statement (on another table) committed in between, which lets a plain
// BEGIN's first statement begin afresh (MySQL takes a plain transaction's
// snapshot at its first read). A DDL on the table it reads gives 1412.
func TestConsistentSnapshotKeptAcrossDDL(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
	d.exec("INSERT INTO t VALUES (1, 1), (2, 2)")
	for _, c := range []struct {
		begin string
		want  string
	}{
		{"START TRANSACTION WITH CONSISTENT SNAPSHOT", "[[2]]"},
		{"BEGIN", "[[3]]"},
	} {
		d.exec("DELETE FROM t WHERE id = 3")
		d.exec("DROP TABLE IF EXISTS zz")
		b := d.newCtx()
		_, err := lq(d, b, c.begin)
		require.NoError(t, err)
		d.exec("INSERT INTO t VALUES (3, 3)")
		d.exec("CREATE TABLE zz (id INT PRIMARY KEY)")
		rows, err := lq(d, b, "SELECT COUNT(*) FROM t")
		require.NoError(t, err, c.begin)
		require.Equal(t, c.want, fmt.Sprint(rows), c.begin)
		_, err = lq(d, b, "COMMIT")
		require.NoError(t, err)
	}
	b := d.newCtx()
	_, err := lq(d, b, "START TRANSACTION WITH CONSISTENT SNAPSHOT")
	require.NoError(t, err)
	d.exec("ALTER TABLE t ADD COLUMN w INT")
	_, err = lq(d, b, "SELECT COUNT(*) FROM t")
	require.Equal(t, 1412, sqlErrNum(err), "%v", err)
	_, err = lq(d, b, "ROLLBACK")
	require.NoError(t, err)
}

// TestForUpdateTakesSharedWrite: SELECT ... FOR UPDATE in a transaction
// takes SHARED_WRITE on its table, as MySQL's does (a plain read
// SHARED_READ, which FOR UPDATE raises on a table already read): an index
// build, which keeps writers out, then waits for the transaction.
func TestForUpdateTakesSharedWrite(t *testing.T) {
	d, a, b := twoSessions(t)
	locks := func() string {
		return fmt.Sprint(d.exec("SELECT OBJECT_NAME, LOCK_TYPE, LOCK_STATUS FROM performance_schema.metadata_locks"))
	}
	mustRun := func(ctx *sql.Context, q string) {
		_, err := lq(d, ctx, q)
		require.NoError(t, err, q)
	}
	mustRun(a, "START TRANSACTION")
	mustRun(a, "SELECT * FROM t WHERE id = 1")
	require.Equal(t, "[[t SHARED_READ GRANTED]]", locks())
	mustRun(a, "SELECT * FROM t WHERE id = 1 FOR SHARE")
	require.Equal(t, "[[t SHARED_READ GRANTED]]", locks())
	mustRun(a, "SELECT * FROM t WHERE id = 1 FOR UPDATE")
	require.Equal(t, "[[t SHARED_WRITE GRANTED]]", locks())
	mustRun(b, "SET lock_wait_timeout = 1")
	_, err := lq(d, b, "CREATE INDEX ix ON t (v, id)")
	require.Equal(t, mysql.ERLockWaitTimeout, sqlErrNum(err), "%v", err)
	mustRun(a, "COMMIT")

	mustRun(a, "START TRANSACTION")
	mustRun(a, "SELECT * FROM t WHERE id = 2 FOR UPDATE")
	require.Equal(t, "[[t SHARED_WRITE GRANTED]]", locks())
	mustRun(a, "ROLLBACK")
	require.Equal(t, "[]", locks())
}
