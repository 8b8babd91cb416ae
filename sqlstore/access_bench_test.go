package sqlstore

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/strata-db/strata/kv"
	"github.com/strata-db/strata/planner"
)

// accessBenchRows is the size of the access-path benchmarks' table.
const accessBenchRows = 100_000

// accessBenchDB returns a store with sysbench's table sbtest(id, k, c, pad)
// of accessBenchRows rows, compacted, with every block in a block cache
// large enough to hold them: the figures are CPU costs, not I/O.
func accessBenchDB(b *testing.B) *testDB {
	// 1 MiB tables: some 25 of them, as a table of a million rows has
	// at the default 8 MiB, so that ranges spread over the key space
	// reach different files.
	d := newTestDBWith(b, &testOptions{NoSync: true, KV: &kv.Options{CacheSize: 256 << 20, TargetFileSize: 1 << 20}})
	d.exec("CREATE TABLE sbtest (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_idx (k))")
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for lo := 1; lo <= accessBenchRows; lo += 1000 {
		sb.Reset()
		sb.WriteString("INSERT INTO sbtest VALUES ")
		for id := lo; id < lo+1000; id++ {
			if id > lo {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "(%d, %d, '%s', '%s')", id, r.IntN(accessBenchRows)+1, strings.Repeat("1234567890-", 10), strings.Repeat("abcde-", 10))
		}
		d.exec(sb.String())
	}
	if err := d.s.kvDB().Compact(nil, nil); err != nil {
		b.Fatal(err)
	}
	// A full scan loads every block into the cache.
	d.exec("SELECT COUNT(c) FROM sbtest")
	return d
}

// lookupOf builds the lookup GMS would hand the table for ranges of the
// given index, each [lo, hi] over its first column.
func lookupOf(idx sql.Index, bounds [][2]int32) sql.IndexLookup {
	ranges := make(sql.MySQLRangeCollection, len(bounds))
	for i, bd := range bounds {
		ranges[i] = sql.MySQLRange{sql.ClosedRangeColumnExpr(bd[0], bd[1], types.Int32)}
	}
	return sql.IndexLookup{Index: idx, Ranges: ranges}
}

// BenchmarkAccessPaths reads sbtest through the table's lookup path
// (LookupPartitions and PartitionRows, without GMS's parser and analyzer)
// in both access modes, so that the figures are the read path's own:
//
//	go test ./sqlstore -run '^$' -bench AccessPaths -benchmem
func BenchmarkAccessPaths(b *testing.B) {
	d := accessBenchDB(b)
	db, err := d.s.Provider().Database(d.ctx, "mydb")
	if err != nil {
		b.Fatal(err)
	}
	tbl, ok, err := db.GetTableInsensitive(d.ctx, "sbtest")
	if err != nil || !ok {
		b.Fatal(err)
	}
	t := tbl.(*Table).WithProjections([]string{"c"}).(*Table)
	indexes, err := t.GetIndexes(d.ctx)
	if err != nil {
		b.Fatal(err)
	}
	primary, kIdx := indexes[0], indexes[1]
	// Reads run in a transaction, as a statement's do.
	d.exec("START TRANSACTION")
	r := rand.New(rand.NewPCG(3, 4))
	id := func() int32 { return int32(r.IntN(accessBenchRows-10000) + 1) }
	for _, bc := range []struct {
		name   string
		idx    sql.Index
		bounds func() [][2]int32
	}{
		{"point", primary, func() [][2]int32 { k := id(); return [][2]int32{{k, k}} }},
		{"in_list:10", primary, func() [][2]int32 { return points(id, 10) }},
		{"in_list:100", primary, func() [][2]int32 { return points(id, 100) }},
		{"range:100", primary, func() [][2]int32 { k := id(); return [][2]int32{{k, k + 99}} }},
		{"range:10000", primary, func() [][2]int32 { k := id(); return [][2]int32{{k, k + 9999}} }},
		{"multi_range:10", primary, func() [][2]int32 {
			out := make([][2]int32, 10)
			k := id() / 2
			for i := range out {
				out[i] = [2]int32{k + int32(i)*1000, k + int32(i)*1000 + 9}
			}
			return out
		}},
		{"multi_range:10/spread", primary, func() [][2]int32 {
			// One range in each tenth of the table, as sqlbench's.
			out := make([][2]int32, 10)
			for i := range out {
				k := int32(i*accessBenchRows/10) + int32(r.IntN(accessBenchRows/10-10)) + 1
				out[i] = [2]int32{k, k + 9}
			}
			return out
		}},
		{"k_in:10", kIdx, func() [][2]int32 { return points(id, 10) }},
	} {
		for _, mode := range []planner.Mode{planner.Planned, planner.Naive} {
			b.Run(bc.name+"/"+mode.String(), func(b *testing.B) {
				it := &indexedTable{Table: t, opts: planner.Options{Mode: mode}, lookups: new(atomic.Int64)}
				rows := 0
				for b.Loop() {
					pi, err := it.LookupPartitions(d.ctx, lookupOf(bc.idx, bc.bounds()))
					if err != nil {
						b.Fatal(err)
					}
					p, _ := pi.Next(d.ctx)
					ri, err := t.PartitionRows(d.ctx, p)
					if err != nil {
						b.Fatal(err)
					}
					for {
						_, err := ri.Next(d.ctx)
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						rows++
					}
					_ = ri.Close(d.ctx)
				}
				b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
			})
		}
	}
}

// points returns n point ranges at ids from next, sorted and distinct.
func points(next func() int32, n int) [][2]int32 {
	seen := map[int32]bool{}
	for len(seen) < n {
		seen[next()] = true
	}
	out := make([][2]int32, 0, n)
	for k := range seen {
		out = append(out, [2]int32{k, k})
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j][0] < out[j-1][0]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
