package sqlstore

import (
	"math"
	"math/big"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	sqltypes "github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Literals GMS's ranges cannot hold. GMS's costing builds a lookup's
// ranges by converting each literal into the index column's type
// (sql.MySQLIndexBuilder), and drops the filter the ranges cover. The
// conversion clamps a value outside the type (b = 2147483648 on an INT
// becomes b = 2147483647) and rounds one finer than the type (dt >
// '11:59:59.5' on a DATETIME becomes dt > '12:00:00'), so the lookup finds
// the row at the type's end, or misses the row at the boundary, and the
// key the storage layer receives no longer tells. Only the expressions do.
//
// So when a filter compares an indexed column with such a literal,
// LookupForExpressions answers with a lookup of its own that cannot lose a
// row: the range of the first column of an index, from the simple
// conjuncts on it, each bound converted as GMS would and then made
// inclusive (a superset of the rows), and every conjunct kept in a filter,
// which GMS evaluates row by row with the literal's own value. Without a
// conjunct on the first column of an index it reads the whole primary key.
//
// Targets GMS v0.20.0. Without it, TestLiteralsIndexCannotHold and
// TestFractionalBounds fail.

// inexactLookup returns the lookup for exprs when one of them compares an
// indexed column with a literal that the column's type does not hold
// exactly; ok is false when none does.
func (t *Table) inexactLookup(ctx *sql.Context, exprs []sql.Expression) (sql.IndexLookup, sql.Expression, bool) {
	d := t.def
	indexed := map[int]bool{}
	for _, ix := range d.indexes() {
		for _, o := range ix.cols {
			indexed[o] = true
		}
	}
	odd := false
	for _, e := range exprs {
		sql.Inspect(e, func(x sql.Expression) bool {
			if odd {
				return false
			}
			if not, ok := x.(*expression.Not); ok {
				// GMS builds c <> k on a DECIMAL index as the whole
				// range, and drops the filter.
				if col, _ := t.columnLiterals(not.Child); col >= 0 && indexed[col] && types.IsDecimal(d.schema[col].Type) {
					odd = true
					return false
				}
			}
			col, lits := t.columnLiterals(x)
			if col < 0 || !indexed[col] {
				return true
			}
			for _, l := range lits {
				if !holdsExactly(ctx, d.schema[col].Type, l.Value()) {
					odd = true
					return false
				}
			}
			return true
		})
	}
	if !odd {
		return sql.IndexLookup{}, nil, false
	}
	residual := expression.JoinAnd(exprs...)
	for _, ix := range d.indexes() {
		if ranges, ok := t.widenedRanges(ctx, ix, exprs); ok {
			idx := &Index{t: d, ix: ix}
			return sql.NewIndexLookup(idx, ranges, false, false, false, false), residual, true
		}
	}
	ix := d.primary
	rng := make(sql.MySQLRange, len(ix.cols))
	for i, o := range ix.cols {
		rng[i] = sql.AllRangeColumnExpr(d.schema[o].Type)
	}
	return sql.NewIndexLookup(&Index{t: d, ix: ix}, sql.MySQLRangeCollection{rng}, false, false, false, false), residual, true
}

// indexes returns the primary key and then the secondary indexes, unique
// ones first: the order in which inexactLookup tries them.
func (d *tableDef) indexes() []*indexDef {
	out := []*indexDef{d.primary}
	for _, unique := range []bool{true, false} {
		for _, ix := range d.secondary {
			if ix.unique == unique {
				out = append(out, ix)
			}
		}
	}
	return out
}

// widenedRanges returns the ranges of ix's first column that the simple
// conjuncts of exprs on it allow, each bound converted into the column's
// type and made inclusive: every row the conjuncts match lies in them. ok
// is false when no conjunct bounds the column.
func (t *Table) widenedRanges(ctx *sql.Context, ix *indexDef, exprs []sql.Expression) (sql.MySQLRangeCollection, bool) {
	d := t.def
	first := ix.cols[0]
	colType := d.schema[first].Type
	if !types.IsNumber(colType) && !types.IsTime(colType) || colType.Type() == sqltypes.Year {
		// A YEAR bound would be converted as a two-digit year.
		return nil, false
	}
	idx := &Index{t: d, ix: ix}
	name := strings.ToLower(idx.Expressions()[0])
	b := sql.NewMySQLIndexBuilder(idx)
	// conv converts a literal into the column's type, clamping and
	// rounding as GMS does; ok is false for NULL or a failed conversion.
	// A value below an integer type's range becomes its lowest value:
	// GMS wraps a negative value into an unsigned type (-1 into TINYINT
	// UNSIGNED is 255), which would turn c > -1 into c >= 255.
	conv := func(l *expression.Literal) (any, bool) {
		v := l.Value()
		if v == nil {
			return nil, false
		}
		if lo, _, ok := codec.IntRange(colType); ok && lo == 0 {
			if d, isDec := asDecimal(ctx, v); isDec {
				switch {
				case d.Sign() < 0:
					v = 0
				case isUint64(colType):
					// Exactly, not through GMS's float64
					// (mysqlcompat/bigint.go); beyond the type, its
					// largest value.
					v, _, _ = mysqlcompat.ExactInteger(colType, d)
				}
			}
		}
		cv, _, err := colType.Convert(ctx, v)
		if err != nil || cv == nil {
			return nil, false
		}
		return cv, true
	}
	bounded := false
	for _, e := range exprs {
		col, lits := t.columnLiterals(e)
		if col != first || len(lits) == 0 {
			continue
		}
		keys := make([]any, 0, len(lits))
		for _, l := range lits {
			if k, ok := conv(l); ok {
				keys = append(keys, k)
			}
		}
		if len(keys) != len(lits) {
			continue
		}
		switch e := e.(type) {
		case *expression.Equals, *expression.InTuple, *expression.HashInTuple:
			b.Equals(ctx, name, keys...)
		case *expression.Between:
			b.GreaterOrEqual(ctx, name, keys[0])
			b.LessOrEqual(ctx, name, keys[1])
		case *expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.LessThan, *expression.LessThanOrEqual:
			// An upper bound: col < k, or k > col.
			_, colLeft := e.(expression.Comparer).Left().(*expression.GetField)
			if isLess(e) == colLeft {
				b.LessOrEqual(ctx, name, keys[0])
			} else {
				b.GreaterOrEqual(ctx, name, keys[0])
			}
		default:
			continue
		}
		bounded = true
	}
	if !bounded {
		return nil, false
	}
	lookup, err := b.Build(ctx)
	if err != nil || lookup.Ranges == nil {
		return nil, false
	}
	ranges, err := sql.RemoveOverlappingRanges(lookup.Ranges.(sql.MySQLRangeCollection)...)
	if err != nil {
		return nil, false
	}
	sorted, err := sql.SortRanges(ranges...)
	if err != nil {
		return nil, false
	}
	return sql.MySQLRangeCollection(sorted), true
}

// isLess reports whether a comparison is < or <=.
func isLess(e sql.Expression) bool {
	switch e.(type) {
	case *expression.LessThan, *expression.LessThanOrEqual:
		return true
	}
	return false
}

// columnLiterals returns the column of this table (not an alias of it)
// that a comparison, BETWEEN or IN list compares with literals, and the
// literals; the column is -1 for any other expression.
func (t *Table) columnLiterals(e sql.Expression) (int, []*expression.Literal) {
	var col sql.Expression
	var vals []sql.Expression
	switch e := e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.GreaterThan, *expression.GreaterThanOrEqual,
		*expression.LessThan, *expression.LessThanOrEqual:
		c := e.(expression.Comparer)
		col, vals = c.Left(), []sql.Expression{c.Right()}
		if _, ok := col.(*expression.GetField); !ok {
			col, vals = c.Right(), []sql.Expression{c.Left()}
		}
	case *expression.Between:
		col, vals = e.Val, []sql.Expression{e.Lower, e.Upper}
	case *expression.InTuple, *expression.HashInTuple:
		in := e.(interface {
			Left() sql.Expression
			Right() sql.Expression
		})
		tuple, ok := in.Right().(expression.Tuple)
		if !ok {
			return -1, nil
		}
		col, vals = in.Left(), tuple
	default:
		return -1, nil
	}
	gf, ok := col.(*expression.GetField)
	if !ok || !strings.EqualFold(gf.Table(), t.def.name) {
		return -1, nil
	}
	o := t.def.schema.IndexOfColName(gf.Name())
	if o < 0 {
		return -1, nil
	}
	lits := make([]*expression.Literal, len(vals))
	for i, v := range vals {
		l, ok := v.(*expression.Literal)
		if !ok {
			return -1, nil
		}
		lits[i] = l
	}
	return o, lits
}

// holdsExactly reports whether GMS's conversion of v into the column type
// typ, as its range building does it, keeps the value: true for the types
// and values whose conversion is not in question (NULL, strings, a value
// that does not convert at all, which makes GMS build no ranges).
func holdsExactly(ctx *sql.Context, typ sql.Type, v any) bool {
	if v == nil {
		return true
	}
	switch {
	case types.IsInteger(typ):
		// GMS floors or ceils a fraction itself before converting; only a
		// value beyond the type's ends is clamped.
		lo, hi, _ := codec.IntRange(typ)
		unsigned64 := typ.Type() == sqltypes.Uint64
		// Go integers, the keys nearly every lookup carries, are checked
		// without a decimal conversion.
		switch k := v.(type) {
		case int64:
			return k >= lo && k <= hi
		case int32:
			return int64(k) >= lo && int64(k) <= hi
		case uint64:
			return unsigned64 || k <= uint64(hi)
		case uint32:
			return uint64(k) <= uint64(hi)
		}
		dv, ok := asDecimal(ctx, v)
		if !ok {
			return true
		}
		if unsigned64 {
			if _, isStr := v.(string); !isStr {
				// GMS converts a number into BIGINT UNSIGNED through a
				// float64, which loses the low digits of large values
				// and rounds fractions near them (see mysqlcompat/bigint.go).
				return dv.IsInteger() && !dv.IsNegative() && dv.LessThanOrEqual(maxExactFloat)
			}
			return dv.IsInteger() && !dv.IsNegative() && !dv.GreaterThan(maxUint64)
		}
		return !dv.LessThan(decimal.NewFromInt(lo)) && !dv.GreaterThan(decimal.NewFromInt(hi))
	case types.IsDecimal(typ):
		return convertsExactly(ctx, typ, types.InternalDecimalType, v)
	case types.IsFloat(typ):
		return convertsExactly(ctx, typ, types.Float64, v)
	case types.IsTime(typ):
		if isNumeric(v) {
			// MySQL reads 20200101 as a date; GMS's range building fails
			// on it.
			return false
		}
		return convertsExactly(ctx, typ, types.DatetimeMaxPrecision, v)
	case typ.Type() == sqltypes.Year:
		// GMS's range building reads a number below 100 as a two-digit
		// year (69 as 2069, where its row-by-row comparison reads 69),
		// rounds a fraction away, and fails outside 1901-2155: only a
		// whole year in that span converts as compared.
		if !isNumeric(v) {
			return true
		}
		dv, ok := asDecimal(ctx, v)
		return ok && dv.IsInteger() && dv.IntPart() >= 1901 && dv.IntPart() <= 2155
	case types.IsText(typ):
		// A string column compared with a number compares as numbers
		// ('3c' = 3, 'abc' = 0): no range of strings holds the matches,
		// where GMS reads the number as its digits in string order.
		return !isNumeric(v)
	}
	return true
}

// maxExactFloat is 2^53, below which every integer converts through a
// float64 exactly.
var maxExactFloat = decimal.NewFromInt(1 << 53)

// isNumeric reports whether v is a number (not a string, a time or bytes).
func isNumeric(v any) bool {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, decimal.Decimal:
		return true
	}
	return false
}

// convertsExactly reports whether v converted into typ still equals v
// compared in precise, a type that holds v without loss.
func convertsExactly(ctx *sql.Context, typ, precise sql.Type, v any) bool {
	cv, inRange, err := typ.Convert(ctx, v)
	if err != nil && types.ErrConvertToDecimalLimit.Is(err) {
		// Beyond a DECIMAL's digits: GMS's range building fails with
		// 1264 where MySQL compares (c < 1000 on a DECIMAL(5,2)).
		return false
	}
	if err != nil || cv == nil {
		return true
	}
	if inRange == sql.OutOfRange {
		return false
	}
	pv, _, err := precise.Convert(ctx, v)
	if err != nil || pv == nil {
		return true
	}
	c, err := precise.Compare(ctx, pv, cv)
	return err == nil && c == 0
}

// maxUint64 is math.MaxUint64 as a DECIMAL.
var maxUint64 = decimal.NewFromBigInt(new(big.Int).SetUint64(math.MaxUint64), 0)

// isUint64 reports whether typ is BIGINT UNSIGNED.
func isUint64(typ sql.Type) bool { return typ.Type() == sqltypes.Uint64 }

// asDecimal returns v as a DECIMAL, as GMS converts it; ok is false when
// it does not convert.
func asDecimal(ctx *sql.Context, v any) (d decimal.Decimal, ok bool) {
	x, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return decimal.Decimal{}, false
	}
	d, ok = x.(decimal.Decimal)
	return d, ok
}
