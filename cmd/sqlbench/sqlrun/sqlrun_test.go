package sqlrun

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSQLFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		errs    []string // substrings of the usage error; nil: valid
		check   func(t *testing.T, c *sqlConfig)
		wantErr bool
	}{
		{name: "defaults", check: func(t *testing.T, c *sqlConfig) {
			require.Equal(t, 100000, c.rows)
			require.Equal(t, []string{"planned"}, c.access)
			require.Len(t, c.workloads, 10)
			require.Equal(t, 10*time.Second, c.duration)
		}},
		{name: "sized workloads and two modes", args: []string{"-workloads=in_list:10,in_list:100,multi_range", "-access=planned,naive", "-rows=5000"},
			check: func(t *testing.T, c *sqlConfig) {
				require.Equal(t, []sqlWorkloadSpec{{"in_list", 10}, {"in_list", 100}, {"multi_range", 0}}, c.workloads)
				require.Equal(t, []string{"planned", "naive"}, c.access)
			}},
		{name: "every problem at once", args: []string{"-workloads=nope,point_select:3,in_list:x", "-access=fast", "-threads=0", "-rows=10"},
			errs: []string{`unknown workload "nope"`, "point_select takes no size", `"in_list:x": size must be`, `unknown mode "fast"`, "-threads=0", "-rows=10"}},
		{name: "thresholds", args: []string{"-access=planned,planned(multiget_batch=8, fetch_batch=8),naive", "-planner=long_range=1MiB"},
			check: func(t *testing.T, c *sqlConfig) {
				require.Equal(t, []string{"planned", "planned(multiget_batch=8, fetch_batch=8)", "naive"}, c.access)
				require.Equal(t, "long_range=1MiB", c.planner)
			}},
		{name: "bad thresholds", args: []string{"-access=planned(batch=8),replan(", "-planner=long_range"},
			errs: []string{`-access: planned(batch=8): planner: unknown threshold "batch"`, `unknown mode "replan("`, "-planner: planner: \"long_range\": want name=value"}},
		{name: "size above rows", args: []string{"-rows=1000", "-workloads=simple_range:5000"}, errs: []string{"size above -rows"}},
		{name: "stray argument", args: []string{"extra"}, errs: []string{"unexpected arguments"}},
		{name: "negative cache", args: []string{"-cache_size=-1"}, errs: []string{"-cache_size=-1"}},
		{name: "negative durations", args: []string{"-duration=-1s", "-warmup=-1s"}, errs: []string{"-duration=-1s", "-warmup=-1s"}},
		{name: "cache size", args: []string{"-cache_size=536870912"}, check: func(t *testing.T, c *sqlConfig) {
			require.EqualValues(t, 512<<20, c.cacheSize)
			require.Equal(t, "/d?db=sbtest&sync=false&cache=536870912", sqlDSN("/d", c))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseSQLFlags(tc.args, io.Discard, Options{})
			if tc.errs != nil {
				var ue UsageError
				require.True(t, errors.As(err, &ue), "%v", err)
				for _, e := range tc.errs {
					require.Contains(t, err.Error(), e)
				}
				return
			}
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
}

func TestSQLWorkloads(t *testing.T) {
	cfg, err := parseSQLFlags([]string{"-rows=1000", "-range_size=50", "-in_list_size=7"}, io.Discard, Options{})
	require.NoError(t, err)
	b := &sqlBench{cfg: cfg, nextID: 1000}
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		spec  sqlWorkloadSpec
		name  string
		nargs int
		text  string
	}{
		{sqlWorkloadSpec{"point_select", 0}, "", 1, "SELECT c FROM sbtest WHERE id = ?"},
		{sqlWorkloadSpec{"in_list", 0}, "in_list:7", 7, "SELECT c FROM sbtest WHERE id IN (?, ?, ?, ?, ?, ?, ?)"},
		{sqlWorkloadSpec{"simple_range", 0}, "simple_range:50", 2, "SELECT c FROM sbtest WHERE id BETWEEN ? AND ?"},
		{sqlWorkloadSpec{"sum_range", 20}, "sum_range:20", 2, "SELECT SUM(k) FROM sbtest WHERE id BETWEEN ? AND ?"},
		{sqlWorkloadSpec{"multi_range", 3}, "multi_range:3", 6, "SELECT c FROM sbtest WHERE id BETWEEN ? AND ? OR id BETWEEN ? AND ? OR id BETWEEN ? AND ?"},
		{sqlWorkloadSpec{"insert", 0}, "", 4, "INSERT INTO sbtest (id, k, c, pad) VALUES (?, ?, ?, ?)"},
	} {
		q := sqlWorkloads[tc.spec.name].build(b, tc.spec.size)
		require.Equal(t, tc.name, q.name)
		require.Equal(t, tc.nargs, q.nargs)
		require.Equal(t, tc.text, q.text)
		args := make([]any, q.nargs)
		for i := 0; i < 100; i++ {
			q.fill(r, args)
			for _, a := range args[:min(q.nargs, 2)] {
				v := a.(int64)
				require.True(t, v >= 1, "%s: %d", tc.spec, v)
			}
		}
	}
	// multi_range: sorted, disjoint, multiRangeRows each, within the table.
	args := make([]any, 20)
	for i := 0; i < 1000; i++ {
		b.multiRanges(r, args)
		prev := int64(0)
		for j := 0; j < 20; j += 2 {
			lo, hi := args[j].(int64), args[j+1].(int64)
			require.Equal(t, int64(multiRangeRows-1), hi-lo)
			require.Greater(t, lo, prev)
			require.LessOrEqual(t, hi, int64(1000))
			prev = hi
		}
	}
	require.Len(t, sbtestString(r, 10), 119)
	require.Len(t, sbtestString(r, 5), 59)
}

// TestSQLRun runs every workload briefly in both modes on a small table.
func TestSQLRun(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a table")
	}
	dir := t.TempDir()
	var out, notices bytes.Buffer
	args := []string{"-db", dir, "-rows=300", "-duration=100ms", "-warmup=0", "-range_size=20",
		"-workloads=" + sqlDefaultWorkloads + ",in_list:30,covered_range", "-access=planned,naive", "-statistics", "-repeat=2"}
	require.NoError(t, Main(context.Background(), args, &out, &notices, nil, Options{}))
	report := out.String()
	for _, w := range []string{"point_select", "in_list:10", "in_list:30", "simple_range:20", "sum_range:20", "order_range:20",
		"distinct_range:20", "multi_range:10", "index_lookup", "insert", "update_index", "covered_range:20"} {
		require.Regexp(t, "(?m)^"+w+` +planned +[0-9.]+ `, report)
		require.Regexp(t, "(?m)^"+w+` +naive +[0-9.]+ `, report)
		require.Regexp(t, "(?m)^"+w+` +naive median +[0-9.]+ `, report)
		require.Regexp(t, "(?m)^"+w+` +planned/naive: [0-9.]+x qps, [0-9.]+x queries per CPU-second$`, report)
		// Columns qps, mean, p95, p99, then CPU time per query.
		require.Regexp(t, "(?m)^"+w+` +planned median( +[0-9.]+){4} +[0-9]+\.[0-9] `, report)
	}
	require.Contains(t, report, "last query: sbtest: MultiScan(ranges=10, async)")
	require.Contains(t, report, "last query: sbtest: Scans(ranges=10, readahead=auto, iterator per range)")
	require.Regexp(t, `last query: sbtest: MultiGet\(keys=[0-9]+, batch=32\)`, report)
	require.Contains(t, report, "engine per query:")
	require.Contains(t, notices.String(), "loaded 300 rows")
	require.Regexp(t, `last query: sbtest: Range\(readahead=[a-z]+\) covering`, report)

	// Thresholds side by side: -planner for every mode, and one mode's own.
	out.Reset()
	require.NoError(t, Main(context.Background(), []string{"-db", dir, "-rows=300", "-duration=50ms", "-warmup=0",
		"-workloads=in_list:10", "-access=planned,planned(multiget_batch=4)", "-planner=multiget_batch=8", "-statistics"}, &out, io.Discard, nil, Options{}))
	// Ten random ids of 300 may repeat: keys counts them once.
	require.Regexp(t, `last query: sbtest: MultiGet\(keys=[0-9]+, batch=8\)`, out.String())
	require.Regexp(t, `last query: sbtest: MultiGet\(keys=[0-9]+, batch=4\)`, out.String())
	require.Regexp(t, `(?m)^in_list:10 +planned/planned\(multiget_batch=4\): [0-9.]+x qps`, out.String())
	// A second run reuses the table.
	out.Reset()
	notices.Reset()
	require.NoError(t, Main(context.Background(), []string{"-db", dir, "-rows=300", "-duration=50ms", "-warmup=0", "-workloads=point_select"}, &out, &notices, nil, Options{}))
	require.Contains(t, notices.String(), "reusing sbtest")
	require.True(t, strings.Contains(out.String(), "point_select"))

	// -cold reopens the database before every run: each run starts with
	// an empty block cache, so each misses in it, though the first run
	// read every block of this small table.
	out.Reset()
	require.NoError(t, Main(context.Background(), []string{"-db", dir, "-rows=300", "-duration=50ms", "-cold",
		"-workloads=point_select", "-access=planned,naive", "-statistics"}, &out, io.Discard, nil, Options{}))
	require.Equal(t, 2, strings.Count(out.String(), "engine per query:"), out.String())
	require.Equal(t, 2, strings.Count(out.String(), "block.cache.miss"), "a run found the blocks cached: %s", out.String())
	// CPU time is not measured cold: the page-cache drops would count.
	require.Regexp(t, `(?m)^point_select +planned( +[0-9.]+){4} +- `, out.String())
}
