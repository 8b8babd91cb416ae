package sqlstore

import (
	"errors"
	"io"
	"math/bits"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Aggregates over a range in plan templates.
//
// SELECT SUM(k) FROM t WHERE id BETWEEN ? AND ? runs in GMS as a GroupBy
// over the table access: each row is decoded into a sql.Row of boxed
// values (the id too, which the lookup needed), passed up through the
// table's row iterator, and each aggregate's buffer evaluates its
// argument on it. A template (plantemplate.go) has such a GroupBy, without
// grouping columns and with only COUNT, SUM, AVG, MIN and MAX of integer
// columns, replaced by rangeAgg, which reads the integer columns the
// aggregates name straight from the stored rows (codec.IntColumns) and
// keeps per column a count, a 128-bit sum, a minimum and a maximum. At the
// end each aggregate's result comes from its own buffer, given what it
// would have computed: the sum and count of an exact SUM or AVG
// (mysqlcompat.IntSums), the extreme value of MIN or MAX as one row;
// COUNT is the count, an int64 as GMS's. So the results, their types and
// their NULLs (no rows, or only NULLs) are GMS's and mysqlcompat's.
//
// Rows that are not the stored values as they are (a locking read, a
// secondary index's fetched or covered rows) come through the row
// iterator as sql.Rows, whose integers are read from the values.

// rangeAgg is the node that replaces a GroupBy without grouping columns
// over a template's table access, and the Project of its results above it
// when there is one that only names and orders them (SELECT SUM(k) has
// one, which renames sum(t.k) to SUM(k)): its row is then built in the
// Project's order, and the template runs no Project, whose iterator, row
// copy and schema (made anew at every call of Schema) cost more than the
// one row they handle.
type rangeAgg struct {
	// in holds the *plan.IndexedTableAccess, replaced at every execution,
	// in an array so that Children, which GMS's plan walks call several
	// times per execution, returns it without allocating.
	in  [1]sql.Node
	gb  *plan.GroupBy
	ops []aggOp
	// top is the Project absorbed, or nil; sch is its schema, made once,
	// and out says which op gives each of its columns (nil: op i gives
	// column i).
	top  *plan.Project
	sch  sql.Schema
	out  []int
	cols []int // the table's columns read, ascending (full schema)
	at   []int // the position of each in the access's rows
	read *codec.IntColumns
	// unsigned says which columns are unsigned (their values are the
	// uint64 bits).
	unsigned []bool
}

// aggFn is what an aggOp computes.
type aggFn uint8

const (
	aggCount aggFn = iota
	aggSum         // an exact SUM or AVG: its buffer takes the sum
	aggMin         // MIN or MAX: its buffer takes the extreme value
	aggMax
)

// aggOp is one selected aggregate.
type aggOp struct {
	fn  aggFn
	col int // index into rangeAgg.cols; -1 for COUNT(*) (every row)
	agg sql.Aggregation
}

var (
	_ sql.ExecSourceRel      = (*rangeAgg)(nil)
	_ sql.CollationCoercible = (*rangeAgg)(nil)
)

// aggregateByColumns returns n with a GroupBy that rangeAgg computes
// replaced by one, which also takes the place of a Project right above it
// that only picks its results (absorbProject).
func aggregateByColumns(n sql.Node) sql.Node {
	out, _, err := transform.Node(n, func(c sql.Node) (sql.Node, transform.TreeIdentity, error) {
		switch c := c.(type) {
		case *plan.GroupBy:
			if ra := newRangeAgg(c); ra != nil {
				return ra, transform.NewTree, nil
			}
		case *plan.Project:
			if ra, ok := c.Child.(*rangeAgg); ok {
				if top := ra.absorbProject(c); top != nil {
					return top, transform.NewTree, nil
				}
			}
		}
		return c, transform.SameTree, nil
	})
	if err != nil {
		return n
	}
	return out
}

// absorbProject returns r computing pr, a Project over r, or nil when pr
// does more than pick r's columns (by GetField, perhaps aliased).
func (r *rangeAgg) absorbProject(pr *plan.Project) *rangeAgg {
	if r.top != nil {
		return nil
	}
	in := r.gb.Schema()
	out := make([]int, 0, len(pr.Projections))
	for _, x := range pr.Projections {
		if a, ok := x.(*expression.Alias); ok {
			x = a.Child
		}
		gf, ok := x.(*expression.GetField)
		if !ok || gf.Index() < 0 || gf.Index() >= len(in) {
			return nil
		}
		out = append(out, gf.Index())
	}
	nr := *r
	nr.top, nr.sch = pr, pr.Schema()
	for i, j := range out {
		if i != j || len(out) != len(in) {
			nr.out = out
			break
		}
	}
	return &nr
}

// newRangeAgg returns the rangeAgg of gb, or nil when it does not compute
// gb (see the top of this file).
func newRangeAgg(gb *plan.GroupBy) *rangeAgg {
	ita, ok := gb.Child.(*plan.IndexedTableAccess)
	if !ok || len(gb.GroupByExprs) > 0 || len(gb.SelectedExprs) == 0 {
		return nil
	}
	it, ok := ita.Table.(*indexedTable)
	if !ok {
		return nil
	}
	sch := ita.Schema()
	full := func(i int) int { // the full-schema ordinal of access column i
		if it.proj != nil {
			return it.proj[i]
		}
		return i
	}
	ra := &rangeAgg{in: [1]sql.Node{ita}, gb: gb}
	var named []int // access positions named, in order of appearance
	colOf := func(x sql.Expression) (int, bool) {
		gf, ok := x.(*expression.GetField)
		if !ok || gf.Index() < 0 || gf.Index() >= len(sch) {
			return 0, false
		}
		for i, p := range named {
			if p == gf.Index() {
				return i, true
			}
		}
		named = append(named, gf.Index())
		return len(named) - 1, true
	}
	for _, x := range gb.SelectedExprs {
		agg, ok := x.(sql.Aggregation)
		if !ok || len(agg.Children()) != 1 {
			return nil
		}
		arg := agg.Children()[0]
		op := aggOp{agg: agg, col: -1}
		switch a := agg.(type) {
		case *aggregation.Count:
			op.fn = aggCount
			switch arg := arg.(type) {
			case *expression.Star:
			case *expression.Literal:
				if arg.Value() == nil {
					return nil
				}
			default:
				if op.col, ok = colOf(arg); !ok {
					return nil
				}
			}
		case *aggregation.Min, *aggregation.Max:
			op.fn = aggMin
			if _, isMax := a.(*aggregation.Max); isMax {
				op.fn = aggMax
			}
			if op.col, ok = colOf(arg); !ok {
				return nil
			}
		default:
			if !mysqlcompat.IsExactAggregate(agg) {
				return nil
			}
			buf, err := agg.NewBuffer()
			if err != nil {
				return nil
			}
			_, sums := buf.(mysqlcompat.IntSums)
			buf.Dispose()
			op.fn = aggSum
			if op.col, ok = colOf(arg); !ok || !sums {
				return nil
			}
		}
		ra.ops = append(ra.ops, op)
	}
	// The columns, ascending in the table's schema, as IntColumns reads
	// them.
	order := make([]int, len(named))
	for i := range order {
		order[i] = i
	}
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && full(named[order[j]]) < full(named[order[j-1]]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	rank := make([]int, len(named))
	for r, i := range order {
		ra.cols = append(ra.cols, full(named[i]))
		ra.at = append(ra.at, named[i])
		rank[i] = r
	}
	for i := range ra.ops {
		if ra.ops[i].col >= 0 {
			ra.ops[i].col = rank[ra.ops[i].col]
		}
	}
	if len(ra.cols) > 0 {
		if ra.read, ok = codec.NewIntColumns(it.def.storage, ra.cols); !ok {
			return nil
		}
		for j := range ra.cols {
			ra.unsigned = append(ra.unsigned, ra.read.Unsigned(j))
		}
	}
	return ra
}

func (r *rangeAgg) Schema() sql.Schema {
	if r.top != nil {
		return r.sch
	}
	return r.gb.Schema()
}

// Children returns the table access, aliasing r: the callers (GMS's plan
// walks) do not modify it.
func (r *rangeAgg) Children() []sql.Node { return r.in[:] }
func (r *rangeAgg) Resolved() bool       { return r.in[0].Resolved() }
func (r *rangeAgg) IsReadOnly() bool     { return true }

// shown is the node r stands for, as plans print it.
func (r *rangeAgg) shown() sql.Node {
	if r.top != nil {
		return r.top
	}
	return r.gb
}

func (r *rangeAgg) String() string      { return r.shown().String() }
func (r *rangeAgg) DebugString() string { return sql.DebugString(r.shown()) }

func (r *rangeAgg) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, r.shown())
}

func (r *rangeAgg) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 1)
	}
	nr := *r
	nr.in[0] = children[0]
	return &nr, nil
}

// RowIter implements sql.ExecSourceRel: it opens the table's rows as GMS
// would for the table access (buildIndexedTableAccess).
func (r *rangeAgg) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	ita, ok := r.in[0].(*plan.IndexedTableAccess)
	if !ok {
		return nil, errors.New("sqlstore: an aggregate's input is not its table access")
	}
	lookup, err := ita.GetLookup(ctx, row)
	if err != nil {
		return nil, err
	}
	parts, err := ita.Table.LookupPartitions(ctx, lookup)
	if err != nil {
		return nil, err
	}
	if _, ours := ita.Table.(*indexedTable); !ours {
		return &rangeAggIter{r: r, rows: sql.NewTableRowIter(ctx, ita.Table, parts)}, nil
	}
	// One partition (scan.go), whose row iterator gives the stored values
	// of its entries when its rows are those values as they are.
	part, err := parts.Next(ctx)
	if cerr := parts.Close(ctx); err == nil {
		err = cerr
	}
	if err == io.EOF {
		return &rangeAggIter{r: r, rows: sql.RowsToRowIter()}, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := ita.Table.PartitionRows(ctx, part)
	if err != nil {
		return nil, err
	}
	it := &rangeAggIter{r: r, rows: rows}
	if ri, ok := rows.(*rowIter); ok && ri.rawValues() {
		it.ri = ri
	}
	return it, nil
}

// rawValues reports whether the iterator's rows are the stored values of
// its source's entries as they are: the primary index's, with no lock to
// take and no residual check.
func (ri *rowIter) rawValues() bool {
	if ri.lk != nil || ri.fetch != nil || ri.covered || !ri.ix.primary {
		return false
	}
	for i := range ri.spans {
		if len(ri.spans[i].residual) > 0 {
			return false
		}
	}
	return true
}

// rangeAggIter returns the one row of a rangeAgg.
type rangeAggIter struct {
	r    *rangeAgg
	rows sql.RowIter // the table's rows
	ri   *rowIter    // rows, when read as stored values (rawValues)
	done bool
}

// colAcc is what a rangeAgg keeps of one column.
type colAcc struct {
	n        int64 // non-NULL values
	hi       int64 // their sum, 128-bit two's complement
	lo       uint64
	min, max int64 // as uint64 bits for an unsigned column
}

func (it *rangeAggIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.done {
		return nil, io.EOF
	}
	it.done = true
	r := it.r
	// Up to four columns in these arrays, on the stack.
	var accBuf [4]colAcc
	var valBuf [4]int64
	var nullBuf [4]bool
	acc, vals, nulls := accBuf[:0], valBuf[:0], nullBuf[:0]
	for range r.cols {
		acc, vals, nulls = append(acc, colAcc{}), append(vals, 0), append(nulls, false)
	}
	var rows int64
	var err error
	if it.ri != nil {
		rows, err = it.readValues(ctx, acc, vals, nulls)
	} else {
		rows, err = it.readRows(ctx, acc, vals, nulls)
	}
	if err != nil {
		return nil, err
	}
	out := make(sql.Row, len(r.ops))
	for i := range r.ops {
		if out[i], err = r.ops[i].result(ctx, r, rows, acc); err != nil {
			return nil, err
		}
	}
	if r.out == nil {
		return out, nil
	}
	// The Project's order: a permutation, or a pick, of the results.
	picked := make(sql.Row, len(r.out))
	for i, j := range r.out {
		picked[i] = out[j]
	}
	return picked, nil
}

// readValues adds the columns of the stored values of it.ri's entries to
// acc, and returns how many it read.
func (it *rangeAggIter) readValues(ctx *sql.Context, acc []colAcc, vals []int64, nulls []bool) (int64, error) {
	ri, read := it.ri, it.r.read
	if ri.src == nil {
		return 0, nil
	}
	// A range's source, the usual one, is called directly, and only for
	// the value: per row, that is three calls through interfaces fewer.
	is, _ := ri.src.(*iterSource)
	var rows int64
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var ok bool
		var err error
		if is != nil {
			ok, err = is.next(ctx)
		} else {
			ok, err = ri.src.next(ctx)
		}
		if err != nil {
			return 0, wrapf(err, "sqlstore: reading %s", ri.d.name)
		}
		if !ok {
			return rows, nil
		}
		rows++
		if read == nil {
			continue // COUNT(*) alone
		}
		var value []byte
		if is != nil {
			value = is.it.Value()
		} else {
			_, value, _ = ri.src.entry()
		}
		if err := read.Read(value, vals, nulls); err != nil {
			return 0, err
		}
		it.r.add(acc, vals, nulls)
	}
}

// readRows adds the integer columns of the rows of it.rows to acc, and
// returns how many it read.
func (it *rangeAggIter) readRows(ctx *sql.Context, acc []colAcc, vals []int64, nulls []bool) (int64, error) {
	var rows int64
	for {
		row, err := it.rows.Next(ctx)
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return 0, err
		}
		rows++
		for j, p := range it.r.at {
			v := row[p]
			nulls[j] = v == nil
			switch x := v.(type) {
			case nil:
			case int8:
				vals[j] = int64(x)
			case int16:
				vals[j] = int64(x)
			case int32:
				vals[j] = int64(x)
			case int64:
				vals[j] = x
			case uint8:
				vals[j] = int64(x)
			case uint16:
				vals[j] = int64(x)
			case uint32:
				vals[j] = int64(x)
			case uint64:
				vals[j] = int64(x)
			default:
				return 0, errors.New("sqlstore: an aggregate's column is not an integer")
			}
		}
		it.r.add(acc, vals, nulls)
	}
}

// add adds one row's column values to acc.
func (r *rangeAgg) add(acc []colAcc, vals []int64, nulls []bool) {
	for j := range acc {
		if nulls[j] {
			continue
		}
		a, v := &acc[j], vals[j]
		uns := r.unsigned[j]
		if a.n == 0 {
			a.min, a.max = v, v
		} else if uns {
			if uint64(v) < uint64(a.min) {
				a.min = v
			}
			if uint64(v) > uint64(a.max) {
				a.max = v
			}
		} else {
			a.min, a.max = min(a.min, v), max(a.max, v)
		}
		var carry uint64
		a.lo, carry = bits.Add64(a.lo, uint64(v), 0)
		if uns {
			a.hi += int64(carry)
		} else {
			a.hi += v>>63 + int64(carry)
		}
		a.n++
	}
}

// result returns op's result over rows rows whose columns gave acc.
func (op *aggOp) result(ctx *sql.Context, r *rangeAgg, rows int64, acc []colAcc) (any, error) {
	if op.fn == aggCount {
		if op.col < 0 {
			return rows, nil
		}
		return acc[op.col].n, nil
	}
	a := acc[op.col]
	buf, err := op.agg.NewBuffer()
	if err != nil {
		return nil, err
	}
	defer buf.Dispose()
	switch op.fn {
	case aggSum:
		if a.n > 0 {
			buf.(mysqlcompat.IntSums).AddIntSums(a.hi, a.lo, a.n)
		}
	default:
		if a.n > 0 {
			v := a.min
			if op.fn == aggMax {
				v = a.max
			}
			row := make(sql.Row, len(r.in[0].Schema()))
			var x any = v
			if r.unsigned[op.col] {
				x = uint64(v)
			}
			typ := r.in[0].Schema()[r.at[op.col]].Type
			if row[r.at[op.col]], _, err = typ.Convert(ctx, x); err != nil {
				return nil, err
			}
			if err := buf.Update(ctx, row); err != nil {
				return nil, err
			}
		}
	}
	return buf.Eval(ctx)
}

func (it *rangeAggIter) Close(ctx *sql.Context) error {
	return it.rows.Close(ctx)
}
