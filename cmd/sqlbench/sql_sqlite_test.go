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
)

// cgoSQLite reports whether the cgo SQLite driver works in this build (it
// refuses to open without cgo).
func cgoSQLite(t *testing.T) bool {
	db, err := sql.Open("sqlite3", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	return db.Ping() == nil
}

func TestSQLEnginesFlag(t *testing.T) {
	c, err := parseSQLFlags([]string{"-engines=strata,sqlite,sqlite_cgo"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []string{"strata", "sqlite_go", "sqlite_cgo"}, c.engines)
	require.Equal(t, []sqlRunMode{{"strata", "planned", "strata"}, {"sqlite_go", "", "sqlite_go"}, {"sqlite_cgo", "", "sqlite_cgo"}}, c.runModes())

	c, err = parseSQLFlags([]string{"-engines=sqlite_cgo,strata", "-access=planned,naive"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []sqlRunMode{{"sqlite_cgo", "", "sqlite_cgo"}, {"strata", "planned", "strata:planned"}, {"strata", "naive", "strata:naive"}}, c.runModes())

	c, err = parseSQLFlags([]string{"-access=planned,naive"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []sqlRunMode{{"strata", "planned", "planned"}, {"strata", "naive", "naive"}}, c.runModes())

	_, err = parseSQLFlags([]string{"-engines=strata,mysql", "-cold", "-engines=sqlite_go"}, io.Discard)
	require.ErrorContains(t, err, "-cold: Strata only")
	_, err = parseSQLFlags([]string{"-engines=strata,mysql"}, io.Discard)
	require.ErrorContains(t, err, `unknown engine "mysql"`)

	p := sqlitePragmasFor(&sqlConfig{sync: true, cacheSize: 8 << 20})
	require.Equal(t, sqlitePragmas{synchronous: "FULL", cacheKiB: 8 << 10}, p)
	require.Equal(t, "file:/d.sqlite_cgo?_busy_timeout=10000&_cache_size=-8192&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate",
		sqliteEngines["sqlite_cgo"].dsn(sqlitePath("/d/", "sqlite_cgo"), p))
	require.Equal(t, "SELECT k FROM sbtest WHERE id = ?", sqliteStatement(sqlWorkloads["counter"].build(&sqlBench{cfg: c}, 0).text))
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
		"-engines=" + strings.Join(engines, ","), "-workloads=" + sqlDefaultWorkloads + ",counter,select_1,covered_range,update_non_index"}
	require.NoError(t, sqlMain(context.Background(), args, &out, &notices, nil))
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
	require.Contains(t, report, "SQLite: journal_mode=WAL, synchronous=NORMAL, 128 MiB page cache")
	// Engine counters are Strata's alone: one line per Strata run.
	require.Equal(t, 14, bytes.Count(out.Bytes(), []byte("engine per query:")), report)
	for _, e := range engines[1:] {
		require.Contains(t, notices.String(), e+": loaded 300 rows")
		_, err := os.Stat(dir + "." + e)
		require.NoError(t, err)
	}

	// A second run reuses every table, though the first inserted rows.
	notices.Reset()
	require.NoError(t, sqlMain(context.Background(), []string{"-db", dir, "-rows=300", "-duration=20ms", "-warmup=0",
		"-engines=" + strings.Join(engines, ","), "-workloads=insert,point_select"}, io.Discard, &notices, nil))
	require.Contains(t, notices.String(), "reusing sbtest in "+dir+" ")
	for _, e := range engines[1:] {
		require.Contains(t, notices.String(), e+": reusing sbtest in "+dir+"."+e)
	}
}
