package sqlstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAggIterMatchesPlanned: the templates that aggregate over their table
// access alone run on an aggIter, and give what GMS's executor gives over
// the plan planned in full: the row, its schema, FOUND_ROWS() and
// ROW_COUNT() after it, in autocommit mode and inside a transaction that
// writes between executions; and two executions may be open at once.
func TestAggIterMatchesPlanned(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, u BIGINT UNSIGNED, c VARCHAR(20), KEY k_idx (k))")
	for i := range 120 {
		k := fmt.Sprint(i % 13)
		if i%11 == 0 {
			k = "NULL"
		}
		d.exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %s, %d, 'c%d')", i, k, uint64(i)<<58, i))
	}
	tests := []struct {
		q      string
		nargs  int
		direct bool
	}{
		{"SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT COUNT(*), SUM(u), AVG(k) FROM t WHERE id BETWEEN ? AND ?", 2, true},
		{"SELECT MAX(k) AS hi, MIN(u), COUNT(k) FROM t WHERE id IN (?, ?, ?) OR id BETWEEN ? AND ?", 5, true},
		{"SELECT SUM(id) FROM t WHERE k BETWEEN ? AND ?", 2, true},
		{"SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ? FOR UPDATE", 2, false},
	}
	r := rand.New(rand.NewPCG(7, 8))
	next := 1000
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			p := d.prepare(d.ctx, tc.q)
			check := func(args []any) {
				t.Helper()
				gotSch, got, err := p.runSchema(args...)
				require.NoError(t, err)
				gotInfo := d.exec("SELECT FOUND_ROWS(), ROW_COUNT()")
				wantSch, want, err := p.plannedSchema(args...)
				require.NoError(t, err)
				wantInfo := d.exec("SELECT FOUND_ROWS(), ROW_COUNT()")
				require.Equal(t, want, got, "args %v", args)
				require.True(t, wantSch.Equals(gotSch), "schema %v, want %v", gotSch, wantSch)
				require.Equal(t, wantInfo, gotInfo, "args %v", args)
			}
			args := func() []any {
				a := make([]any, tc.nargs)
				for j := range a {
					a[j] = int64(r.IntN(140) - 10)
				}
				return a
			}
			for range 30 {
				check(args())
			}
			require.NotNil(t, p.sel.tmpl)
			if tc.direct {
				require.NotNil(t, p.sel.tmpl.directAgg(), "runs on an aggIter")
			}

			// Two executions open at once: the second does not take the
			// first's iterator.
			a1, a2 := args(), args()
			it1 := p.start(a1...)
			it2 := p.start(a2...)
			row2, err := it2.Next(p.ctx)
			require.NoError(t, err)
			row1, err := it1.Next(p.ctx)
			require.NoError(t, err)
			require.NoError(t, it2.Close(p.ctx))
			require.NoError(t, it1.Close(p.ctx))
			want1, err := p.planned(a1...)
			require.NoError(t, err)
			want2, err := p.planned(a2...)
			require.NoError(t, err)
			require.Equal(t, want1[0], row1)
			require.Equal(t, want2[0], row2)

			d.exec("BEGIN")
			for range 15 {
				next++
				d.exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, 'n%d')", next, next%13, next, next))
				d.exec(fmt.Sprintf("UPDATE t SET k = %d WHERE id = %d", r.IntN(50), r.IntN(120)))
				a := args()
				a[len(a)-1] = int64(next + 5)
				check(a)
			}
			d.exec("ROLLBACK")
		})
	}
}
