package sqlstore

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"
)

// BenchmarkReadStatements runs sqlitebench's point_select and
// index_lookup as prepared autocommit statements through a Conn on the
// compacted, cached sbtest of the access benchmarks: each execution
// begins and ends a read transaction, whose cost is what this measures
// beside the read itself.
//
//	go test ./sqlstore -run '^$' -bench ReadStatements -benchmem
func BenchmarkReadStatements(b *testing.B) {
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
		{"point_select", "SELECT c FROM sbtest WHERE id = ?"},
		{"index_lookup", "SELECT id, k, c, pad FROM sbtest WHERE k = ?"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st, err := c.Prepare(ctx, bc.text)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			r := rand.New(rand.NewPCG(7, 8))
			args := []Arg{{Ordinal: 1}}
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				args[0].Value = int64(r.IntN(accessBenchRows) + 1)
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
