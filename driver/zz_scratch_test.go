package driver_test

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScratchAllocProfile(t *testing.T) {
	q := os.Getenv("SCRATCH_Q")
	if q == "" {
		t.Skip()
	}
	db, _ := openDB(t)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(120), KEY k_idx (k))")
	for i := range 40 {
		mustExec(t, db, "INSERT INTO t VALUES (?, ?, 'x')", i, i%20)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	stmt, err := conn.PrepareContext(ctx, q)
	require.NoError(t, err)
	nargs := 0
	for _, c := range q {
		if c == '?' {
			nargs++
		}
	}
	args := make([]any, nargs)
	var dst [2]any
	run := func() {
		for i := range args {
			args[i] = 7
		}
		rows, err := stmt.QueryContext(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		ptrs := make([]any, len(cols))
		for i := range ptrs {
			ptrs[i] = &dst[i]
		}
		for rows.Next() {
			require.NoError(t, rows.Scan(ptrs...))
		}
		require.NoError(t, rows.Close())
	}
	for range 10 {
		run()
	}
	runtime.MemProfileRate = 1
	for range 2000 {
		run()
	}
	runtime.GC()
	f, _ := os.Create(os.Getenv("SCRATCH_OUT"))
	pprof.Lookup("allocs").WriteTo(f, 0)
	f.Close()
	runtime.MemProfileRate = 512 * 1024
}
