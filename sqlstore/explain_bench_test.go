package sqlstore

import "testing"

// BenchmarkExplainAnalyze compares a statement run plainly with the same
// statement under EXPLAIN ANALYZE, whose measuring wrapper times every
// operator's every row: a 10,000-row join of 10,000 lookups.
func BenchmarkExplainAnalyze(b *testing.B) {
	d := benchDB(b, 10000)
	const q = "SELECT /*+ LOOKUP_JOIN(x, y) */ x.id, y.v FROM b x JOIN b y ON y.id = x.k"
	for _, bc := range []struct{ name, stmt string }{
		{"select", q},
		{"analyze", "EXPLAIN ANALYZE " + q},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := d.ctx.WithQuery(bc.stmt)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := query(d.e, ctx, bc.stmt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExplainParser is what the EXPLAIN parser wrapper costs every
// statement that is not an EXPLAIN.
func BenchmarkExplainParser(b *testing.B) {
	const q = "/* app */ SELECT c FROM sbtest1 WHERE id = 4217"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = hideExplainFormat(q)
	}
}
