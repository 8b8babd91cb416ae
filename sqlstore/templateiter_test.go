package sqlstore

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/stretchr/testify/require"
)

// start begins an execution through the PreparedSelect, returning its
// iterator unread.
func (p *preparedStmt) start(args ...any) sql.RowIter {
	p.d.t.Helper()
	b, v := bindArgs(args)
	_, iter, err := p.sel.Query(p.ctx, p.d.e, p.key, p.parsed, func() (map[string]sqlparser.Expr, error) { return b, nil }, v)
	require.NoError(p.d.t, err)
	return iter
}

// startPlanned begins an execution planned in full by GMS.
func (p *preparedStmt) startPlanned(args ...any) sql.RowIter {
	p.d.t.Helper()
	b, _ := bindArgs(args)
	_, iter, err := Query(p.ctx, p.d.e, p.key, p.parsed, b)
	require.NoError(p.d.t, err)
	return iter
}

// TestTableIterMatchesPlanned: the templates that read their table access
// alone run on a tableIter, and give what GMS's executor gives over the
// plan planned in full: the rows, FOUND_ROWS() and ROW_COUNT() after them,
// in autocommit mode and inside a transaction that writes between
// executions.
func TestTableIterMatchesPlanned(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	for i := range 120 {
		d.exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'c%d')", i, i%13, i))
	}
	tests := []struct {
		q     string
		nargs int
	}{
		{"SELECT c FROM t WHERE id = ?", 1},
		{"SELECT * FROM t WHERE id = ?", 1},
		{"SELECT c, id FROM t WHERE id IN (?, ?, ?, ?)", 4},
		{"SELECT id, c FROM t WHERE k = ?", 1},
		{"SELECT id FROM t WHERE k = ?", 1},
		{"SELECT c FROM t WHERE id BETWEEN ? AND ?", 2},
		{"SELECT k, c FROM t WHERE k IN (?, ?) OR k BETWEEN ? AND ?", 4},
	}
	r := rand.New(rand.NewPCG(3, 4))
	next := 1000
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			p := d.prepare(d.ctx, tc.q)
			check := func(args []any) {
				t.Helper()
				got, err := p.run(args...)
				require.NoError(t, err)
				gotInfo := d.exec("SELECT FOUND_ROWS(), ROW_COUNT()")
				want, err := p.planned(args...)
				require.NoError(t, err)
				wantInfo := d.exec("SELECT FOUND_ROWS(), ROW_COUNT()")
				require.Equal(t, want, got, "args %v", args)
				require.Equal(t, wantInfo, gotInfo, "args %v", args)
			}
			args := func() []any {
				a := make([]any, tc.nargs)
				for j := range a {
					a[j] = int64(r.IntN(140) - 10)
				}
				return a
			}
			// The rows of an execution stay as they were while later
			// executions reuse the iterator's memory (rowIterMem).
			keptArgs := args()
			kept, err := p.run(keptArgs...)
			require.NoError(t, err)
			for range 40 {
				check(args())
			}
			want, err := p.planned(keptArgs...)
			require.NoError(t, err)
			require.Equal(t, want, kept, "rows of an earlier execution, args %v", keptArgs)
			require.NotNil(t, p.sel.tmpl)
			require.True(t, p.sel.tmpl.direct(), "runs on a tableIter")

			d.exec("BEGIN")
			for range 20 {
				next++
				d.exec(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'n%d')", next, next%13, next))
				d.exec(fmt.Sprintf("UPDATE t SET c = 'u%d' WHERE id = %d", next, r.IntN(120)))
				a := args()
				if tc.nargs == 1 {
					a[0] = int64(next % 13)
				}
				check(a)
			}
			d.exec("ROLLBACK")
		})
	}
}

// TestTableIterCursor: an execution reads the rows of its statement's view
// as of its start, also when the transaction writes before its first row
// is read, and two executions of one statement may be open at once (the
// kept iterator is not reused while it is read).
func TestTableIterCursor(t *testing.T) {
	d := newTestDB(t)
	d.exec("CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY k_idx (k))")
	d.exec("INSERT INTO t VALUES (1, 5, 'a'), (2, 5, 'b'), (3, 6, 'c')")
	p := d.prepare(d.ctx, "SELECT id, c FROM t WHERE k = ?")
	for range 4 {
		_, err := p.run(int64(5))
		require.NoError(t, err)
	}
	require.True(t, p.sel.tmpl != nil && p.sel.tmpl.direct())

	d.exec("BEGIN")
	mine, planned := p.start(int64(5)), p.startPlanned(int64(5))
	other := p.start(int64(6))
	d.exec("INSERT INTO t VALUES (4, 5, 'd'), (5, 6, 'e')")
	d.exec("UPDATE t SET c = 'z' WHERE id = 1")
	want, err := sql.RowIterToRows(p.ctx, planned)
	require.NoError(t, err)
	got, err := sql.RowIterToRows(p.ctx, mine)
	require.NoError(t, err)
	require.Equal(t, want, got)
	got, err = sql.RowIterToRows(p.ctx, other)
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(3), "c"}}, got)
	// Now the writes are seen.
	got, err = p.run(int64(5))
	require.NoError(t, err)
	require.Equal(t, []sql.Row{{int32(1), "z"}, {int32(2), "b"}, {int32(4), "d"}}, got)
	d.exec("ROLLBACK")

	// Closing twice is harmless, and a closed iterator says EOF.
	it := p.start(int64(5))
	require.NoError(t, it.Close(p.ctx))
	require.NoError(t, it.Close(p.ctx))
	_, err = it.Next(p.ctx)
	require.ErrorIs(t, err, io.EOF)
}
