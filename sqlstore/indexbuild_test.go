package sqlstore

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/storage"
)

// bulkRows is above bulkIndexMinEntries, so that index builds load.
const bulkRows = 3 * bulkIndexMinEntries

// fillBulk creates t (id, v, s) with n rows: v = id % 1000 (repeats), u =
// id * 7 (unique), s a string.
func fillBulk(d *testDB, n int) {
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT, u INT, s VARCHAR(20))")
	for from := 0; from < n; from += 1000 {
		d.exec(insertValues("t", from, min(from+1000, n), func(i int) string {
			return fmt.Sprintf("(%d, %d, %d, 's%05d')", i, i%1000, i*7, (i*37)%n)
		}))
	}
}

// requireIndexAgrees checks that reads through index ix give what a full
// scan gives.
func requireIndexAgrees(t *testing.T, d *testDB, ix, col string) {
	t.Helper()
	scan := d.exec(fmt.Sprintf("SELECT COUNT(*), SUM(id) FROM t IGNORE INDEX (%s) WHERE %s + 0 >= 0 OR %s IS NULL", ix, col, col))
	viaIndex := d.exec(fmt.Sprintf("SELECT COUNT(*), SUM(id) FROM t FORCE INDEX (%s) WHERE %s >= 0 OR %s IS NULL", ix, col, col))
	require.Equal(t, scan, viaIndex, "index %s", ix)
	some := d.exec(fmt.Sprintf("SELECT id FROM t IGNORE INDEX (%s) WHERE %s + 0 = (SELECT MAX(%s) FROM t) ORDER BY id", ix, col, col))
	got := d.exec(fmt.Sprintf("SELECT id FROM t FORCE INDEX (%s) WHERE %s = (SELECT MAX(%s) FROM t) ORDER BY id", ix, col, col))
	require.Equal(t, some, got)
}

// noBulkEngine is the embedded engine behind the contract's required
// interface only: no storage.BulkLoader, as the TiKV backend.
type noBulkEngine struct{ storage.Engine }

func TestIndexBuild(t *testing.T) {
	for _, mode := range []string{"bulk", "bulk spilled", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			var d *testDB
			switch mode {
			case "bulk":
				d = newTestDB(t)
			case "bulk spilled":
				d = newTestDBWith(t, &testOptions{NoSync: true, Options: Options{IndexBuildMemory: 64 << 10}})
			case "transaction":
				dir := t.TempDir()
				db, err := kv.Open(dir, &kv.Options{})
				require.NoError(t, err)
				s, err := New(noBulkEngine{kv.NewEngine(db, kv.NoSync)}, &Options{})
				require.NoError(t, err)
				t.Cleanup(func() { s.Close() })
				d = &testDB{t: t, dir: dir, s: s, e: s.NewEngine()}
				d.ctx = d.newCtx()
				d.exec("CREATE DATABASE IF NOT EXISTS mydb")
			}
			fillBulk(d, bulkRows)
			d.exec("INSERT INTO t VALUES (-1, NULL, NULL, NULL), (-2, NULL, NULL, NULL)")
			d.exec("CREATE INDEX iv ON t (v)")
			d.exec("ALTER TABLE t ADD UNIQUE INDEX iu (u), ADD INDEX isv (s, v)")
			requireIndexAgrees(t, d, "iv", "v")
			requireIndexAgrees(t, d, "iu", "u")
			require.Equal(t, []sql.Row{{int32(5)}}, d.exec("SELECT id FROM t WHERE u = 35"))
			require.Equal(t, d.exec("SELECT id FROM t IGNORE INDEX (iv) WHERE v + 0 = 7 ORDER BY id"), d.exec("SELECT id FROM t WHERE v = 7 ORDER BY id"))

			// The unique index is enforced from then on.
			err := d.execErr("INSERT INTO t VALUES (100000, 1, 35, 'x')")
			require.Equal(t, mysql.ERDupEntry, MySQLError(err).Num)

			// A duplicate in the rows fails the build with 1062 naming the key,
			// and leaves no index behind.
			err = d.execErr("CREATE UNIQUE INDEX uv ON t (v)")
			require.Equal(t, mysql.ERDupEntry, MySQLError(err).Num)
			require.Contains(t, err.Error(), "for key 't.uv'")
			indexes := len(d.exec("SHOW INDEXES FROM t"))
			require.Equal(t, 5, indexes, "PRIMARY, iv, iu, isv (two columns)")
			// An index built afterwards is right.
			d.exec("CREATE INDEX iv2 ON t (v)")
			requireIndexAgrees(t, d, "iv2", "v")

			d.reopen()
			requireIndexAgrees(t, d, "iv", "v")
			requireIndexAgrees(t, d, "iu", "u")
		})
	}
}

// TestIndexBuildSnapshots: a transaction whose snapshot predates the index
// reads as before while the index is built and committed, and readers that
// start afterwards use the index.
func TestIndexBuildSnapshots(t *testing.T) {
	d := newTestDB(t)
	fillBulk(d, bulkRows)
	a := d.newCtx()
	run(t, d, a, "START TRANSACTION")
	before := run(t, d, a, "SELECT COUNT(*), SUM(v) FROM t WHERE v < 10")
	d.exec("DELETE FROM t WHERE id < 100")
	// The build waits for the transaction that read the table (its
	// shared-read metadata lock), which reads its snapshot meanwhile.
	done := make(chan error, 1)
	go func() {
		_, err := lq(d, d.newCtx(), "CREATE INDEX iv ON t (v)")
		done <- err
	}()
	waitMDLQueued(d)
	require.Equal(t, before, run(t, d, a, "SELECT COUNT(*), SUM(v) FROM t WHERE v < 10"))
	run(t, d, a, "COMMIT")
	require.NoError(t, <-done)
	requireIndexAgrees(t, d, "iv", "v")
	require.NotEqual(t, before, d.exec("SELECT COUNT(*), SUM(v) FROM t WHERE v < 10"))
}

// TestIndexBuildConcurrentWrite: a row committed to the table while the
// build reads an older snapshot fails the build's commit with 1213 (its
// index would lack the row); the writer's row stays, and the build run
// again indexes it. The failed build's entries are removed when its index
// ID is taken again (after a restart, here).
func TestIndexBuildConcurrentWrite(t *testing.T) {
	d := newTestDB(t)
	fillBulk(d, bulkRows)
	a, b := d.newCtx(), d.newCtx()
	run(t, d, a, "START TRANSACTION")
	run(t, d, a, "SELECT COUNT(*) FROM t")
	run(t, d, b, "INSERT INTO t VALUES (100001, 4242, 0, 'new')")
	run(t, d, b, "DELETE FROM t WHERE id < 500")
	_, err := query(d.e, a, "CREATE INDEX iv ON t (v)")
	if err == nil {
		_, err = query(d.e, a, "COMMIT")
	}
	requireConflict(t, err)
	_, _ = query(d.e, a, "ROLLBACK")
	require.Len(t, d.exec("SHOW INDEXES FROM t"), 1)
	// The failed build's entries are gone: the only table's keys are its rows.
	it, err := d.s.engine.Latest().NewIter(&storage.IterOptions{LowerBound: []byte{0x02}, UpperBound: []byte{0x03}})
	require.NoError(t, err)
	keys := 0
	for ok := it.First(); ok; ok = it.Next() {
		keys++
	}
	require.NoError(t, it.Close())
	require.Equal(t, []sql.Row{{int64(keys)}}, d.exec("SELECT COUNT(*) FROM t"))

	for _, restart := range []bool{false, true} {
		if restart {
			d.exec("DROP INDEX iv ON t")
			d.reopen()
		}
		d.exec("CREATE INDEX iv ON t (v)")
		requireIndexAgrees(t, d, "iv", "v")
		require.Equal(t, []sql.Row{{int32(100001)}}, d.exec("SELECT id FROM t WHERE v = 4242"))
	}
}

func TestEntrySorterSpills(t *testing.T) {
	s := newEntrySorter(1 << 10)
	defer s.close()
	const n = 5000
	for i := range n {
		k := fmt.Appendf(nil, "k%05d", (i*7919)%n)
		var v []byte
		if i%3 == 0 {
			v = fmt.Appendf(nil, "v%d", i)
		} else if i%3 == 1 {
			v = []byte{}
		}
		require.NoError(t, s.add(k, v))
	}
	require.NotEmpty(t, s.runs)
	i := 0
	require.NoError(t, s.each(func(k, v []byte) error {
		require.Equal(t, fmt.Sprintf("k%05d", i), string(k))
		orig := 0
		for (orig*7919)%n != i {
			orig++
		}
		switch orig % 3 {
		case 0:
			require.Equal(t, fmt.Sprintf("v%d", orig), string(v))
		case 1:
			require.NotNil(t, v)
			require.Empty(t, v)
		default:
			require.Nil(t, v)
		}
		i++
		return nil
	}))
	require.Equal(t, n, i)
}

// TestIndexBuildWhileWriting (run it with -race): writers insert, update
// and delete rows, retrying their conflicts, while CREATE INDEX builds over
// the table, retried until it commits (a build whose rows changed under it
// fails with 1213). Every write ends up indexed: afterwards the index
// agrees with the table.
func TestIndexBuildWhileWriting(t *testing.T) {
	const rows = bulkIndexMinEntries + 1000
	d := newTestDB(t)
	fillBulk(d, rows)
	var wg sync.WaitGroup
	for w := range 2 {
		ctx := d.newCtx()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				id := 200000 + w*100000 + i
				inTxn(t, d, ctx,
					fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, 'w')", id, i%1000, id*7),
					fmt.Sprintf("UPDATE t SET v = v + 1 WHERE id = %d", (i*131)%rows),
					fmt.Sprintf("DELETE FROM t WHERE id = %d", (i*257+w)%rows))
			}
		}()
	}
	conflicts := 0
	for {
		_, err := query(d.e, d.ctx, "CREATE INDEX iv ON t (v)")
		if err == nil {
			break
		}
		require.True(t, IsConflict(err), "%v", err)
		conflicts++
	}
	wg.Wait()
	t.Logf("the build conflicted %d times", conflicts)
	requireIndexAgrees(t, d, "iv", "v")
	require.Equal(t, d.exec("SELECT id FROM t IGNORE INDEX (iv) WHERE v + 0 = 3 ORDER BY id"), d.exec("SELECT id FROM t WHERE v = 3 ORDER BY id"))
}

// TestIndexBuildUnderOpenWriter: an index build over a table an open
// transaction wrote waits for the transaction (its metadata lock, mdl.go),
// which commits; the index then has its rows.
func TestIndexBuildUnderOpenWriter(t *testing.T) {
	for _, n := range []int{100, bulkRows} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			d := newTestDB(t)
			fillBulk(d, n)
			a := d.newCtx()
			run(t, d, a, "START TRANSACTION")
			run(t, d, a, "INSERT INTO t VALUES (100001, 4242, 0, 'new')")
			run(t, d, a, "UPDATE t SET v = 4343 WHERE id = 7")
			done := make(chan error, 1)
			go func() {
				_, err := query(d.e, d.newCtx(), "CREATE INDEX iv ON t (v)")
				done <- err
			}()
			waitMDLQueued(d)
			run(t, d, a, "COMMIT")
			require.NoError(t, <-done)
			requireIndexAgrees(t, d, "iv", "v")
			require.Equal(t, d.exec("SELECT id FROM t IGNORE INDEX (iv) WHERE v + 0 = 4343"), d.exec("SELECT id FROM t WHERE v = 4343"))
		})
	}
}
