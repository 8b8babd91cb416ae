package sqlstore

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRangeStatementAllocs bounds the allocations of sqlbench's
// sum_range and simple_range (100 rows, prepared, on reused plans) through
// a Conn. Neither allocates per row: a regression that boxes each row's
// values again, or plans the statement again, fails here.
func TestRangeStatementAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops buffers under the race detector")
	}
	d := newTestDB(t)
	d.exec("CREATE TABLE sbtest (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL)")
	var rows []string
	for id := 1; id <= 2000; id++ {
		rows = append(rows, fmt.Sprintf("(%d, %d, '%s', 'pad')", id, id*7%2000, strings.Repeat("c", 119)))
	}
	d.exec("INSERT INTO sbtest VALUES " + strings.Join(rows, ","))
	require.NoError(t, d.s.kvDB().Compact(nil, nil))
	ctx := context.Background()
	e := d.s.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	require.NoError(t, c.UseDatabase(ctx, "mydb"))
	for _, tc := range []struct {
		text string
		max  float64
	}{
		{"SELECT SUM(k) FROM sbtest WHERE id BETWEEN ? AND ?", 26},
		{"SELECT c FROM sbtest WHERE id BETWEEN ? AND ?", 60},
	} {
		t.Run(tc.text, func(t *testing.T) {
			st, err := c.Prepare(ctx, tc.text)
			require.NoError(t, err)
			defer st.Close()
			lo := int64(1)
			var n int
			var qerr error
			run := func() {
				lo = lo*7919%1800 + 1
				r, err := st.Query(ctx, Arg{Ordinal: 1, Value: lo}, Arg{Ordinal: 2, Value: lo + 99})
				if err != nil {
					qerr = err
					return
				}
				n = 0
				for {
					if _, err := r.Next(); err != nil {
						if err != io.EOF {
							qerr = err
						}
						break
					}
					n++
				}
				if err := r.Close(); err != nil {
					qerr = err
				}
			}
			for range 4 { // the template is learnt
				run()
			}
			allocs := testing.AllocsPerRun(200, run)
			require.NoError(t, qerr)
			require.Positive(t, n)
			t.Logf("%.0f allocations per execution", allocs)
			require.LessOrEqual(t, allocs, tc.max)
		})
	}
}
