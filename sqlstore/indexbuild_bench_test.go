package sqlstore

import (
	"flag"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the process's user and system CPU time so far: on a
// shared machine the CPU an operation takes varies far less than its
// wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var bulkBenchRows = flag.Int("bulk.rows", 100000, "rows of BenchmarkCreateIndex's sbtest table")

// BenchmarkCreateIndex loads an sbtest table (1,000 rows per INSERT) and
// times CREATE INDEX on k over it; the load's rows/s is reported too.
func BenchmarkCreateIndex(b *testing.B) {
	n := *bulkBenchRows
	pad := strings.Repeat("p", 59)
	c := strings.Repeat("c", 119)
	for range b.N {
		b.StopTimer()
		d := newTestDB(b)
		d.exec("CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')")
		start := time.Now()
		for from := 0; from < n; from += 1000 {
			d.exec(insertValues("sbtest1", from, min(from+1000, n), func(i int) string {
				return fmt.Sprintf("(%d,%d,'%s','%s')", i+1, (i*7919)%n, c, pad)
			}))
		}
		load := time.Since(start)
		cpu := cpuTime()
		b.StartTimer()
		d.exec("CREATE INDEX k_1 ON sbtest1 (k)")
		b.StopTimer()
		b.ReportMetric(float64((cpuTime() - cpu).Milliseconds()), "index-cpu-ms")
		b.ReportMetric(float64(n)/load.Seconds(), "load-rows/s")
		require := d.exec("SELECT COUNT(*) FROM sbtest1 WHERE k < 100")
		if fmt.Sprint(require) != "[[100]]" {
			b.Fatalf("index answers %v", require)
		}
		d.s.Close()
		b.StartTimer()
	}
}
