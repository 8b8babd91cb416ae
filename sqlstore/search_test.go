package sqlstore

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/stretchr/testify/require"
)

func TestLookupForExpressions(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	d.exec("CREATE TABLE p (x INT, y INT, z INT, PRIMARY KEY (x, y), UNIQUE KEY uz (z))")
	table := func(name string) *Table {
		db, err := d.s.Provider().Database(d.ctx, "mydb")
		require.NoError(t, err)
		tbl, ok, err := db.GetTableInsensitive(d.ctx, name)
		require.NoError(t, err)
		require.True(t, ok)
		return tbl.(*Table)
	}
	col := func(tbl, name string, typ sql.Type) sql.Expression {
		return expression.NewGetFieldWithTable(0, 1, typ, "mydb", tbl, name, true)
	}
	id, k, c := col("t", "id", types.Int32), col("t", "k", types.Int32), col("t", "c", types.Text)
	lit := func(v any) sql.Expression {
		switch v.(type) {
		case string:
			return expression.NewLiteral(v, types.Text)
		case float64:
			return expression.NewLiteral(v, types.Float64)
		case nil:
			return expression.NewLiteral(nil, types.Null)
		}
		return expression.NewLiteral(v, types.Int64)
	}
	in := func(e sql.Expression, vals ...any) sql.Expression {
		tuple := make(expression.Tuple, len(vals))
		for i, v := range vals {
			tuple[i] = lit(v)
		}
		return expression.NewInTuple(e, tuple)
	}
	between := func(e sql.Expression, lo, hi int64) sql.Expression {
		return expression.NewBetween(e, lit(lo), lit(hi))
	}
	for _, tc := range []struct {
		name     string
		table    string
		exprs    []sql.Expression
		index    string // "" when declined
		ranges   string
		residual string
	}{
		{"pk = ?", "t", []sql.Expression{expression.NewEquals(id, lit(5))}, "PRIMARY", "[{[5, 5]}]", ""},
		{"? = pk", "t", []sql.Expression{expression.NewEquals(lit(5), id)}, "PRIMARY", "[{[5, 5]}]", ""},
		{"pk IN", "t", []sql.Expression{in(id, 3, 1, 2, 1)}, "PRIMARY", "[{[1, 1]}, {[2, 2]}, {[3, 3]}]", ""},
		{"pk BETWEEN", "t", []sql.Expression{between(id, 1, 10)}, "PRIMARY", "[{[1, 10]}]", ""},
		{"pk >= AND <=", "t", []sql.Expression{expression.NewGreaterThanOrEqual(id, lit(1)), expression.NewLessThanOrEqual(id, lit(10))}, "PRIMARY", "[{[1, 10]}]", ""},
		{"pk > AND <", "t", []sql.Expression{expression.NewGreaterThan(id, lit(1)), expression.NewLessThan(id, lit(10))}, "PRIMARY", "[{[2, 9]}]", ""},
		{"BETWEEN OR BETWEEN", "t", []sql.Expression{expression.NewOr(between(id, 5, 7), between(id, 1, 3))}, "PRIMARY", "[{[1, 3]}, {[5, 7]}]", ""},
		{"overlapping ORs merge", "t", []sql.Expression{expression.NewOr(between(id, 1, 5), between(id, 3, 7))}, "PRIMARY", "[{[1, 7]}]", ""},
		{"IN and range intersect", "t", []sql.Expression{in(id, 1, 5, 9), expression.NewGreaterThan(id, lit(3))}, "PRIMARY", "[{[5, 5]}, {[9, 9]}]", ""},
		{"pk with a residual", "t", []sql.Expression{expression.NewEquals(id, lit(5)), expression.NewEquals(c, lit("x"))}, "PRIMARY", "[{[5, 5]}]", "(t.c = 'x')"},
		{"secondary IN", "t", []sql.Expression{in(k, 2, 1)}, "k_idx", "[{[1, 1]}, {[2, 2]}]", ""},
		{"unbounded pk, bounded secondary", "t", []sql.Expression{expression.NewGreaterThan(id, lit(5)), expression.NewEquals(k, lit(3))}, "k_idx", "[{[3, 3]}]", "(t.id > 5)"},
		{"pk preferred", "t", []sql.Expression{expression.NewEquals(k, lit(3)), in(id, 1, 2)}, "PRIMARY", "[{[1, 1]}, {[2, 2]}]", "(t.k = 3)"},
		{"unique secondary of a composite key", "p", []sql.Expression{expression.NewEquals(col("p", "z", types.Int32), lit(4))}, "uz", "[{[4, 4]}]", ""},
		{"unbounded", "t", []sql.Expression{expression.NewGreaterThan(id, lit(5))}, "", "", ""},
		{"nothing matches", "t", []sql.Expression{expression.NewEquals(id, lit(5)), expression.NewEquals(id, lit(6))}, "PRIMARY", "[]", ""},
		{"one-sided beyond the type", "t", []sql.Expression{expression.NewGreaterThan(id, lit(int64(-5000000000)))}, "PRIMARY", "[{[-2147483648, 2147483647]}]", ""},
		{"one-sided past the type's end", "t", []sql.Expression{expression.NewGreaterThanOrEqual(id, lit(int64(5000000000)))}, "PRIMARY", "[]", ""},
		{"alias", "t", []sql.Expression{expression.NewEquals(col("a", "id", types.Int32), lit(5))}, "", "", ""},
		{"NULL", "t", []sql.Expression{expression.NewEquals(id, lit(nil))}, "", "", ""},
		{"IN with NULL", "t", []sql.Expression{in(id, 1, nil)}, "", "", ""},
		{"float", "t", []sql.Expression{expression.NewEquals(id, lit(1.5))}, "", "", ""},
		{"string", "t", []sql.Expression{expression.NewEquals(id, lit("5"))}, "", "", ""},
		{"out of the column's range", "t", []sql.Expression{expression.NewEquals(id, lit(int64(5000000000)))}, "PRIMARY", "[]", ""},
		{"IN partly out of range", "t", []sql.Expression{in(id, int64(5000000000), 1)}, "PRIMARY", "[{[1, 1]}]", ""},
		{"BETWEEN clamped to the type", "t", []sql.Expression{between(id, -5000000000, 5)}, "PRIMARY", "[{[-2147483648, 5]}]", ""},
		{"string column", "t", []sql.Expression{expression.NewEquals(c, lit("x"))}, "", "", ""},
		{"OR across columns", "t", []sql.Expression{expression.NewOr(expression.NewEquals(id, lit(1)), expression.NewEquals(k, lit(2)))}, "", "", ""},
		{"composite primary key prefix", "p", []sql.Expression{expression.NewEquals(col("p", "x", types.Int32), lit(1))}, "", "", ""},
		{"column against column", "t", []sql.Expression{expression.NewEquals(id, k)}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup, _, residual, ok, err := table(tc.table).LookupForExpressions(d.ctx, tc.exprs...)
			require.NoError(t, err)
			if tc.index == "" {
				require.False(t, ok)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.index, lookup.Index.ID())
			require.Equal(t, tc.ranges, lookup.Ranges.DebugString())
			if tc.residual == "" {
				require.Nil(t, residual)
			} else {
				require.Equal(t, tc.residual, residual.String())
			}
		})
	}
}

// TestLookupForExpressionsResults checks, through SQL, that the lookups
// answer as GMS's own would: the same rows with the fast path as with
// costing (a predicate it declines, written differently).
func TestLookupForExpressionsResults(t *testing.T) {
	d := accessDB(t)
	for _, tc := range []struct{ fast, costed string }{
		{"SELECT id FROM t WHERE id IN (5, 1, 3, 3000)", "SELECT id FROM t WHERE id IN (5, 1, 3, 3000) OR c = 'none'"},
		{"SELECT id FROM t WHERE id BETWEEN 10 AND 20 OR id BETWEEN 15 AND 30 OR id = 40", "SELECT id FROM t WHERE (id BETWEEN 10 AND 20 OR id BETWEEN 15 AND 30 OR id = 40) OR c = 'none'"},
		{"SELECT id, c FROM t WHERE id > 5 AND id < 9 AND c <> 'c7'", "SELECT id, c FROM t WHERE (id > 5 AND id < 9 OR c = 'none') AND c <> 'c7'"},
		{"SELECT id FROM t WHERE k IN (3, 4) AND id > 500 ORDER BY id", "SELECT id FROM t WHERE (k IN (3, 4) OR c = 'none') AND id > 500 ORDER BY id"},
		{"SELECT id FROM t WHERE id = 7 ORDER BY id DESC", "SELECT id FROM t WHERE id = 7 OR c = 'none' ORDER BY id DESC"},
		{"SELECT id FROM t WHERE id IN (9, 3, 6) ORDER BY id DESC", "SELECT id FROM t WHERE id IN (9, 3, 6) OR c = 'none' ORDER BY id DESC"},
	} {
		t.Run(tc.fast, func(t *testing.T) {
			d.t = t
			require.Equal(t, d.exec(tc.costed), d.exec(tc.fast))
		})
	}
}

// TestOutOfRangeLiterals checks that values outside an integer column's
// type match no row. GMS converts them into the type, clamping, so that
// id = 5000000000 on an INT column found the row 2147483647.
func TestOutOfRangeLiterals(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k TINYINT, KEY k_idx (k))")
	d.exec("INSERT INTO t VALUES (-2147483648, -128), (1, 1), (2147483647, 127)")
	d.exec("CREATE TABLE u (id BIGINT UNSIGNED PRIMARY KEY)")
	d.exec("INSERT INTO u VALUES (0), (18446744073709551611)")
	for _, tc := range []struct {
		q    string
		want []sql.Row
	}{
		{"SELECT id FROM t WHERE id = 5000000000", nil},
		{"SELECT id FROM t WHERE id = -5000000000", nil},
		{"SELECT id FROM t WHERE id IN (5000000000, 1)", []sql.Row{{int32(1)}}},
		{"SELECT id FROM t WHERE id BETWEEN 1 AND 5000000000", []sql.Row{{int32(1)}, {int32(2147483647)}}},
		{"SELECT id FROM t WHERE id BETWEEN 3000000000 AND 5000000000", nil},
		{"SELECT id FROM t WHERE k = 300", nil},
		{"SELECT id FROM t WHERE k IN (-300, 1)", []sql.Row{{int32(1)}}},
		{"SELECT id FROM t WHERE id > -5000000000", []sql.Row{{int32(-2147483648)}, {int32(1)}, {int32(2147483647)}}},
		{"SELECT id FROM t WHERE id >= 5000000000", nil},
		{"SELECT id FROM t WHERE id < 5000000000 AND id > 0", []sql.Row{{int32(1)}, {int32(2147483647)}}},
		{"SELECT id FROM t WHERE k > -300", []sql.Row{{int32(-2147483648)}, {int32(1)}, {int32(2147483647)}}},
		{"SELECT id FROM t WHERE k < 300 AND k > 1", []sql.Row{{int32(2147483647)}}},
		{"SELECT id FROM u WHERE id = -5", nil},
		{"SELECT id FROM u WHERE id BETWEEN -5 AND 0", []sql.Row{{uint64(0)}}},
	} {
		got := d.exec(tc.q)
		if len(got) == 0 {
			got = nil
		}
		require.Equal(t, tc.want, got, tc.q)
	}
}
