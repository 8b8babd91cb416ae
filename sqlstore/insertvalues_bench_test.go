package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkInsertValuesConn loads sbtest rows through a Conn, 1,000 per
// INSERT as text (as a dump or sqlbench's loader sends them): "fast" with
// the VALUES fast path, "parsed" with strata_plan_reuse off, which parses
// every statement. Reported per row, in wall time and in the process's CPU
// time (cpu-ns/row, background work included), which the machine's other
// load moves far less; each iteration is 20 statements.
func BenchmarkInsertValuesConn(b *testing.B) {
	for _, mode := range []string{"fast", "parsed"} {
		b.Run(mode, func(b *testing.B) {
			pad := strings.Repeat("p", 59)
			c := strings.Repeat("c", 119)
			d := newTestDB(b)
			e := d.s.OpenEngine()
			conn := e.NewConn()
			b.Cleanup(func() { _ = conn.Close(); _ = e.Close() })
			ctx := context.Background()
			mustExec := func(q string) {
				if _, err := conn.Exec(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			mustExec("USE mydb")
			mustExec("CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))")
			if mode == "parsed" {
				mustExec("SET strata_plan_reuse = OFF")
			}
			stmts := make([]string, 20)
			next := 0
			var cpu time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				for j := range stmts {
					stmts[j] = insertValues("sbtest1 (id, k, c, pad)", next+j*1000, next+(j+1)*1000, func(i int) string {
						return fmt.Sprintf("(%d,%d,'%s','%s')", i+1, (i*7919)%1000003, c, pad)
					})
				}
				next += len(stmts) * 1000
				b.StartTimer()
				start := cpuTime()
				for _, s := range stmts {
					mustExec(s)
				}
				cpu += cpuTime() - start
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(stmts)*1000), "ns/row")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*len(stmts)*1000), "cpu-ns/row")
		})
	}
}
