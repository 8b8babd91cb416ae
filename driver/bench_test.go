package driver_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkPreparedSelect runs selects with arguments on 10,000 cached
// rows, prepared or one-shot (db.Query with arguments), with plans reused
// and with every execution planned in full:
//
//	go test ./driver -run '^$' -bench PreparedSelect -benchmem
func BenchmarkPreparedSelect(b *testing.B) {
	db, _ := openDB(b)
	mustExec(b, db, "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(120), KEY k_idx (k))")
	tx, err := db.Begin()
	require.NoError(b, err)
	for i := 0; i < 10000; i++ {
		mustExec(b, tx, "INSERT INTO t VALUES (?, ?, CONCAT(?, REPEAT('x', 110)))", i, i%1000, i*7919%10000)
	}
	require.NoError(b, tx.Commit())
	queries := []struct {
		name, text string
		args       func(i int) []any
	}{
		{"point", "SELECT c FROM t WHERE id = ?", func(i int) []any { return []any{i * 7919 % 10000} }},
		{"index_lookup", "SELECT id FROM t WHERE k = ?", func(i int) []any { return []any{i * 7919 % 1000} }},
		{"index_fetch", "SELECT id, c FROM t WHERE k = ?", func(i int) []any { return []any{i * 7919 % 1000} }},
		{"in_list:10", "SELECT c FROM t WHERE id IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", func(i int) []any {
			a := make([]any, 10)
			for j := range a {
				a[j] = (i*7919 + j*997) % 10000
			}
			return a
		}},
		{"range:100", "SELECT c FROM t WHERE id BETWEEN ? AND ?", func(i int) []any {
			lo := i * 7919 % 9900
			return []any{lo, lo + 99}
		}},
		{"sum_range:100", "SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?", func(i int) []any {
			lo := i * 7919 % 9900
			return []any{lo, lo + 99}
		}},
		{"order_range:100", "SELECT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c", func(i int) []any {
			lo := i * 7919 % 9900
			return []any{lo, lo + 99}
		}},
		{"distinct_range:100", "SELECT DISTINCT c FROM t WHERE id BETWEEN ? AND ? ORDER BY c", func(i int) []any {
			lo := i * 7919 % 9900
			return []any{lo, lo + 99}
		}},
		{"multi_range:10", "SELECT c FROM t WHERE " + strings.Repeat("id BETWEEN ? AND ? OR ", 9) + "id BETWEEN ? AND ?", func(i int) []any {
			a := make([]any, 20)
			for j := range 10 {
				lo := (i*7919 + j*997) % 9990
				a[2*j], a[2*j+1] = lo, lo+9
			}
			return a
		}},
	}
	ctx := context.Background()
	for _, q := range queries {
		for _, mode := range []string{"reuse=ON", "reuse=OFF", "oneshot/reuse=ON", "oneshot/reuse=OFF"} {
			b.Run(q.name+"/"+mode, func(b *testing.B) {
				conn, err := db.Conn(ctx)
				require.NoError(b, err)
				defer conn.Close()
				reuse, oneShot := strings.CutPrefix(mode, "oneshot/")
				_, err = conn.ExecContext(ctx, "SET strata_plan_reuse = "+strings.TrimPrefix(reuse, "reuse="))
				require.NoError(b, err)
				// A prepared statement, or db.Query with arguments.
				query := func(args ...any) (*sql.Rows, error) { return conn.QueryContext(ctx, q.text, args...) }
				if !oneShot {
					stmt, err := conn.PrepareContext(ctx, q.text)
					require.NoError(b, err)
					defer stmt.Close()
					query = func(args ...any) (*sql.Rows, error) { return stmt.QueryContext(ctx, args...) }
				}
				var (
					c  string
					id int64
				)
				// Each column into a variable of its type, as an
				// application scans: id into an int64, c into a string.
				dest := []any{&c}
				if strings.HasPrefix(q.text, "SELECT id FROM") {
					dest = []any{&id}
				} else if strings.HasPrefix(q.text, "SELECT id, c FROM") {
					dest = []any{&id, &c}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					rows, err := query(q.args(i)...)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
						if err := rows.Scan(dest...); err != nil {
							b.Fatal(err)
						}
					}
					if err := rows.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
