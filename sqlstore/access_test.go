package sqlstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/kv/stats"
	"github.com/strata-db/strata/planner"
	"github.com/stretchr/testify/require"
)

// accessDB returns a store with
//
//	t(id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx(k)): 1000 rows, k = id % 100
//	p(x INT, y INT, z INT, PRIMARY KEY(x, y), UNIQUE KEY uz(z)): 100 rows, x = i / 10, y = i % 10, z = i
//
// flushed to a table file, so that reads go through the engine's tables.
func accessDB(t *testing.T) *testDB {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	d.exec("CREATE TABLE p (x INT, y INT, z INT, PRIMARY KEY (x, y), UNIQUE KEY uz (z))")
	d.exec(insertValues("t", 0, 1000, func(i int) string { return fmt.Sprintf("(%d, %d, 'c%d')", i, i%100, i) }))
	d.exec(insertValues("p", 0, 100, func(i int) string { return fmt.Sprintf("(%d, %d, %d)", i/10, i%10, i) }))
	require.NoError(t, d.s.kvDB().Flush())
	// Establish the row counts the planner's estimates start from.
	d.exec("SELECT COUNT(*) FROM t")
	d.exec("SELECT COUNT(*) FROM p")
	return d
}

// accessOf returns the access lines of EXPLAIN FORMAT=DEBUG q.
func (d *testDB) accessOf(q string) []string {
	d.t.Helper()
	var out []string
	q = "EXPLAIN FORMAT=DEBUG " + q
	rows, err := query(d.e, d.ctx.WithQuery(q), q)
	require.NoError(d.t, err, q)
	for _, r := range rows {
		for _, line := range strings.Split(r[0].(string), "\n") {
			if i := strings.Index(line, "access: "); i >= 0 {
				out = append(out, line[i+len("access: "):])
			}
		}
	}
	return out
}

// run runs q and returns its rows, the engine counters of its reads and
// its access plans.
func (d *testDB) run(q string) ([]sql.Row, stats.Snapshot, []string) {
	d.t.Helper()
	rows := d.exec(q)
	snap, access, ok := LastStatement(d.ctx)
	require.True(d.t, ok, q)
	return rows, snap, access
}

func inList(n, step int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(i * step)
	}
	return strings.Join(ids, ",")
}

func betweens(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("id BETWEEN %d AND %d", i*50, i*50+9)
	}
	return strings.Join(parts, " OR ")
}

// TestAccessThresholds checks that SET strata_planner moves the planner's
// thresholds for the session, and the paths of long reads by what the
// engine did: a long range read with explicit readahead and async I/O makes
// a fraction of the reads it makes without readahead, and a full scan
// starts its readahead after its first rows. The tables are read with
// pread (a mapped table in the page cache is copied without readahead).
func TestAccessThresholds(t *testing.T) {
	// A 4 MiB block cache: scans from 256 KiB read past it.
	d := newTestDBWith(t, &testOptions{NoSync: true, KV: &kv.Options{DisableMmapReads: true, CacheSize: 4 << 20}})
	d.exec("CREATE TABLE r (id INT PRIMARY KEY, pad VARCHAR(200))")
	d.exec("CREATE TABLE f (id INT PRIMARY KEY, pad VARCHAR(200))")
	pad := strings.Repeat("p", 150)
	for _, table := range []string{"r", "f"} {
		for from := 0; from < 6000; from += 1000 {
			d.exec(insertValues(table, from, from+1000, func(i int) string { return fmt.Sprintf("(%d, '%s%d')", i, pad, i) }))
		}
	}
	require.NoError(t, d.s.kvDB().Flush())
	d.exec("SELECT COUNT(*) FROM r")
	d.exec("SELECT COUNT(*) FROM f")
	counter := func(snap stats.Snapshot, name string) int64 {
		c, ok := stats.Lookup(name)
		require.True(t, ok, name)
		return snap.Get(c)
	}

	// The planner's defaults: 3,000 rows of about 170 bytes are a long range.
	long := "SELECT id FROM r WHERE id BETWEEN 0 AND 2999"
	require.Equal(t, []string{"Range(readahead=256KiB, async, no cache fill)"}, d.accessOf(long))
	rows, snap, ran := d.run(long)
	require.Len(t, rows, 3000)
	require.Equal(t, []string{"r: Range(readahead=256KiB, async, no cache fill)"}, ran)
	blocks := counter(snap, "block.cache.miss")
	require.Greater(t, blocks, int64(50), "the range spans many blocks")
	require.Greater(t, counter(snap, "prefetch.bytes.used"), int64(0))
	require.Greater(t, counter(snap, "async.read.count"), int64(0))
	require.Less(t, counter(snap, "file.read.count")*4, blocks, "readahead reads several blocks at a time")
	require.Zero(t, counter(snap, "block.cache.add"), "a scan of a sixteenth of the cache does not fill it")

	// A range whose width says nothing (open-ended) is sized from the
	// tables' indexes.
	require.Equal(t, []string{"Range(readahead=256KiB, async, no cache fill)"}, d.accessOf("SELECT id FROM r WHERE id >= 1000"))
	require.Equal(t, []string{"Range(readahead=off)"}, d.accessOf("SELECT id FROM r WHERE id >= 5990"))

	// A session's thresholds: the same kind of range, not yet cached, read
	// without readahead is a read per block.
	d.exec("SET strata_planner = 'short_range=1GiB, multiget_batch=4'")
	long = "SELECT id FROM r WHERE id BETWEEN 3000 AND 5999"
	require.Equal(t, []string{"Range(readahead=off)"}, d.accessOf(long))
	rows, snap, _ = d.run(long)
	require.Len(t, rows, 3000)
	blocks = counter(snap, "block.cache.miss")
	require.Greater(t, blocks, int64(50))
	require.Equal(t, int64(0), counter(snap, "prefetch.bytes.used"))
	require.GreaterOrEqual(t, counter(snap, "file.read.count"), blocks)
	require.Equal(t, blocks, counter(snap, "block.cache.add"))
	d.exec("SET strata_planner = 'no_fill=1GiB'")
	long = "SELECT id FROM r WHERE id BETWEEN 0 AND 2999"
	require.Equal(t, []string{"Range(readahead=256KiB, async)"}, d.accessOf(long))
	_, snap, _ = d.run(long)
	require.Equal(t, counter(snap, "block.cache.miss"), counter(snap, "block.cache.add"), "below no_fill a scan fills the cache")
	d.exec("SET strata_planner = 'short_range=1GiB, multiget_batch=4'")
	_, snap, ran = d.run("SELECT id FROM r WHERE id IN (1, 2, 3, 4, 5, 6)")
	require.Equal(t, []string{"r: MultiGet(keys=6, batch=4)"}, ran)
	require.Equal(t, int64(2), counter(snap, "multiget.batches"))

	// Another session keeps the store's thresholds.
	other := &testDB{t: t, dir: d.dir, s: d.s, e: d.e}
	other.ctx = other.newCtx()
	require.Equal(t, []string{"MultiGet(keys=6, batch=32)"}, other.accessOf("SELECT id FROM r WHERE id IN (1, 2, 3, 4, 5, 6)"))

	// A full scan reads ahead once it has returned its first rows.
	d.exec("SET strata_planner = 'full_scan_readahead=128KiB, small_limit=10'")
	full := "SELECT id FROM f"
	require.Equal(t, []string{"FullScan(readahead=128KiB after 10 rows, async, no cache fill)"}, d.accessOf(full))
	rows, snap, _ = d.run(full)
	require.Len(t, rows, 6000)
	require.Greater(t, counter(snap, "prefetch.bytes.used"), int64(0))
	require.Less(t, counter(snap, "file.read.count")*4, counter(snap, "block.cache.miss"))

	// Values that do not parse are refused with 1231, and change nothing.
	for _, bad := range []string{"batch=3", "multiget_batch", "long_range=-1", "long_range=1TB"} {
		err := d.execErr("SET strata_planner = '" + bad + "'")
		require.Equal(t, 1231, MySQLError(err).Num, bad)
	}
	require.Equal(t, []sql.Row{{"full_scan_readahead=128KiB, small_limit=10"}}, d.exec("SELECT @@strata_planner"))
	d.exec("SET strata_planner = ''")
	require.Equal(t, []string{"MultiGet(keys=6, batch=32)"}, d.accessOf("SELECT id FROM r WHERE id IN (1, 2, 3, 4, 5, 6)"))
}

// TestExplainLeavesDescribe: DESCRIBE t, a statement that explainScans
// sees as an EXPLAIN by its first word (explain.go), is left alone and
// describes the table's columns. What EXPLAIN shows for each class of
// predicate is in testdata/access_paths.
func TestExplainLeavesDescribe(t *testing.T) {
	d := accessDB(t)
	q := "DESCRIBE t"
	rows, err := query(d.e, d.ctx.WithQuery(q), q)
	require.NoError(t, err)
	require.Len(t, rows, 3)
}

// TestAccessStatusVariables reads the last statement's figures through SQL.
func TestAccessStatusVariables(t *testing.T) {
	d := accessDB(t)
	d.exec("SELECT c FROM t WHERE id IN (" + inList(100, 3) + ")")
	d.exec("SET @x = 1") // reads no table: the last statement stays
	status := map[string]any{}
	for _, r := range d.exec("SHOW STATUS LIKE 'Strata_last%'") {
		status[r[0].(string)] = r[1]
	}
	require.Equal(t, "t: MultiGet(keys=100, batch=32)", status["Strata_last_access"])
	require.Equal(t, int64(100), status["Strata_last_multiget_keys"])
	require.Equal(t, int64(0), status["Strata_last_get_calls"])
	require.Equal(t, int64(0), status["Strata_last_iter_seeks"])
	require.Len(t, status, int(stats.NumCounters)+1)
	engine := map[string]any{}
	for _, r := range d.exec("SHOW STATUS LIKE 'Strata_engine%'") {
		engine[r[0].(string)] = r[1]
	}
	require.Len(t, engine, int(stats.NumCounters))
	require.GreaterOrEqual(t, engine["Strata_engine_multiget_keys"], int64(100))
	require.Greater(t, engine["Strata_engine_commits"], int64(0))
	// SHOW STATUS itself reads no table.
	again := d.exec("SHOW STATUS LIKE 'Strata_last_multiget_keys'")
	require.Equal(t, []sql.Row{{"Strata_last_multiget_keys", int64(100)}}, again)
}

// TestAccessInTransaction checks reads of a transaction that has written:
// they see its writes, before and after a rolled-back statement.
func TestAccessInTransaction(t *testing.T) {
	d := accessDB(t)
	d.exec("START TRANSACTION")
	d.exec("UPDATE t SET c = 'new' WHERE id IN (1, 2, 3)")
	d.exec("INSERT INTO t VALUES (5000, 1, 'x')")
	// Its reads happen at once (planner.Hints.Mutable), and EXPLAIN shows
	// the plans that run.
	rows, _, ran := d.run("SELECT c FROM t WHERE id IN (0, 1, 2, 5000)")
	require.Equal(t, []sql.Row{{"c0"}, {"new"}, {"new"}, {"x"}}, rows)
	require.Equal(t, []string{"t: MultiGet(keys=4, batch=4)"}, ran)
	require.Equal(t, []sql.Row{{int32(1)}, {int32(101)}, {int32(5000)}}, d.exec("SELECT id FROM t WHERE k = 1 AND id IN (1, 101, 5000, 7)"))
	rows, _, ran = d.run("SELECT c FROM t WHERE k IN (1, 2)")
	require.Len(t, rows, 21)
	require.Equal(t, []string{"t: Scans(ranges=2, readahead=auto) then one iterator sought to each primary key"}, ran)
	require.Equal(t, []string{"Scans(ranges=2, readahead=auto) then one iterator sought to each primary key"}, d.accessOf("SELECT c FROM t WHERE k IN (1, 2)"))
	rows, _, ran = d.run("SELECT c FROM t WHERE " + betweens(3))
	require.Len(t, rows, 30)
	require.Equal(t, []string{"t: Scans(ranges=3, readahead=auto)"}, ran)
	_ = d.execErr("INSERT INTO t VALUES (6000, 1, 'y'), (5000, 1, 'dup')")
	require.Len(t, d.exec("SELECT c FROM t WHERE k IN (1, 2)"), 21)
	require.Equal(t, []sql.Row{{"new"}, {"x"}}, d.exec("SELECT c FROM t WHERE id IN (1, 5000, 6000)"))
	d.exec("ROLLBACK")
	require.Equal(t, []sql.Row{{"c1"}}, d.exec("SELECT c FROM t WHERE id IN (1, 5000)"))
}

// TestAccessStatementView checks that a statement does not see its own
// writes through a lookup: every id in the list is moved once.
func TestAccessStatementView(t *testing.T) {
	d := accessDB(t)
	d.exec("UPDATE t SET k = k + 100 WHERE k IN (5, 105, 205)")
	require.Len(t, d.exec("SELECT id FROM t WHERE k = 105"), 10)
	require.Len(t, d.exec("SELECT id FROM t WHERE k = 205"), 0)
	d.exec("UPDATE t SET id = id + 1000 WHERE id IN (10, 11, 12, 1010)")
	require.Len(t, d.exec("SELECT id FROM t WHERE id IN (1010, 1011, 1012, 2010)"), 3)
	d.exec("INSERT INTO t SELECT id + 2000, k, c FROM t WHERE " + betweens(2))
	require.Len(t, d.exec("SELECT id FROM t WHERE id >= 2000"), 20)
}

// TestAccessMatchesNaive runs queries of every shape with small planner
// thresholds (several MultiGet and fetch batches, MultiScan chunks, a
// deferred readahead that starts mid-scan) and checks that they return the
// rows of the naive mode. It runs over the embedded engine as it is and
// with its batched reads hidden (plainEngine), where the store reads one
// key or range at a time instead.
func TestAccessMatchesNaive(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("plain=%v", plain), func(t *testing.T) { testAccessMatchesNaive(t, plain) })
	}
}

func testAccessMatchesNaive(t *testing.T, plain bool) {
	d := newTestDBWith(t, &testOptions{NoSync: true, Plain: plain, Options: Options{Access: planner.Options{
		MultiGetBatch: 3, FetchBatch: 2, MultiScanChunk: 2, MultiScanAsyncBytes: 1, SmallLimit: 7,
		ShortRangeBytes: 1, LongRangeBytes: 64, MinReadahead: 4096, MaxReadahead: 8192, FullScanReadahead: 8192,
	}}})
	d.exec("CREATE TABLE w (a INT, b INT, s VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, n INT, PRIMARY KEY (a, b), KEY ks (s), KEY kn (n), UNIQUE KEY ub (b, a))")
	var sb strings.Builder
	sb.WriteString("INSERT INTO w VALUES ")
	for i := 0; i < 400; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		n := fmt.Sprint(i % 13)
		if i%17 == 0 {
			n = "NULL"
		}
		fmt.Fprintf(&sb, "(%d, %d, '%c%d', %s)", i/20, i%20, "aAbBc"[i%5], i%3, n)
	}
	d.exec(sb.String())
	require.NoError(t, d.s.kvDB().Flush())
	d.exec("INSERT INTO w VALUES (100, 1, 'z', 1), (3, 100, 'A0', NULL)") // some rows in the memtable
	d.exec("SELECT COUNT(*) FROM w")
	for _, q := range []string{
		"SELECT * FROM w WHERE a = 3 AND b IN (1, 5, 7, 9, 11, 100, 200)",
		"SELECT * FROM w WHERE a = 3 AND b IN (1, 5, 7, 9, 11) ORDER BY b DESC",
		"SELECT * FROM w WHERE a IN (1, 3, 5, 7, 9, 100)",
		"SELECT * FROM w WHERE a IN (1, 3, 5, 7, 9) ORDER BY a DESC, b DESC",
		"SELECT * FROM w WHERE a IN (1, 3, 5) AND b > 15",
		"SELECT * FROM w WHERE a > 2 AND b = 4",
		"SELECT * FROM w WHERE (a BETWEEN 1 AND 2 AND b = 3) OR (a BETWEEN 5 AND 6 AND b = 4) OR (a = 9 AND b < 3)",
		"SELECT * FROM w WHERE a BETWEEN 2 AND 12",
		"SELECT * FROM w WHERE a BETWEEN 2 AND 12 ORDER BY a DESC, b DESC",
		"SELECT a, b FROM w WHERE s IN ('a0', 'B1', 'c2')",
		"SELECT * FROM w WHERE s = 'A1'",
		"SELECT * FROM w WHERE n IS NULL",
		"SELECT * FROM w WHERE n IN (1, 4, 9) OR n IS NULL",
		"SELECT * FROM w WHERE n BETWEEN 2 AND 4 OR n BETWEEN 8 AND 9 OR n > 11",
		"SELECT * FROM w WHERE n NOT IN (1, 5)",
		"SELECT * FROM w WHERE b IN (3, 4) AND a IN (1, 2, 3)",
		"SELECT * FROM w WHERE b = 100 AND a = 3",
		"SELECT * FROM w",
		"SELECT * FROM w ORDER BY a, b LIMIT 30",
		"SELECT * FROM w ORDER BY a DESC, b DESC LIMIT 30",
		"SELECT x.a, y.s FROM w x JOIN w y ON y.n = x.b WHERE x.a = 2",
		"SELECT /*+ LOOKUP_JOIN(x, y) JOIN_ORDER(x, y) */ x.a, y.s FROM w x JOIN w y ON y.a = x.n AND y.b = x.b",
		"SELECT /*+ LOOKUP_JOIN(x, y) JOIN_ORDER(x, y) */ x.a, y.s FROM w x JOIN w y ON y.n = x.b WHERE x.a < 3",
		"SELECT COUNT(*), SUM(n) FROM w WHERE a IN (SELECT n FROM w WHERE b = 1)",
	} {
		t.Run(q, func(t *testing.T) {
			d.t = t
			d.exec("SET strata_access = 'planned'")
			planned := d.exec(q)
			d.exec("SET strata_access = 'naive'")
			naive := d.exec(q)
			d.exec("SET strata_access = 'default'")
			require.Equal(t, naive, planned)
			require.Equal(t, planned, d.exec(q))
		})
	}
}
