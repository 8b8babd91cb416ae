package sqlrun

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
)

// The workloads: sysbench's oltp_read_only statements plus an IN list of
// primary keys, several ranges in one statement, a secondary-index lookup
// and two writes, and the statement floor. Ids and k are uniform in
// [1, rows].
//
//	select_1          SELECT 1   (reads no table: what every statement costs; not a default)
//	point_select      SELECT c FROM sbtest WHERE id = ?
//	in_list:N         SELECT c FROM sbtest WHERE id IN (?, ... N ids)            (-in_list_size)
//	simple_range:N    SELECT c FROM sbtest WHERE id BETWEEN ? AND ?   (N rows)    (-range_size)
//	sum_range:N       SELECT SUM(k) FROM sbtest WHERE id BETWEEN ? AND ?
//	order_range:N     SELECT c FROM sbtest WHERE id BETWEEN ? AND ? ORDER BY c
//	distinct_range:N  SELECT DISTINCT c FROM sbtest WHERE id BETWEEN ? AND ? ORDER BY c
//	multi_range:N     SELECT c FROM sbtest WHERE id BETWEEN ? AND ? OR ...  (N ranges of 10 rows; default 10)
//	index_lookup      SELECT id, c FROM sbtest WHERE k = ?
//	covered_range:N   SELECT id FROM sbtest WHERE k BETWEEN ? AND ?   (about N rows; k_idx covers it; not a default)
//	insert            INSERT INTO sbtest (id, k, c, pad) VALUES (?, ?, ?, ?)  (new ids)
//	update_index      UPDATE sbtest SET k = k + 1 WHERE id = ?
//	update_non_index  UPDATE sbtest SET c = ? WHERE id = ?   (a new c; not a default)
//	counter:N         BEGIN; SELECT k FROM sbtest WHERE id = ? FOR UPDATE;
//	                  UPDATE sbtest SET k = k + 1 WHERE id = ?; COMMIT
//	                  (id among the first N rows, default 1: every client on one row; not a default)

// sqlWorkloadDef describes a workload.
type sqlWorkloadDef struct {
	sized bool // takes a size (name:N)
	build func(b *sqlBench, size int) *sqlQuery
}

// sqlQuery is a workload made concrete: its statement and how to fill its
// arguments.
type sqlQuery struct {
	name  string // as reported: name or name:size
	text  string
	nargs int
	write bool // run with Exec, not Query
	// then, when set, makes each execution a transaction: text reads,
	// then then writes, with the same arguments (sqlThread.readThenWrite).
	then string
	// fill sets args (len nargs) for one execution.
	fill func(r *rand.Rand, args []any)
}

// multiRangeRows is the number of rows of each range of multi_range.
const multiRangeRows = 10

var sqlWorkloads = map[string]sqlWorkloadDef{
	"select_1": {build: func(b *sqlBench, _ int) *sqlQuery {
		return &sqlQuery{text: "SELECT 1", fill: func(*rand.Rand, []any) {}}
	}},
	"point_select": {build: func(b *sqlBench, _ int) *sqlQuery {
		return &sqlQuery{text: "SELECT c FROM sbtest WHERE id = ?", nargs: 1, fill: b.randomIDs}
	}},
	"in_list": {sized: true, build: func(b *sqlBench, n int) *sqlQuery {
		n = orDefault(n, b.cfg.inListSize)
		return &sqlQuery{
			name:  fmt.Sprintf("in_list:%d", n),
			text:  "SELECT c FROM sbtest WHERE id IN (" + placeholders(n) + ")",
			nargs: n, fill: b.randomIDs,
		}
	}},
	"simple_range":   {sized: true, build: rangeQuery("simple_range", "SELECT c FROM sbtest WHERE id BETWEEN ? AND ?")},
	"sum_range":      {sized: true, build: rangeQuery("sum_range", "SELECT SUM(k) FROM sbtest WHERE id BETWEEN ? AND ?")},
	"order_range":    {sized: true, build: rangeQuery("order_range", "SELECT c FROM sbtest WHERE id BETWEEN ? AND ? ORDER BY c")},
	"distinct_range": {sized: true, build: rangeQuery("distinct_range", "SELECT DISTINCT c FROM sbtest WHERE id BETWEEN ? AND ? ORDER BY c")},
	"multi_range": {sized: true, build: func(b *sqlBench, n int) *sqlQuery {
		n = orDefault(n, 10)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = "id BETWEEN ? AND ?"
		}
		return &sqlQuery{
			name:  fmt.Sprintf("multi_range:%d", n),
			text:  "SELECT c FROM sbtest WHERE " + strings.Join(parts, " OR "),
			nargs: 2 * n, fill: b.multiRanges,
		}
	}},
	"index_lookup": {build: func(b *sqlBench, _ int) *sqlQuery {
		return &sqlQuery{text: "SELECT id, c FROM sbtest WHERE k = ?", nargs: 1, fill: b.randomIDs}
	}},
	"covered_range": {sized: true, build: rangeQuery("covered_range", "SELECT id FROM sbtest WHERE k BETWEEN ? AND ?")},
	"insert": {build: func(b *sqlBench, _ int) *sqlQuery {
		return &sqlQuery{
			text: "INSERT INTO sbtest (id, k, c, pad) VALUES (?, ?, ?, ?)", nargs: 4, write: true,
			fill: func(r *rand.Rand, args []any) {
				args[0] = atomic.AddInt64(&b.nextID, 1)
				args[1] = r.Int64N(int64(b.cfg.rows)) + 1
				args[2] = sbtestString(r, 10)
				args[3] = sbtestString(r, 5)
			},
		}
	}},
	"counter": {sized: true, build: func(b *sqlBench, n int) *sqlQuery {
		n = min(orDefault(n, 1), b.cfg.rows)
		return &sqlQuery{
			name:  fmt.Sprintf("counter:%d", n),
			text:  "SELECT k FROM sbtest WHERE id = ? FOR UPDATE",
			then:  "UPDATE sbtest SET k = k + 1 WHERE id = ?",
			nargs: 1, write: true,
			fill: func(r *rand.Rand, args []any) { args[0] = r.Int64N(int64(n)) + 1 },
		}
	}},
	"update_index": {build: func(b *sqlBench, _ int) *sqlQuery {
		return &sqlQuery{text: "UPDATE sbtest SET k = k + 1 WHERE id = ?", nargs: 1, write: true, fill: b.randomIDs}
	}},
	"update_non_index": {build: func(b *sqlBench, _ int) *sqlQuery {
		return &sqlQuery{
			text: "UPDATE sbtest SET c = ? WHERE id = ?", nargs: 2, write: true,
			fill: func(r *rand.Rand, args []any) {
				args[0] = sbtestString(r, 10)
				args[1] = r.Int64N(int64(b.cfg.rows)) + 1
			},
		}
	}},
}

// rangeQuery builds a workload of one range of size rows (-range_size by
// default).
func rangeQuery(name, text string) func(b *sqlBench, size int) *sqlQuery {
	return func(b *sqlBench, size int) *sqlQuery {
		size = orDefault(size, b.cfg.rangeSize)
		rows := int64(b.cfg.rows)
		return &sqlQuery{
			name: fmt.Sprintf("%s:%d", name, size), text: text, nargs: 2,
			fill: func(r *rand.Rand, args []any) {
				lo := r.Int64N(rows-int64(size)+1) + 1
				args[0], args[1] = lo, lo+int64(size)-1
			},
		}
	}
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// randomIDs fills every argument with a random id.
func (b *sqlBench) randomIDs(r *rand.Rand, args []any) {
	for i := range args {
		args[i] = r.Int64N(int64(b.cfg.rows)) + 1
	}
}

// multiRanges fills len(args)/2 ranges of multiRangeRows rows: the ids are
// cut into as many equal slices and each range starts at random in its
// own, so the ranges are sorted and disjoint.
func (b *sqlBench) multiRanges(r *rand.Rand, args []any) {
	n := int64(len(args) / 2)
	slice := int64(b.cfg.rows) / n
	for i := int64(0); i < n; i++ {
		lo := i*slice + 1 + r.Int64N(max(slice-multiRangeRows+1, 1))
		args[2*i], args[2*i+1] = lo, lo+multiRangeRows-1
	}
}

// sbtestString returns sysbench's value of c (10 groups) or pad (5): groups
// of 11 random digits joined by dashes.
func sbtestString(r *rand.Rand, groups int) string {
	b := make([]byte, 0, groups*12)
	for g := 0; g < groups; g++ {
		if g > 0 {
			b = append(b, '-')
		}
		for i := 0; i < 11; i++ {
			b = append(b, byte('0'+r.IntN(10)))
		}
	}
	return string(b)
}

// sqlWorkloadNames lists the workload names, sorted.
func sqlWorkloadNames() []string {
	names := make([]string, 0, len(sqlWorkloads))
	for n := range sqlWorkloads {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
