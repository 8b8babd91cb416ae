package sqlstore

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"
)

// BenchmarkRangeStatements runs sqlbench's sum_range and simple_range
// (100 rows each) as prepared statements through a Conn on the compacted,
// cached sbtest of the access benchmarks: the statement's whole cost on
// a reused plan, without database/sql.
//
//	go test ./sqlstore -run '^$' -bench RangeStatements -benchmem
func BenchmarkRangeStatements(b *testing.B) {
	d := accessBenchDB(b)
	ctx := context.Background()
	e := d.s.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	if err := c.UseDatabase(ctx, "mydb"); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, text string }{
		{"sum_range:100", "SELECT SUM(k) FROM sbtest WHERE id BETWEEN ? AND ?"},
		{"simple_range:100", "SELECT c FROM sbtest WHERE id BETWEEN ? AND ?"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st, err := c.Prepare(ctx, bc.text)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			r := rand.New(rand.NewPCG(5, 6))
			args := []Arg{{Ordinal: 1}, {Ordinal: 2}}
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				lo := int64(r.IntN(accessBenchRows-100) + 1)
				args[0].Value, args[1].Value = lo, lo+99
				rows, err := st.Query(ctx, args...)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := rows.Next(); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
				if err := rows.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
