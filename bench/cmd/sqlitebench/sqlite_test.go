package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/cmd/sqlbench/sqlrun"
)

// cgoSQLite reports whether the cgo SQLite driver works in this build (it
// refuses to open without cgo).
func cgoSQLite(t *testing.T) bool {
	db, err := sql.Open("sqlite3", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	return db.Ping() == nil
}

func engine(t *testing.T, name string) sqliteEngine {
	for _, e := range sqliteEngines {
		if e.name == name {
			return e
		}
	}
	t.Fatalf("no engine %q", name)
	return sqliteEngine{}
}

func TestSQLiteSettings(t *testing.T) {
	s := &sqlrun.Setup{Sync: true, Cache: 8 << 20}
	p := sqlitePragmasFor(s)
	require.Equal(t, sqlitePragmas{synchronous: "FULL", cacheKiB: 8 << 10}, p)
	e := engine(t, "sqlite_cgo")
	require.Equal(t, "file:/d.sqlite_cgo?_busy_timeout=10000&_cache_size=-8192&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate",
		e.dsn(sqlitePath("/d/", "sqlite_cgo"), p))
	require.Equal(t, "SELECT k FROM sbtest WHERE id = ?", e.Statement("SELECT k FROM sbtest WHERE id = ? FOR UPDATE"))
	require.Equal(t, "SQLite: journal_mode=WAL, synchronous=FULL, 8 MiB page cache (cache_size=-8192)", e.Settings(s))

	var stderr bytes.Buffer
	require.Equal(t, 2, run(nil, &stderr))
	require.Contains(t, stderr.String(), "usage: sqlitebench sql")
	stderr.Reset()
	require.Equal(t, 2, run([]string{"sql", "-engines=strata,mysql"}, &stderr))
	require.Contains(t, stderr.String(), `unknown engine "mysql" (strata, sqlite_cgo, sqlite_go, sqlite)`)
}

// TestSQLRunSQLite runs every workload briefly against Strata and both
// SQLite drivers (the cgo one only when cgo is on), then again on the
// tables the first run left.
func TestSQLRunSQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("loads three tables")
	}
	engines := []string{"strata", "sqlite_go"}
	if cgoSQLite(t) {
		engines = append(engines, "sqlite_cgo")
	} else {
		t.Log("cgo is off: sqlite_cgo left out")
	}
	dir := t.TempDir() + "/db"
	var out, notices bytes.Buffer
	args := []string{"-db", dir, "-rows=300", "-duration=50ms", "-warmup=0", "-range_size=20", "-threads=2", "-statistics",
		"-engines=" + strings.Join(engines, ","),
		"-workloads=point_select,in_list,simple_range,sum_range,order_range,distinct_range,multi_range,index_lookup,insert,update_index,counter,select_1,covered_range,update_non_index"}
	require.NoError(t, sqlrun.Main(context.Background(), args, &out, &notices, nil, options()))
	report := out.String()
	for _, w := range []string{"point_select", "in_list:10", "simple_range:20", "sum_range:20", "order_range:20",
		"distinct_range:20", "multi_range:10", "index_lookup", "insert", "update_index", "counter:1", "select_1", "covered_range:20", "update_non_index"} {
		for _, e := range engines {
			// Two clients on one counter row may conflict in Strata
			// (errors, the last column), never in SQLite, whose
			// transactions take the write lock at BEGIN.
			require.Regexp(t, "(?m)^"+w+` +`+e+`( +[0-9.]+){6} +[0-9]+$`, report)
		}
		for _, e := range engines[1:] {
			require.Regexp(t, "(?m)^"+w+` +strata/`+e+`: [0-9.]+x qps, [0-9.]+x queries per CPU-second$`, report)
		}
	}
	require.Regexp(t, `(?m)^counter:1 +sqlite_go( +[0-9.]+){6} +0$`, report)
	require.Equal(t, 1, strings.Count(report, "SQLite: journal_mode=WAL, synchronous=NORMAL, 128 MiB page cache"), report)
	// Engine counters are Strata's alone: one line per Strata run.
	require.Equal(t, 14, bytes.Count(out.Bytes(), []byte("engine per query:")), report)
	for _, e := range engines[1:] {
		require.Contains(t, notices.String(), e+": loaded 300 rows")
		_, err := os.Stat(dir + "." + e)
		require.NoError(t, err)
	}

	// A second run reuses every table, though the first inserted rows.
	notices.Reset()
	require.NoError(t, sqlrun.Main(context.Background(), []string{"-db", dir, "-rows=300", "-duration=20ms", "-warmup=0",
		"-engines=" + strings.Join(engines, ","), "-workloads=insert,point_select"}, io.Discard, &notices, nil, options()))
	require.Contains(t, notices.String(), "reusing sbtest in "+dir+" ")
	for _, e := range engines[1:] {
		require.Contains(t, notices.String(), e+": reusing sbtest in "+dir+"."+e)
	}
}
