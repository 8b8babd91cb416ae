package codec

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

func BenchmarkAppendKey(b *testing.B) {
	cases := []struct {
		name string
		typ  sql.Type
		v    any
	}{
		{"int64", types.Int64, int64(1234567)},
		{"int32/desc", types.Int32, int32(-42)},
		{"float64", types.Float64, 3.14159},
		{"datetime", datetime6, time.Date(2024, 5, 6, 7, 8, 9, 123000, time.UTC)},
		{"varchar_bin/16", vcBin, "customer-0000042"},
		{"varchar_ai_ci/16", vcAICI, "Customer-0000042"},
		{"varchar_general_ci/16", vcGeneral, "Customer-0000042"},
		{"varchar_general_ci/16+4sp", vcGeneral, "Customer 0000042    "},
		{"varchar_utf8mb4_bin/16", vcMB4Bin, "customer-0000042"},
		{"varbinary/16", varbinary, []byte("\x00binary\x00payload")},
		{"decimal(10,2)", decCol, decimal.New(123456, -2)},
	}
	for _, c := range cases {
		dir := Asc
		if c.name == "int32/desc" {
			dir = Desc
		}
		b.Run(c.name, func(b *testing.B) {
			dst := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = AppendKey(dst[:0], c.typ, c.v, dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchRow is a typical OLTP row: ids, money, a timestamp, short strings.
func benchRow() (sql.Schema, sql.Row) {
	sch := sql.Schema{
		{Name: "id", Type: types.Int64},
		{Name: "customer", Type: types.Int32},
		{Name: "amount", Type: decCol},
		{Name: "created", Type: datetime6},
		{Name: "status", Type: enumType},
		{Name: "name", Type: vcAICI},
		{Name: "note", Type: types.LongText},
		{Name: "score", Type: types.Float64},
		{Name: "flags", Type: types.Uint8},
		{Name: "blob", Type: varbinary},
	}
	row := sql.Row{int64(90210), int32(42), decimal.New(1999, -2), time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC),
		uint16(2), "Alice Example", "delivered to the front desk", 0.75, uint8(3), nil}
	return sch, row
}

func BenchmarkAppendRow(b *testing.B) {
	sch, row := benchRow()
	dst := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = AppendRow(dst[:0], sch, row); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// benchEncodedRow returns benchRow's schema and the row encoded.
func benchEncodedRow(b *testing.B) (sql.Schema, []byte) {
	sch, row := benchRow()
	enc, err := AppendRow(nil, sch, row)
	if err != nil {
		b.Fatal(err)
	}
	return sch, enc
}

func BenchmarkDecodeRow(b *testing.B) {
	sch, enc := benchEncodedRow(b)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		// A fresh row each time, as rows cross goroutines.
		if _, err := DecodeRow(enc, sch, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRowColumns(b *testing.B) {
	sch, enc := benchEncodedRow(b)
	cols := []int{0, 7}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRowColumns(enc, sch, cols, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRowArena decodes rows as a scan does, through an Arena.
func BenchmarkDecodeRowArena(b *testing.B) {
	sch, enc := benchEncodedRow(b)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	var a Arena
	for b.Loop() {
		if _, err := a.DecodeRow(enc, sch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRowFreshArena decodes one row through a new Arena, as a
// point select does.
func BenchmarkDecodeRowFreshArena(b *testing.B) {
	sch, enc := benchEncodedRow(b)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		var a Arena
		if _, err := a.DecodeRow(enc, sch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeStatements decodes statements of 100 sysbench rows (the
// 120-byte c column), each in a new Arena or in one from the pool.
func BenchmarkDecodeStatements(b *testing.B) {
	sch := sql.Schema{
		{Name: "id", Type: types.Int32},
		{Name: "c", Type: types.MustCreateString(sqltypes.Char, 120, sql.Collation_Default)},
	}
	enc, err := AppendRow(nil, sch, sql.Row{int32(1), strings.Repeat("c", 119)})
	if err != nil {
		b.Fatal(err)
	}
	cols := []int{1}
	for _, pooled := range []bool{false, true} {
		b.Run(fmt.Sprintf("pooled=%t", pooled), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a := new(Arena)
				if pooled {
					a = GetArena()
				}
				for range 100 {
					if _, err := a.DecodeRowColumns(enc, sch, cols); err != nil {
						b.Fatal(err)
					}
				}
				if pooled {
					a.Release()
				}
			}
		})
	}
}

// BenchmarkDecodeRangeColumn decodes c of 100 sysbench rows (id, k, c,
// pad) through a pooled Arena, as simple_range does.
func BenchmarkDecodeRangeColumn(b *testing.B) {
	sch := sql.Schema{
		{Name: "id", Type: types.Int32},
		{Name: "k", Type: types.Int32},
		{Name: "c", Type: types.MustCreateString(sqltypes.Char, 120, sql.Collation_Default)},
		{Name: "pad", Type: types.MustCreateString(sqltypes.Char, 60, sql.Collation_Default)},
	}
	enc, err := AppendRow(nil, sch, sql.Row{int32(51234), int32(49871), strings.Repeat("1234567890-", 10), strings.Repeat("abcde-", 10)})
	if err != nil {
		b.Fatal(err)
	}
	cols := []int{2}
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		a := GetArena()
		for range 100 {
			if _, err := a.DecodeRowColumns(enc, sch, cols); err != nil {
				b.Fatal(err)
			}
		}
		a.Release()
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the process's CPU time so far in nanoseconds: on a
// shared machine it varies far less than wall time.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
