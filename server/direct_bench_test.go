package server

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wireClients, when more than 1, makes BenchmarkWirePointSelect run that
// many clients at once (prepared statements only).
var wireClients = flag.Int("wire.clients", 1, "concurrent clients of BenchmarkWirePointSelect")

// BenchmarkWirePointSelect runs a prepared primary-key select over the
// MySQL protocol (go-sql-driver/mysql, client and server in this
// process), the statement of sysbench's oltp_point_select:
//
//	go test ./server -run '^$' -bench WirePointSelect -benchmem -cpuprofile wire.prof
//	go test ./server -run '^$' -bench WirePointSelect -wire.clients 8 -mutexprofile mu.prof
func BenchmarkWirePointSelect(b *testing.B) {
	ctx := context.Background()
	s, err := Start(Config{Data: b.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: "pw", NoSync: true})
	require.NoError(b, err)
	defer func() { require.NoError(b, s.Shutdown(ctx)) }()
	db := client(&testing.T{}, s.Addr(), "root", "pw", "")
	_, err = db.Exec("CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120), pad CHAR(60))")
	require.NoError(b, err)
	for i := 1; i <= 1000; i += 100 {
		q := "INSERT INTO sbtest1 VALUES "
		for j := i; j < i+100; j++ {
			if j > i {
				q += ","
			}
			q += fmt.Sprintf("(%d, %d, 'c%d', 'pad')", j, j%97, j)
		}
		_, err = db.Exec(q)
		require.NoError(b, err)
	}
	if *wireClients > 1 {
		// Several clients at once, as sysbench's --threads: the server's
		// CPU per statement and its locks shared between connections.
		db.SetMaxOpenConns(*wireClients)
		db.SetMaxIdleConns(*wireClients)
		stmt, err := db.PrepareContext(ctx, "SELECT c FROM sbtest1 WHERE id=?")
		require.NoError(b, err)
		defer stmt.Close()
		b.ReportAllocs()
		b.SetParallelism((*wireClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		var next atomic.Int64
		defer reportCPU(b)()
		b.RunParallel(func(pb *testing.PB) {
			var c string
			for pb.Next() {
				if err := stmt.QueryRowContext(ctx, next.Add(1)%1000+1).Scan(&c); err != nil {
					b.Error(err)
					return
				}
			}
		})
		return
	}
	conn, err := db.Conn(ctx)
	require.NoError(b, err)
	defer conn.Close()
	for _, mode := range []string{"prepared", "text"} {
		b.Run(mode, func(b *testing.B) {
			stmt, err := conn.PrepareContext(ctx, "SELECT c FROM sbtest1 WHERE id=?")
			require.NoError(b, err)
			defer stmt.Close()
			var c string
			b.ReportAllocs()
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				i++
				if mode == "prepared" {
					err = stmt.QueryRowContext(ctx, i%1000+1).Scan(&c)
				} else {
					err = conn.QueryRowContext(ctx, fmt.Sprintf("SELECT c FROM sbtest1 WHERE id=%d", i%1000+1)).Scan(&c)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportCPU starts measuring the process's CPU time (user and system, the
// client's included) and returns the function that reports it per
// operation as cpu-us/op: on a shared machine the wall time per operation
// says more about the other processes than about this one.
func reportCPU(b *testing.B) func() {
	start := processCPU()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((processCPU()-start).Microseconds())/float64(b.N), "cpu-us/op")
		}
	}
}

// processCPU is the CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWireInsert runs sysbench's oltp_insert statement over the MySQL
// protocol, as sysbench sends it (a text INSERT with its values, 0 for the
// auto-increment key), into a table with a secondary index, one client and
// the server in this process, each insert an autocommit transaction:
//
//	go test ./server -run '^$' -bench WireInsert -benchmem
func BenchmarkWireInsert(b *testing.B) {
	ctx := context.Background()
	s, err := Start(Config{Data: b.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: "pw", NoSync: true})
	require.NoError(b, err)
	defer func() { require.NoError(b, s.Shutdown(ctx)) }()
	db := client(&testing.T{}, s.Addr(), "root", "pw", "")
	_, err = db.Exec("CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))")
	require.NoError(b, err)
	conn, err := db.Conn(ctx)
	require.NoError(b, err)
	defer conn.Close()
	c := strings.Repeat("1234567890-", 10)
	b.ReportAllocs()
	defer reportCPU(b)()
	i := 0
	for b.Loop() {
		i++
		q := fmt.Sprintf("INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, %d, '%s', 'pad-%d')", i*7919%100000, c, i)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}
