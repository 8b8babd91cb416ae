package main

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/cmd/sqlbench/internal/meter"
	"github.com/strata-db/strata/server"
)

// BenchmarkStatementFloor runs statements that read no table, the cost
// every statement pays, through database/sql: in process (driver
// "strata") and over the MySQL protocol (server.Start on a loopback port,
// go-sql-driver/mysql). SELECT 1 runs prepared and as text (db.Query
// without arguments; over the wire, COM_QUERY); SET of a user variable,
// and BEGIN then COMMIT (one op), as text. cpu-us/op is the process's CPU
// time per op, the client's included:
//
//	go test ./cmd/sqlbench -run '^$' -bench StatementFloor -benchtime 3s -cpuprofile floor.prof
func BenchmarkStatementFloor(b *testing.B) {
	ctx := context.Background()
	inProcess, err := sql.Open("strata", b.TempDir()+"?db=main&sync=false")
	require.NoError(b, err)
	defer inProcess.Close()

	s, err := server.Start(server.Config{Data: b.TempDir(), Listen: "127.0.0.1:0", User: "root", Password: "floor", NoSync: true})
	require.NoError(b, err)
	defer func() { require.NoError(b, s.Shutdown(ctx)) }()
	wire, err := sql.Open("mysql", "root:floor@tcp("+s.Addr()+")/main")
	require.NoError(b, err)
	defer wire.Close()

	// Each case runs its statements once per op on conn.
	cases := []struct {
		name string
		op   func(b *testing.B, conn *sql.Conn) func() error
	}{
		{"select_1/prepared", func(b *testing.B, conn *sql.Conn) func() error {
			stmt, err := conn.PrepareContext(ctx, "SELECT 1")
			require.NoError(b, err)
			b.Cleanup(func() { _ = stmt.Close() })
			return func() error { return drainRows(stmt.QueryContext(ctx)) }
		}},
		{"select_1/text", func(b *testing.B, conn *sql.Conn) func() error {
			return func() error { return drainRows(conn.QueryContext(ctx, "SELECT 1")) }
		}},
		{"set/text", func(b *testing.B, conn *sql.Conn) func() error {
			return func() error {
				_, err := conn.ExecContext(ctx, "SET @floor = 1")
				return err
			}
		}},
		{"begin_commit/text", func(b *testing.B, conn *sql.Conn) func() error {
			return func() error {
				if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
					return err
				}
				_, err := conn.ExecContext(ctx, "COMMIT")
				return err
			}
		}},
	}
	for _, front := range []struct {
		name string
		db   *sql.DB
	}{{"driver", inProcess}, {"wire", wire}} {
		for _, c := range cases {
			b.Run(front.name+"/"+c.name, func(b *testing.B) {
				conn, err := front.db.Conn(ctx)
				require.NoError(b, err)
				defer conn.Close()
				op := c.op(b, conn)
				b.ReportAllocs()
				b.ResetTimer()
				cpu := meter.ProcessCPU()
				for i := 0; i < b.N; i++ {
					if err := op(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(meter.ProcessCPU()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
			})
		}
	}
}

// drainRows reads a query's rows to the end and closes them.
func drainRows(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	var v sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&v); err != nil {
			_ = rows.Close()
			return err
		}
	}
	return errors.Join(rows.Err(), rows.Close())
}
