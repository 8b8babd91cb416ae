package sqlstore

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkInsertMultiRow loads sbtest rows with INSERT ... VALUES of
// 1,000 rows per statement, as sqlbench's loader does; reported per row.
func BenchmarkInsertMultiRow(b *testing.B) {
	pad := strings.Repeat("p", 59)
	c := strings.Repeat("c", 119)
	d := newTestDB(b)
	d.exec("CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))")
	stmts := make([]string, 20)
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		_ = i
		b.StopTimer()
		for j := range stmts {
			stmts[j] = insertValues("sbtest1", next+j*1000, next+(j+1)*1000, func(i int) string {
				return fmt.Sprintf("(%d,%d,'%s','%s')", i+1, (i*7919)%1000003, c, pad)
			})
		}
		next += len(stmts) * 1000
		b.StartTimer()
		for _, s := range stmts {
			d.exec(s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(stmts)*1000), "ns/row")
}
