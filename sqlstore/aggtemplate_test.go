package sqlstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"
)

// hasRangeAgg reports whether a template's plan aggregates from the
// stored rows (aggtemplate.go).
func hasRangeAgg(n sql.Node) bool {
	found := false
	transform.Inspect(n, func(c sql.Node) bool {
		_, ok := c.(*rangeAgg)
		found = found || ok
		return !found
	})
	return found
}

// runSchema is run, with the result's schema.
func (p *preparedStmt) runSchema(args ...any) (sql.Schema, []sql.Row, error) {
	b, v := bindArgs(args)
	bind := func() (map[string]sqlparser.Expr, error) { return b, nil }
	sch, iter, err := p.sel.Query(p.ctx, p.d.e, p.key, p.parsed, bind, v)
	if err != nil {
		return nil, nil, err
	}
	rows, err := sql.RowIterToRows(p.ctx, iter)
	return sch, rows, err
}

// plannedSchema is planned, with the result's schema.
func (p *preparedStmt) plannedSchema(args ...any) (sql.Schema, []sql.Row, error) {
	b, _ := bindArgs(args)
	sch, iter, err := Query(p.ctx, p.d.e, p.key, p.parsed, b)
	if err != nil {
		return nil, nil, err
	}
	rows, err := sql.RowIterToRows(p.ctx, iter)
	return sch, rows, err
}

// TestRangeAggMatchesPlanned runs prepared aggregates over ranges through
// their templates and planned in full by GMS, over random rows of every
// integer type with NULLs and extreme values (sums past 64 bits), and
// random ranges (empty ones among them), and compares the results and
// their types; in a transaction too, whose own writes the ranges see.
func TestRangeAggMatchesPlanned(t *testing.T) {
	d := newTestDB(t)
	d.exec(`CREATE TABLE t (
		id INT PRIMARY KEY,
		ti TINYINT,
		tu TINYINT UNSIGNED,
		si SMALLINT,
		k INT,
		iu INT UNSIGNED,
		b BIGINT,
		bu BIGINT UNSIGNED,
		c VARCHAR(10),
		dc DECIMAL(10,2),
		KEY k_idx (k))`)
	r := rand.New(rand.NewPCG(9, 10))
	val := func(lo, hi int64) string {
		switch r.IntN(10) {
		case 0:
			return "NULL"
		case 1:
			return fmt.Sprint(lo)
		case 2:
			return fmt.Sprint(hi)
		}
		return fmt.Sprint(lo + int64(r.Uint64N(uint64(hi)-uint64(lo))))
	}
	uval := func(hi uint64) string {
		switch r.IntN(10) {
		case 0:
			return "NULL"
		case 1:
			return "0"
		case 2:
			return fmt.Sprint(hi)
		}
		return fmt.Sprint(r.Uint64N(hi))
	}
	var rows []string
	for i := 0; i < 400; i++ {
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s, %s, %s, %s, %s, 'c%d', %d.25)", i*2-200,
			val(math.MinInt8, math.MaxInt8), uval(math.MaxUint8), val(math.MinInt16, math.MaxInt16),
			val(-50, 50), uval(math.MaxUint32), val(math.MinInt64, math.MaxInt64), uval(math.MaxUint64),
			r.IntN(50), r.IntN(100)))
	}
	d.exec("INSERT INTO t VALUES " + strings.Join(rows, ", "))

	tests := []struct {
		q     string
		nargs int
		fast  bool // whether the template aggregates from the stored rows
	}{
		{"SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT COUNT(*), SUM(k), AVG(k), MIN(k), MAX(k), COUNT(k) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT SUM(b), AVG(b), MIN(b), MAX(b) FROM t WHERE id BETWEEN ? AND ? OR id IN (?, ?)", 4, true},
		{"SELECT SUM(bu), AVG(bu), MIN(bu), MAX(bu), COUNT(bu) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT MAX(ti), MIN(tu), SUM(si), AVG(iu), SUM(tu) FROM t WHERE id >= ? AND id < ?", 2, true},
		{"SELECT SUM(k) + 1, MAX(iu) AS m FROM t WHERE id BETWEEN ? AND ?", 2, false}, // an expression: no template
		{"SELECT COUNT(*) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		// Renamed, reordered and repeated results (the Project above the
		// aggregates, which rangeAgg takes over).
		{"SELECT SUM(k) AS s, COUNT(*) AS n, MAX(b) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT MAX(k) AS a, MIN(k), MAX(k) AS b, COUNT(*) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT AVG(bu) avg_bu, SUM(ti) FROM t WHERE t.id BETWEEN ? AND ?", 2, true},
		// A secondary index: the rows come fetched (or covered).
		{"SELECT SUM(b), COUNT(*), MIN(k) FROM t WHERE k BETWEEN ? AND ?", 2, true},
		{"SELECT SUM(k), MAX(k) FROM t WHERE k BETWEEN ? AND ?", 2, true},
		// Not integers, DISTINCT, grouping: GMS's GroupBy.
		{"SELECT MIN(c), SUM(k) FROM t WHERE id BETWEEN ? AND ?", 2, false},
		{"SELECT SUM(dc) FROM t WHERE id BETWEEN ? AND ?", 2, false},
		{"SELECT SUM(DISTINCT k) FROM t WHERE id BETWEEN ? AND ?", 2, false},
		{"SELECT k, SUM(b) FROM t WHERE id BETWEEN ? AND ? GROUP BY k", 2, false},
	}
	check := func(t *testing.T, p *preparedStmt, nargs int) {
		for i := 0; i < 150; i++ {
			args := make([]any, nargs)
			for j := range args {
				args[j] = int64(r.IntN(1000) - 300)
			}
			if nargs == 2 && r.IntN(3) != 0 && args[0].(int64) > args[1].(int64) {
				args[0], args[1] = args[1], args[0]
			}
			gotSch, got, err1 := p.runSchema(args...)
			wantSch, want, err2 := p.plannedSchema(args...)
			require.NoError(t, err1, "args %v", args)
			require.NoError(t, err2, "args %v", args)
			require.Equal(t, want, got, "args %v", args)
			require.True(t, sameColumns(wantSch, gotSch), "schema %v, want %v", gotSch, wantSch)
			for i := range want {
				for j := range want[i] {
					require.IsType(t, want[i][j], got[i][j], "args %v", args)
				}
			}
		}
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			p := d.prepare(d.ctx, tc.q)
			require.NotNil(t, p.sel)
			check(t, p, tc.nargs)
			require.Equal(t, tc.fast, p.sel.tmpl != nil && hasRangeAgg(p.sel.tmpl.root))
			if tc.fast {
				// The Project over the aggregates is rangeAgg's too.
				ra, ok := p.sel.tmpl.root.(*rangeAgg)
				require.True(t, ok && ra.top != nil, "root %T", p.sel.tmpl.root)
			}
		})
	}
	t.Run("transaction", func(t *testing.T) {
		p := d.prepare(d.ctx, tests[1].q)
		check(t, p, tests[1].nargs)
		d.exec("BEGIN")
		d.exec("UPDATE t SET k = k + 1000, b = NULL WHERE id % 3 = 0")
		d.exec("DELETE FROM t WHERE id % 7 = 0")
		d.exec("INSERT INTO t (id, k, b) VALUES (1, 5, 6), (3, NULL, 7)")
		check(t, p, tests[1].nargs)
		require.True(t, hasRangeAgg(p.sel.tmpl.root))
		d.exec("ROLLBACK")
	})
}

// TestRangeAggAfterAddColumn: rows stored before ALTER TABLE ADD COLUMN
// aggregate the new column's default, as the planned statement does.
func TestRangeAggAfterAddColumn(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	d.exec("INSERT INTO t VALUES (1, 1), (2, 2), (3, NULL)")
	d.exec("ALTER TABLE t ADD COLUMN m INT DEFAULT 7, ADD COLUMN n BIGINT")
	d.exec("INSERT INTO t VALUES (4, 4, 1, 9)")
	p := d.prepare(d.ctx, "SELECT COUNT(*), SUM(m), MIN(m), MAX(m), COUNT(n), SUM(n), SUM(k) FROM t WHERE id BETWEEN ? AND ?")
	for i := 0; i < 3; i++ {
		got, err := p.run(int64(0), int64(10))
		require.NoError(t, err)
		want, err := p.planned(int64(0), int64(10))
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	require.True(t, p.sel.tmpl != nil && hasRangeAgg(p.sel.tmpl.root))
}
