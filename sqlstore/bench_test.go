package sqlstore

import (
	"fmt"
	"strings"
	"testing"
)

// benchDB returns a store with table b(id, k, v) holding n rows.
func benchDB(b *testing.B, n int) *testDB {
	d := newTestDB(b)
	d.exec("CREATE TABLE b (id INT PRIMARY KEY, k INT, v VARCHAR(40), KEY kk (k))")
	const chunk = 1000
	for lo := 0; lo < n; lo += chunk {
		var sb strings.Builder
		sb.WriteString("INSERT INTO b VALUES ")
		for i := lo; i < lo+chunk && i < n; i++ {
			if i > lo {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, %d, 'value %d')", i, i%1000, i)
		}
		d.exec(sb.String())
	}
	return d
}

func BenchmarkInsertAutocommit(b *testing.B) {
	d := benchDB(b, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.exec(fmt.Sprintf("INSERT INTO b VALUES (%d, %d, 'value')", i, i%1000))
	}
}

func BenchmarkInsert1000Rows(b *testing.B) {
	d := benchDB(b, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var sb strings.Builder
		sb.WriteString("INSERT INTO b VALUES ")
		for j := 0; j < 1000; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			id := i*1000 + j
			fmt.Fprintf(&sb, "(%d, %d, 'value %d')", id, id%1000, id)
		}
		d.exec(sb.String())
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkPointSelect(b *testing.B) {
	d := benchDB(b, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.exec(fmt.Sprintf("SELECT v FROM b WHERE id = %d", (i*7919)%100000))
	}
}

func BenchmarkPointDelete(b *testing.B) {
	d := benchDB(b, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.exec(fmt.Sprintf("DELETE FROM b WHERE id = %d", (i*7919)%100000))
	}
}

func BenchmarkSecondaryLookup(b *testing.B) {
	d := benchDB(b, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.exec(fmt.Sprintf("SELECT id FROM b WHERE k = %d", i%1000)) // 100 rows each
	}
}

func BenchmarkRangeScan10k(b *testing.B) {
	d := benchDB(b, 100000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.exec("SELECT SUM(k) FROM b WHERE id >= 50000 AND id < 60000")
	}
}

// BenchmarkPointUpdate is a single client's autocommit point UPDATE in
// each transaction mode: the cost of locking the row and reading it again.
func BenchmarkPointUpdate(b *testing.B) {
	for _, mode := range []string{"pessimistic", "optimistic"} {
		b.Run(mode, func(b *testing.B) {
			d := benchDB(b, 10000)
			d.exec("SET strata_txn_mode = '" + mode + "'")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := fmt.Sprintf("UPDATE b SET v = 'u%d' WHERE id = %d", i, (i*7919)%10000)
				if _, err := query(d.e, d.ctx.WithQuery(q), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
