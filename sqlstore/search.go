package sqlstore

import (
	"math"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore/codec"
)

var _ sql.IndexSearchableTable = (*Table)(nil)

// Lookups without GMS's costing. For a filter over one table, GMS's
// analyzer builds range collections for every index, estimates each from
// statistics and keeps the cheapest (costedIndexScans). For the predicates
// of most point and range queries that work is the larger part of planning
// the statement, and an IN list of n keys costs O(n^2) in GMS's range
// merging. GMS lets a table answer first (sql.IndexSearchableTable):
// LookupForExpressions gets the filter's conjuncts and may return its own
// lookup and the conjuncts it does not cover, which stay in a filter.
//
// It answers only when the choice is clear, and leaves everything else to
// GMS's costing:
//
//   - the predicates it understands are comparisons (=, <, <=, >, >=),
//     BETWEEN, IN lists, and AND and OR of those, of one integer column of
//     the table against integer literals (bound parameters are literals by
//     then);
//   - it uses the primary key when it is that one column and its
//     predicates bound every range on both sides (points, BETWEEN, closed
//     intervals), else the first single-column secondary index (unique
//     ones first) that such predicates bound;
//   - a conjunct on an aliased table (its columns carry the alias), or
//     with a NULL or a non-integer value, is not understood; when no index
//     qualifies, it declines; when the ranges intersect to nothing, the
//     lookup is empty;
//   - values outside the column's type match no row: a set with a bound
//     outside the type is cut to the type (which bounds it), to an empty
//     lookup if nothing is left. GMS would clamp such values into the type
//     and find the row at its end, or miss it under a strict comparison.
//
// The ranges are those GMS would build: one interval of the column per
// range, sorted, without overlaps; a unique key's points are exact points
// for the planner (lookup.go).

// SkipIndexCosting implements sql.IndexSearchableTable: GMS costs what
// LookupForExpressions declines.
func (t *Table) SkipIndexCosting() bool { return false }

// LookupForExpressions implements sql.IndexSearchableTable.
func (t *Table) LookupForExpressions(ctx *sql.Context, exprs ...sql.Expression) (sql.IndexLookup, *sql.FuncDepSet, sql.Expression, bool, error) {
	if mysqlcompat.NeedsRangeCorrection(ctx, exprs) {
		// No lookup before the corrections (mysqlcompat/dmlranges.go):
		// the filter stays whole, for the exec builder to plan.
		return sql.IndexLookup{}, nil, nil, true, nil
	}
	if t.def.keyless {
		return sql.IndexLookup{}, nil, nil, false, nil
	}
	if lookup, residual, ok := t.intLookup(ctx, exprs); ok {
		return lookup, nil, residual, true, nil
	}
	// A literal GMS's ranges would clamp or round (inexact.go).
	if lookup, residual, ok := t.inexactLookup(ctx, exprs); ok {
		return lookup, nil, residual, true, nil
	}
	// The key range of a LIKE's prefix (likeprefix.go).
	if lookup, residual, ok := t.likeLookup(ctx, exprs); ok {
		return lookup, nil, residual, true, nil
	}
	return sql.IndexLookup{}, nil, nil, false, nil
}

// intLookup returns the lookup of integer literals described at the top of
// this file, and the conjuncts it leaves to a filter; ok is false when it
// declines.
func (t *Table) intLookup(ctx *sql.Context, exprs []sql.Expression) (sql.IndexLookup, sql.Expression, bool) {
	d := t.def
	// The interval sets of the integer columns the conjuncts constrain.
	sets := map[int]intervalSet{}
	used := make([]int, len(exprs)) // column of each understood conjunct, or -1
	for i, e := range exprs {
		used[i] = -1
		col, set, ok := t.intervalsOf(ctx, e)
		if !ok {
			continue
		}
		used[i] = col
		if prev, ok := sets[col]; ok {
			set = prev.intersect(set)
		}
		sets[col] = set
	}
	if len(sets) == 0 {
		return sql.IndexLookup{}, nil, false
	}
	// A bound outside the column's type (id > -5000000000 on an INT) is
	// cut to the type here, which also bounds the set: GMS would clamp the
	// value into the type and turn > into a bound that excludes a row.
	for c, set := range sets {
		if lo, hi, ok := codec.IntRange(d.schema[c].Type); ok && outsideType(set, lo, hi) {
			sets[c] = set.intersect(intervalSet{{lo, hi}})
		}
	}
	ix := t.searchIndex(sets)
	if ix == nil {
		return sql.IndexLookup{}, nil, false
	}
	col := ix.cols[0]
	set := sets[col]
	colType := d.schema[col].Type
	// The set is bounded (searchIndex) and cut to the type above, so every
	// end converts; an empty set is an empty lookup.
	ranges := make(sql.MySQLRangeCollection, 0, len(set))
	for _, iv := range set {
		lo, ok1 := fromInt64(ctx, colType, iv.lo)
		hi, ok2 := fromInt64(ctx, colType, iv.hi)
		if !ok1 || !ok2 {
			return sql.IndexLookup{}, nil, false
		}
		rng := make(sql.MySQLRange, len(ix.cols))
		rng[0] = sql.ClosedRangeColumnExpr(lo, hi, colType)
		ranges = append(ranges, rng)
	}
	var rest []sql.Expression
	for i, e := range exprs {
		if used[i] != col {
			rest = append(rest, e)
		}
	}
	var residual sql.Expression
	if len(rest) > 0 {
		residual = expression.JoinAnd(rest...)
	}
	lookup := sql.NewIndexLookup(&Index{t: d, ix: ix}, ranges, false, false, false, false)
	return lookup, residual, true
}

// searchIndex returns the index LookupForExpressions uses for the interval
// sets of sets, or nil.
func (t *Table) searchIndex(sets map[int]intervalSet) *indexDef {
	d := t.def
	usable := func(ix *indexDef) bool {
		if len(ix.cols) != 1 || ix.prefix != nil {
			return false
		}
		set, ok := sets[ix.cols[0]]
		return ok && set.bounded()
	}
	if usable(d.primary) {
		return d.primary
	}
	var best *indexDef
	for _, ix := range d.secondary {
		if usable(ix) && (best == nil || (ix.unique && !best.unique) || (ix.unique == best.unique && ix.id < best.id)) {
			best = ix
		}
	}
	return best
}

// intervalsOf returns the column and the set of values a conjunct allows,
// when it constrains one integer column of the table with literals only.
func (t *Table) intervalsOf(ctx *sql.Context, e sql.Expression) (int, intervalSet, bool) {
	switch e := e.(type) {
	case *expression.And:
		c1, s1, ok1 := t.intervalsOf(ctx, e.LeftChild)
		c2, s2, ok2 := t.intervalsOf(ctx, e.RightChild)
		if !ok1 || !ok2 || c1 != c2 {
			return 0, nil, false
		}
		return c1, s1.intersect(s2), true
	case *expression.Or:
		c1, s1, ok1 := t.intervalsOf(ctx, e.LeftChild)
		c2, s2, ok2 := t.intervalsOf(ctx, e.RightChild)
		if !ok1 || !ok2 || c1 != c2 {
			return 0, nil, false
		}
		return c1, s1.union(s2), true
	case *expression.Between:
		col, ok := t.intColumn(e.Val)
		lo, ok1 := intLiteral(e.Lower)
		hi, ok2 := intLiteral(e.Upper)
		if !ok || !ok1 || !ok2 {
			return 0, nil, false
		}
		return col, intervalSet{{lo, hi}}.normalize(), true
	case *expression.InTuple:
		return t.inList(e.Left(), e.Right())
	case *expression.HashInTuple:
		return t.inList(e.Left(), e.Right())
	case *expression.Equals:
		return t.comparison(e.Left(), e.Right(), "=")
	case *expression.GreaterThan:
		return t.comparison(e.Left(), e.Right(), ">")
	case *expression.GreaterThanOrEqual:
		return t.comparison(e.Left(), e.Right(), ">=")
	case *expression.LessThan:
		return t.comparison(e.Left(), e.Right(), "<")
	case *expression.LessThanOrEqual:
		return t.comparison(e.Left(), e.Right(), "<=")
	}
	return 0, nil, false
}

// flipped is the operator of a comparison with its operands swapped.
var flipped = map[string]string{"=": "=", ">": "<", ">=": "<=", "<": ">", "<=": ">="}

func (t *Table) comparison(left, right sql.Expression, op string) (int, intervalSet, bool) {
	col, ok := t.intColumn(left)
	if !ok {
		left, right, op = right, left, flipped[op]
		if col, ok = t.intColumn(left); !ok {
			return 0, nil, false
		}
	}
	v, ok := intLiteral(right)
	if !ok {
		return 0, nil, false
	}
	var iv interval
	switch op {
	case "=":
		iv = interval{v, v}
	case ">":
		if v == math.MaxInt64 {
			// Nothing is above it in an int64, but a BIGINT UNSIGNED has
			// values above it, which an interval of int64s cannot hold.
			if t.def.schema[col].Type.Type() == sqltypes.Uint64 {
				return 0, nil, false
			}
			return col, nil, true
		}
		iv = interval{v + 1, math.MaxInt64}
	case ">=":
		iv = interval{v, math.MaxInt64}
	case "<":
		if v == math.MinInt64 {
			return col, nil, true
		}
		iv = interval{math.MinInt64, v - 1}
	case "<=":
		iv = interval{math.MinInt64, v}
	}
	return col, intervalSet{iv}, true
}

func (t *Table) inList(left, right sql.Expression) (int, intervalSet, bool) {
	col, ok := t.intColumn(left)
	tuple, isTuple := right.(expression.Tuple)
	if !ok || !isTuple {
		return 0, nil, false
	}
	set := make(intervalSet, 0, len(tuple))
	for _, e := range tuple {
		v, ok := intLiteral(e)
		if !ok {
			return 0, nil, false
		}
		set = append(set, interval{v, v})
	}
	return col, set.normalize(), true
}

// intColumn returns the ordinal of the integer column of this table (not
// an alias of it) that e reads.
func (t *Table) intColumn(e sql.Expression) (int, bool) {
	gf, ok := e.(*expression.GetField)
	if !ok || !strings.EqualFold(gf.Table(), t.def.name) {
		return 0, false
	}
	o := t.def.schema.IndexOfColName(gf.Name())
	if o < 0 || !types.IsInteger(t.def.schema[o].Type) {
		return 0, false
	}
	return o, true
}

// intLiteral returns the value of an integer literal.
func intLiteral(e sql.Expression) (int64, bool) {
	l, ok := e.(*expression.Literal)
	if !ok {
		return 0, false
	}
	switch v := l.Value().(type) {
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case int:
		return int64(v), true
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), true
		}
	}
	return 0, false
}

// outsideType reports whether an end of an interval of s that a value set
// (not the unbounded ends) lies outside [lo, hi].
func outsideType(s intervalSet, lo, hi int64) bool {
	for _, iv := range s {
		if (iv.lo != math.MinInt64 && (iv.lo < lo || iv.lo > hi)) || (iv.hi != math.MaxInt64 && (iv.hi < lo || iv.hi > hi)) {
			return true
		}
	}
	return false
}

// fromInt64 converts a bound to the column type's Go value, clamping the
// unbounded ends to the type's range; ok is false when v (a bound of the
// query's own values) does not fit the type.
func fromInt64(ctx *sql.Context, typ sql.Type, v int64) (any, bool) {
	cv, inRange, err := typ.Convert(ctx, v)
	if err != nil || inRange != sql.InRange || cv == nil {
		return nil, false
	}
	return cv, true
}

// interval is a closed interval of integers.
type interval struct{ lo, hi int64 }

// intervalSet is a sorted list of disjoint intervals. Adjacent ones are
// kept apart, as GMS keeps them: the points of an IN list stay points.
type intervalSet []interval

// normalize sorts s and merges overlapping intervals.
func (s intervalSet) normalize() intervalSet {
	s = slices.DeleteFunc(s, func(iv interval) bool { return iv.lo > iv.hi })
	slices.SortFunc(s, func(a, b interval) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	out := s[:0]
	for _, iv := range s {
		if n := len(out); n > 0 && iv.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, iv.hi)
			continue
		}
		out = append(out, iv)
	}
	return out
}

func (s intervalSet) union(o intervalSet) intervalSet {
	return append(append(intervalSet(nil), s...), o...).normalize()
}

func (s intervalSet) intersect(o intervalSet) intervalSet {
	var out intervalSet
	for _, a := range s {
		for _, b := range o {
			if lo, hi := max(a.lo, b.lo), min(a.hi, b.hi); lo <= hi {
				out = append(out, interval{lo, hi})
			}
		}
	}
	return out.normalize()
}

// bounded reports whether every interval has both ends: the values can be
// enumerated as points or closed ranges.
func (s intervalSet) bounded() bool {
	for _, iv := range s {
		if iv.lo == math.MinInt64 || iv.hi == math.MaxInt64 {
			return false
		}
	}
	return true
}
