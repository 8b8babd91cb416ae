package mysqlcompat_test

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore"
)

// TestGroupConcatSpec runs testdata/group_concat: GROUP_CONCAT cut to
// group_concat_max_len bytes with warning 1260, as in MySQL 8. Commands:
//
//	exec
//	  statements, one a line
//	query
//	  one statement; prints its rows, one a line, then the warnings it
//	  left as "warning CODE: MESSAGE", in the order they were raised
//	types
//	  one statement; prints the type of each column of its result
func TestGroupConcatSpec(t *testing.T) {
	d := newTestDB(t)
	datadriven.RunTest(t, "testdata/group_concat", func(t *testing.T, td *datadriven.TestData) string {
		switch td.Cmd {
		case "exec":
			return specExec(t, d, td)
		case "query":
			return queryWithWarnings(t, d, strings.TrimSpace(td.Input))
		case "types":
			stmt := strings.TrimSpace(td.Input)
			ctx := d.ctx.WithQuery(stmt)
			sch, iter, err := sqlstore.Query(ctx, d.e, stmt, nil, nil)
			require.NoError(t, err, stmt)
			_, err = sql.RowIterToRows(ctx, iter)
			require.NoError(t, err, stmt)
			var b strings.Builder
			for _, c := range sch {
				fmt.Fprintf(&b, "%s: %s\n", c.Name, c.Type.String())
			}
			return b.String()
		default:
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		}
	})
}

// TestGroupConcatJoinMemory: GROUP_CONCAT over two million joined rows of
// 100-byte values keeps 1024 bytes, not the rows. GMS kept every row of the
// group (some 900 MiB here) and cut the result at the end. The live heap,
// as the last garbage collection found it, is sampled while the statement
// runs: the garbage the join leaves does not count.
func TestGroupConcatJoinMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads two million rows")
	}
	d := newTestDB(t)
	d.exec("CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(100))")
	d.exec("CREATE TABLE b (id INT PRIMARY KEY)")
	var q strings.Builder
	insert := func(table string, from, to int, row func(i int) string) {
		for lo := from; lo < to; lo += 500 {
			q.Reset()
			fmt.Fprintf(&q, "INSERT INTO %s VALUES ", table)
			for i := lo; i < min(lo+500, to); i++ {
				if i > lo {
					q.WriteString(",")
				}
				q.WriteString(row(i))
			}
			d.exec(q.String())
		}
	}
	insert("a", 0, 2000, func(i int) string { return fmt.Sprintf("(%d, '%0100d')", i, i) })
	insert("b", 0, 1000, func(i int) string { return fmt.Sprintf("(%d)", i) })

	const stmt = "SELECT LENGTH(GROUP_CONCAT(a.v)), COUNT(*) FROM a JOIN b ON a.id >= 0 AND b.id >= 0"
	runtime.GC()
	base := liveHeap()
	peak := base
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				peak = max(peak, liveHeap())
			}
		}
	}()
	out := queryWithWarnings(t, d, stmt)
	close(stop)
	wg.Wait()
	// The join and the engine take some memory of their own; two million
	// kept rows take hundreds of MiB.
	require.Less(t, peak-base, uint64(64<<20), "heap grew by %d MiB", (peak-base)>>20)
	require.Equal(t, "1024 2000000\nwarning 1260: Row 11 was cut by GROUP_CONCAT()\n", out)
	t.Logf("heap grew by %d MiB", (peak-base)>>20)
}

// liveHeap returns the bytes the last garbage collection found live,
// without stopping the world.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestGroupConcatMemQuota: a GROUP_CONCAT with ORDER BY keeps its values
// until the group ends, under the statement's memory quota; without ORDER
// BY the same statement fits.
func TestGroupConcatMemQuota(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, g INT, v VARCHAR(200))")
	var q strings.Builder
	q.WriteString("INSERT INTO t VALUES ")
	for i := range 5000 {
		if i > 0 {
			q.WriteString(",")
		}
		fmt.Fprintf(&q, "(%d, %d, '%0200d')", i, i%2, i)
	}
	d.exec(q.String())
	d.exec("SET strata_mem_quota_query = 500000")
	for _, stmt := range []string{
		"SELECT GROUP_CONCAT(v ORDER BY id DESC) FROM t",
		"SELECT g, GROUP_CONCAT(DISTINCT v) FROM t GROUP BY g",
	} {
		out := queryWithWarnings(t, d, stmt)
		require.Equal(t, "error 3170: Memory capacity of 500000 bytes for 'strata_mem_quota_query' exceeded in this query.\n", out, stmt)
	}
	out := queryWithWarnings(t, d, "SELECT g, LENGTH(GROUP_CONCAT(v)) FROM t GROUP BY g ORDER BY g")
	require.Equal(t, "0 1024\n1 1024\nwarning 1260: Row 6 was cut by GROUP_CONCAT()\nwarning 1260: Row 12 was cut by GROUP_CONCAT()\n", out)
}
