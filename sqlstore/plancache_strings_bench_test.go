package sqlstore_test

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/sqlstore/kvstore"
)

// BenchmarkPlanCacheStrings runs text statements with string literals that
// change at every execution through a Conn: sysbench's update_non_index as
// text (a 120-character string assigned by key), an UPDATE by a string
// key and a point select by one.
//
//	go test ./sqlstore -run '^$' -bench PlanCacheStrings -benchmem
func BenchmarkPlanCacheStrings(b *testing.B) {
	ctx := context.Background()
	st, _, err := kvstore.Open(b.TempDir(), &kvstore.Options{NoSync: true})
	require.NoError(b, err)
	e := st.OpenEngine()
	defer e.Close()
	c := e.NewConn()
	defer c.Close()
	require.NoError(b, c.UseDatabase(ctx, "mydb"))
	_, err = c.Exec(ctx, "CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60), name VARCHAR(32), KEY k_1 (k), UNIQUE KEY name_1 (name))")
	require.NoError(b, err)
	const rows = 1000
	for i := 0; i < rows; i += 100 {
		q := "INSERT INTO sbtest1 VALUES "
		for j := i; j < i+100; j++ {
			if j > i {
				q += ", "
			}
			q += fmt.Sprintf("(%d, %d, 'c%d', 'p%d', 'name-%d')", j+1, j%97, j, j, j)
		}
		_, err = c.Exec(ctx, q)
		require.NoError(b, err)
	}
	// 120 characters as sysbench makes them: eleven-digit groups.
	cval := func(n int) string {
		s := ""
		for len(s) < 120 {
			s += fmt.Sprintf("%011d-", n*7919+len(s))
		}
		return s[:119]
	}
	n := 0
	b.Run("update_non_index_text", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			n++
			q := "UPDATE sbtest1 SET c='" + cval(n) + "' WHERE id=" + strconv.Itoa(n%rows+1)
			if _, err := c.Exec(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update_by_string_text", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			n++
			q := "UPDATE sbtest1 SET k=" + strconv.Itoa(n%97) + " WHERE name='name-" + strconv.Itoa(n%rows) + "'"
			if _, err := c.Exec(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("select_by_string_text", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			n++
			rows, err := c.Query(ctx, "SELECT id, k FROM sbtest1 WHERE name = 'name-"+strconv.Itoa(n%rows)+"'")
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := rows.Next(); err != nil {
					break
				}
			}
			if err := rows.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cpuPerOp reports the process's CPU time per operation, user and system,
// from now to the call of the function it returns: on a shared machine a
// steadier figure than the wall time of ns/op.
func cpuPerOp(b *testing.B) func() {
	start := rusageCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((rusageCPU()-start).Microseconds())/float64(b.N), "cpu-us/op")
		}
	}
}

func rusageCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
