package driver_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/driver"
	"github.com/strata-db/strata/sqlstore"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		dsn     string
		want    driver.Config
		wantErr string
	}{
		{dsn: "/data/x", want: driver.Config{Dir: "/data/x"}},
		{dsn: "/data/x/?db=app&sync=false", want: driver.Config{Dir: "/data/x", DB: "app", NoSync: true}},
		{dsn: "file:///data/x?sync=true", want: driver.Config{Dir: "/data/x"}},
		{dsn: "/data/x?cache=256MiB", want: driver.Config{Dir: "/data/x", CacheSize: 256 << 20}},
		{dsn: "/data/x?cache=4096", want: driver.Config{Dir: "/data/x", CacheSize: 4096}},
		{dsn: "/data/x?localInfile=true", want: driver.Config{Dir: "/data/x", LocalInfile: true}},
		{dsn: "/data/x?cache=lots", wantErr: "cache=\"lots\""},
		{dsn: "", wantErr: "no folder"},
		{dsn: "/x?sync=maybe&colour=blue", wantErr: "unknown option \"colour\"\nsync=\"maybe\": want true or false"},
		{dsn: "tikv://pd1:2379,pd2:2379/?keyspace=ks&db=app", want: driver.Config{Store: "tikv://pd1:2379,pd2:2379/?keyspace=ks", DB: "app"}},
		{dsn: "tikv://mock?db=app", want: driver.Config{Store: "tikv://mock", DB: "app"}},
		{dsn: "tikv://mock?regions=4", want: driver.Config{Store: "tikv://mock?regions=4"}},
		{dsn: "tikv://pd1/?sync=false", wantErr: "sync is an option of a folder"},
		{dsn: "tikv://pd1/?colour=blue", wantErr: "unknown parameter \"colour\""},
		{dsn: "tikv:///?db=app", wantErr: "names no PD server"},
	}
	for _, tc := range tests {
		t.Run(tc.dsn, func(t *testing.T) {
			c, err := driver.ParseDSN(tc.dsn)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, driver.ErrBadDSN)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, *c)
			again, err := driver.ParseDSN(c.String())
			require.NoError(t, err)
			require.Equal(t, c, again)
		})
	}
}

func TestLastInsertIdAndRowsAffected(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)")
	tests := []struct {
		q            string
		args         []any
		id, affected int64
	}{
		{"INSERT INTO t (v) VALUES (?)", []any{10}, 1, 1},
		{"INSERT INTO t (v) VALUES (20), (30)", nil, 2, 2},
		{"INSERT INTO t VALUES (100, ?)", []any{1}, 0, 1},
		{"UPDATE t SET v = v + 1 WHERE v >= ?", []any{20}, 0, 2},
		{"UPDATE t SET v = v WHERE id = 1", nil, 0, 0},
		{"DELETE FROM t WHERE id > ?", []any{1}, 0, 3},
		{"INSERT INTO t VALUES (1, 5) ON DUPLICATE KEY UPDATE v = 6", nil, 0, 2},
	}
	for _, tc := range tests {
		res, err := db.Exec(tc.q, tc.args...)
		require.NoError(t, err, tc.q)
		id, err := res.LastInsertId()
		require.NoError(t, err)
		n, err := res.RowsAffected()
		require.NoError(t, err)
		require.Equal(t, tc.affected, n, tc.q)
		if tc.id != 0 {
			require.Equal(t, tc.id, id, tc.q)
		}
	}
}

func TestMultiStatementExec(t *testing.T) {
	db, _ := openDB(t)
	res, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1), (2);\nINSERT INTO t VALUES (3);")
	require.NoError(t, err)
	n, _ := res.RowsAffected()
	require.Equal(t, int64(3), n)
	_, err = db.Exec("INSERT INTO t VALUES (4); INSERT INTO nope VALUES (1); INSERT INTO t VALUES (5)")
	var me *mysql.SQLError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Equal(t, mysql.ERNoSuchTable, me.Number())
	require.Equal(t, "42S02", me.SQLState())
	require.Equal(t, int64(4), queryInt(t, db, "SELECT COUNT(*) FROM t"), "statements before the error ran")
}

func TestPreparedStatementReuse(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10))")
	_, err := db.Prepare("SELECT * FROM missing WHERE id = ?")
	var me *mysql.SQLError
	require.True(t, errors.As(err, &me), "%v", err)
	require.Equal(t, mysql.ERNoSuchTable, me.Number(), "errors surface at Prepare")

	ins, err := db.Prepare("INSERT INTO t VALUES (?, ?)")
	require.NoError(t, err)
	sel, err := db.Prepare("SELECT name FROM t WHERE id = ?")
	require.NoError(t, err)
	for i := range 50 {
		_, err := ins.Exec(i, "n"+string(rune('a'+i%26)))
		require.NoError(t, err)
	}
	for i := range 50 {
		var name string
		require.NoError(t, sel.QueryRow(i).Scan(&name))
		require.Equal(t, "n"+string(rune('a'+i%26)), name)
	}
	_, err = ins.Exec(1)
	require.ErrorContains(t, err, "expected 2 arguments, got 1")
	// The same text prepared twice on one connection: closing one keeps
	// the other working.
	sel2, err := db.Prepare("SELECT name FROM t WHERE id = ?")
	require.NoError(t, err)
	require.NoError(t, sel.Close())
	var name string
	require.NoError(t, sel2.QueryRow(3).Scan(&name))
	require.NoError(t, sel2.Close())
	require.NoError(t, ins.Close())

	// Named placeholders.
	require.NoError(t, db.QueryRow("SELECT name FROM t WHERE id = :id", sql.Named("id", 4)).Scan(&name))
	require.Equal(t, "ne", name)
}

func TestContextCancellation(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, db, "INSERT INTO t VALUES (1), (2), (3)")

	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := db.ExecContext(done, "INSERT INTO t VALUES (4)")
	require.ErrorIs(t, err, context.Canceled)

	// A running statement stops: SLEEP waits for the context.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "SELECT SLEEP(1000)")
		errc <- err
	}()
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)

	// Cancelling while reading rows ends the read.
	ctx, cancel = context.WithCancel(context.Background())
	rows, err := db.QueryContext(ctx, "SELECT id FROM t ORDER BY id")
	require.NoError(t, err)
	require.True(t, rows.Next())
	cancel()
	for rows.Next() {
	}
	require.ErrorIs(t, rows.Err(), context.Canceled)
	require.NoError(t, rows.Close())

	// The pool is still healthy.
	require.Equal(t, int64(3), queryInt(t, db, "SELECT COUNT(*) FROM t"))
}

func TestStoreSharedAndClosedWithLastDB(t *testing.T) {
	dir := t.TempDir()
	a, err := sql.Open("strata", dir+"?db=x")
	require.NoError(t, err)
	b, err := sql.Open("strata", dir+"/.?db=x")
	require.NoError(t, err)
	mustExec(t, a, "CREATE TABLE t (id INT PRIMARY KEY)")
	mustExec(t, b, "INSERT INTO t VALUES (1)")
	require.NoError(t, a.Close())
	require.Equal(t, int64(1), queryInt(t, b, "SELECT COUNT(*) FROM t"), "b still works after a closed")

	_, err = sql.Open("strata", dir+"?sync=false")
	require.ErrorIs(t, err, driver.ErrOptionsMismatch)
	_, err = sql.Open("strata", dir+"?cache=1MiB")
	require.ErrorIs(t, err, driver.ErrOptionsMismatch)
	d, err := sql.Open("strata", dir+fmt.Sprintf("?db=x&cache=%d", sqlstore.DefaultCacheSize))
	require.NoError(t, err, "the default cache, named")
	require.NoError(t, d.Close())
	require.NoError(t, b.Close())

	// Closed for real: opening again works and sees the data.
	c, err := sql.Open("strata", dir+"?db=x&sync=false")
	require.NoError(t, err)
	require.Equal(t, int64(1), queryInt(t, c, "SELECT COUNT(*) FROM t"))
	require.NoError(t, c.Close())
}

func TestConnKeepsSession(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "CREATE DATABASE other")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "USE other")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "SET @x = 41")
	require.NoError(t, err)
	var dbName string
	var x int
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT DATABASE(), @x + 1").Scan(&dbName, &x))
	require.Equal(t, "other", dbName)
	require.Equal(t, 42, x)
	// A pinned connection left in a transaction is rolled back when it
	// returns to the pool.
	_, err = conn.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY)")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "START TRANSACTION")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	require.Equal(t, int64(0), queryInt(t, db, "SELECT COUNT(*) FROM other.t"))
}

// TestPlainExplain: EXPLAIN without a format scans, with NULL where GMS's
// row holds the text NULL in integer columns.
func TestPlainExplain(t *testing.T) {
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)")
	rows, err := db.Query("EXPLAIN SELECT * FROM t WHERE id = 1")
	require.NoError(t, err)
	cols, err := rows.Columns()
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		n++
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.Positive(t, n)
}

// TestNoSetupWarnings: opening a connection runs CREATE DATABASE IF NOT
// EXISTS, which on an existing database warns; the warning is the
// driver's, not the application's.
func TestNoSetupWarnings(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	first, err := db.Conn(ctx) // creates the database
	require.NoError(t, err)
	defer first.Close()
	conn, err := db.Conn(ctx) // finds it
	require.NoError(t, err)
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "SHOW WARNINGS")
	require.NoError(t, err)
	defer rows.Close()
	require.False(t, rows.Next(), "a warning from opening the connection")
	require.NoError(t, rows.Err())
}

// TestTiKVDSN: a tikv:// data source name opens the store over TiKV (here
// client-go's in-process mock): connections of one process share it.
func TestTiKVDSN(t *testing.T) {
	db, err := sql.Open("strata", "tikv://mock?regions=3&db=app")
	require.NoError(t, err)
	defer db.Close()
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM t WHERE v >= ?", "a").Scan(&n))
	require.Equal(t, 2, n)
}

// TestColumnsReused: the column list of a connection's queries is built
// once while the names stay the same, and afresh when they differ or a
// caller changed the one it was given.
func TestColumnsReused(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	cols := func(q string) []string {
		rows, err := conn.QueryContext(ctx, q)
		require.NoError(t, err)
		defer rows.Close()
		names, err := rows.Columns()
		require.NoError(t, err)
		return names
	}
	a := cols("SELECT 1 AS x, 2 AS y")
	require.Equal(t, []string{"x", "y"}, a)
	b := cols("SELECT 3 AS x, 4 AS y")
	require.Equal(t, &a[0], &b[0], "the same names give the same list")
	require.Equal(t, []string{"x", "z"}, cols("SELECT 1 AS x, 2 AS z"))
	c := cols("SELECT 1 AS x, 2 AS z")
	c[1] = "changed"
	require.Equal(t, []string{"x", "z"}, cols("SELECT 1 AS x, 2 AS z"))
	require.Equal(t, []string{"x", "changed"}, c, "a list given out is never written to")
}
