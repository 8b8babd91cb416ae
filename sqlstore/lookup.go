package sqlstore

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Index lookups are answered in three steps. encodeLookup turns GMS's
// lookup (an index and a collection of ranges, each a box with one interval
// per index column) into a list of spans: byte ranges over the index's
// keys, each marked as an exact point or a range, with the checks a row
// must still pass. The planner (package planner, through access.go) then
// picks the engine's read path from the spans, their estimated sizes and
// the index, and the row iterator (scan.go) runs that path.
//
// A span's byte range covers the index columns up to and including the
// first one that is not an exact point; the columns after it (a box is not a
// key interval) and any column whose bound could not be encoded exactly (a
// prefix-length column, a bound outside the column's type) are left to
// residual checks on the decoded row, which compare values with the range's
// own type, as GMS's filters would. So every row a span yields lies in its
// range, and since GMS's ranges are sorted and disjoint, rows come out in
// index order across spans (reversed when the lookup is).

// span is one encoded range of a lookup.
type span struct {
	start, end []byte // [start, end) of index keys; end nil: to the index end
	// point: every index column is an exact equality, so the span holds
	// the keys equal to start (for a unique index, at most one).
	point bool
	// rng is GMS's range, for residual checks; residual lists the index
	// column positions to check per row (nil: none). A span of a plan
	// template's interval (encodeIntervals) has no rng and no residual;
	// width is then its number of values, for estimates.
	rng      sql.MySQLRange
	residual []int
	width    float64
	// rangeCol is the position of the first index column that is not a
	// point (the one whose bounds end the span), -1 when every column is
	// one; whole is set when the span covers the whole index.
	rangeCol int
	whole    bool
}

// lookupPlan is an encoded lookup.
type lookupPlan struct {
	ix      *indexDef
	spans   []span
	reverse bool
	// probe: one probe of a lookup join (GMS builds a lookup per outer
	// row).
	probe bool
	// access is the planner's input for the spans, from which the read
	// path is chosen once the reader is known (access.go).
	access accessInput
}

// encodeLookup encodes a lookup on index ix of table d.
func encodeLookup(ctx *sql.Context, d *tableDef, ix *indexDef, lookup sql.IndexLookup) (*lookupPlan, error) {
	// A kept plan's intervals make their own plan: this one is not
	// allocated for them.
	if ir, isIntervals := lookup.Ranges.(*intervalRanges); isIntervals {
		if p, ok := encodeIntervals(d, ix, ir, lookup.IsReverse); ok {
			p.probe = lookup.IsPointLookup
			return p, nil
		}
	}
	if pr, isPrefix := lookup.Ranges.(*prefixRanges); isPrefix {
		return pr.encode(d, ix, lookup.IsReverse) // likeprefix.go
	}
	plan := &lookupPlan{ix: ix, reverse: lookup.IsReverse, probe: lookup.IsPointLookup}
	// lookup.IsEmptyRange is not trusted: lookup joins set it for a NULL key
	// under <=>, whose range (IS NULL) does match rows. Empty ranges are
	// recognised from the ranges themselves.
	if lookup.Ranges == nil {
		return plan, nil
	}
	if ir, isIntervals := lookup.Ranges.(*intervalRanges); isIntervals {
		ranges, ok := ir.mysql()
		if !ok {
			return nil, fmt.Errorf("%w: lookup intervals that do not fit their column", ErrUnsupported)
		}
		lookup.Ranges = ranges
	}
	ranges, ok := lookup.Ranges.(sql.MySQLRangeCollection)
	if !ok {
		return nil, fmt.Errorf("%w: lookup ranges of type %T", ErrUnsupported, lookup.Ranges)
	}
	prefix := appendIndexPrefix(nil, d.id, ix.id)
	if len(ranges) > 0 {
		plan.spans = make([]span, 0, len(ranges))
	}
	for _, rng := range ranges {
		if empty, err := rng.IsEmpty(); err != nil {
			return nil, err
		} else if empty {
			continue
		}
		sp, ok, err := encodeRange(ctx, d, ix, prefix, rng)
		if err != nil {
			return nil, err
		}
		if ok {
			plan.spans = append(plan.spans, sp)
		}
	}
	return plan, nil
}

// encodeRange encodes one range; ok is false when it can match nothing.
func encodeRange(ctx *sql.Context, d *tableDef, ix *indexDef, prefix []byte, rng sql.MySQLRange) (sp span, ok bool, err error) {
	if len(rng) > len(ix.ext) {
		return span{}, false, fmt.Errorf("sqlstore: range of %d columns on index %s of %d", len(rng), ix.name, len(ix.ext))
	}
	sp.rng = rng
	sp.rangeCol = -1
	// Ranges over an index's extended columns (foreign key checks) bound
	// the key by the index's own columns and check the rest per row.
	keyed := rng
	if len(keyed) > len(ix.cols) {
		for j := len(ix.cols); j < len(rng); j++ {
			if rng[j].Type() != sql.RangeType_All {
				sp.residual = append(sp.residual, j)
			}
		}
		keyed = rng[:len(ix.cols)]
	}
	pfx := append([]byte(nil), prefix...)
	allPoints := true
	for i, ce := range keyed {
		col := d.schema[ix.cols[i]]
		hasPrefix := ix.prefix != nil && ix.prefix[i] > 0
		if k, isPoint := pointKey(ctx, ce); isPoint {
			enc, exact := encodeBound(ctx, col.Type, ce.Typ, k, ix, i)
			if enc != nil {
				pfx = append(pfx, enc...)
				if !exact || hasPrefix {
					sp.residual = append(sp.residual, i)
				}
				continue
			}
		}
		// The first column that is not a point: bounds, then stop.
		allPoints = false
		sp.rangeCol = i
		lo, hi, exact, empty := columnBounds(ctx, col.Type, ce, ix, i)
		if empty {
			return span{}, false, nil
		}
		sp.whole = i == 0 && lo == nil && hi == nil
		if !exact {
			sp.residual = append(sp.residual, i)
		}
		if lo == nil {
			sp.start = pfx
		} else {
			sp.start = append(append([]byte(nil), pfx...), lo...)
		}
		if hi == nil {
			sp.end = prefixEnd(pfx)
		} else {
			sp.end = append(append([]byte(nil), pfx...), hi...)
		}
		for j := i + 1; j < len(keyed); j++ {
			if rng[j].Type() != sql.RangeType_All {
				sp.residual = append(sp.residual, j)
			}
		}
		break
	}
	// A key the column's type does not hold (an outer row's value in the
	// first probe of a lookup join, which GMS passes unconverted) was
	// widened above; its residual check must not convert it into the
	// type either, which would clamp or round it back onto a row.
	cloned := false
	for _, j := range sp.residual {
		if j >= len(keyed) {
			continue
		}
		if p := preciseType(d.schema[ix.cols[j]].Type); p != nil && !rangeHeldExactly(ctx, d.schema[ix.cols[j]].Type, rng[j]) {
			if !cloned {
				sp.rng, cloned = slices.Clone(rng), true
			}
			sp.rng[j].Typ = p
		}
	}
	if allPoints {
		sp.point = len(keyed) == len(ix.cols) && len(sp.residual) == 0
		sp.start = pfx
		sp.end = prefixEnd(pfx)
	}
	if sp.end != nil && bytes.Compare(sp.start, sp.end) >= 0 {
		return span{}, false, nil
	}
	return sp, true, nil
}

// pointKey returns the key of a column range that is a single non-NULL
// value: [k, k].
func pointKey(ctx *sql.Context, ce sql.MySQLRangeColumnExpr) (any, bool) {
	lo, ok1 := ce.LowerBound.(sql.Below)
	hi, ok2 := ce.UpperBound.(sql.Above)
	if !ok1 || !ok2 || lo.Key == nil || hi.Key == nil {
		return nil, false
	}
	typ := ce.Typ
	if typ == nil {
		return nil, false
	}
	c, err := typ.Compare(ctx, lo.Key, hi.Key)
	if err != nil || c != 0 {
		return nil, false
	}
	return lo.Key, true
}

// encodeBound encodes a range key for index column i (of type colType) and
// reports whether the encoding is exact: the converted value compares equal
// to the key under the range's type. It returns nil when the key has no
// encoding in the column's type (out of range, not convertible); the caller
// then widens the bound and checks rows.
func encodeBound(ctx *sql.Context, colType, rangeType sql.Type, k any, ix *indexDef, i int) ([]byte, bool) {
	cv, inRange, err := colType.Convert(ctx, k)
	if err != nil || inRange == sql.OutOfRange || cv == nil {
		return nil, false
	}
	if w, ok := cv.(sql.AnyWrapper); ok {
		if cv, err = w.UnwrapAny(ctx); err != nil {
			return nil, false
		}
	}
	exact := true
	if rangeType != nil {
		if c, err := rangeType.Compare(ctx, k, cv); err != nil || c != 0 {
			exact = false
		}
	}
	if ix.prefix != nil && ix.prefix[i] > 0 {
		cv = prefixOf(cv, int(ix.prefix[i]))
		exact = false
	}
	enc, err := codec.AppendKey(nil, colType, cv, codec.Asc)
	if err != nil {
		return nil, false
	}
	return enc, exact
}

// nullKey is the encoding of NULL (ascending): the smallest datum.
var nullKey = []byte{0x00}

// columnBounds returns the bounds, relative to the point prefix, of the
// first non-point column: lo inclusive (nil: from the prefix), hi exclusive
// (nil: to the end of the prefix). exact is false when a bound was widened;
// empty when nothing can match.
func columnBounds(ctx *sql.Context, colType sql.Type, ce sql.MySQLRangeColumnExpr, ix *indexDef, i int) (lo, hi []byte, exact, empty bool) {
	exact = true
	// A bound at a NULL key (a join key that is NULL under =) compares
	// unknown with everything: nothing matches.
	if k, ok := cutKey(ce.LowerBound); ok && k == nil {
		return nil, nil, true, true
	}
	if k, ok := cutKey(ce.UpperBound); ok && k == nil {
		return nil, nil, true, true
	}
	switch c := ce.LowerBound.(type) {
	case sql.BelowNull:
	case sql.AboveNull:
		lo = prefixEnd(nullKey)
	case sql.Below:
		enc, ex := encodeBound(ctx, colType, ce.Typ, c.Key, ix, i)
		if enc == nil || !ex {
			exact = false
		}
		if enc != nil {
			lo = enc // >= k, or >= the widened key
		} else {
			lo = prefixEnd(nullKey) // values only: NULL is below every key
		}
	case sql.Above:
		enc, ex := encodeBound(ctx, colType, ce.Typ, c.Key, ix, i)
		switch {
		case enc != nil && ex:
			lo = prefixEnd(enc) // > k: after every key that starts with enc(k)
		case enc != nil:
			exact = false
			lo = enc
		default:
			exact = false
			lo = prefixEnd(nullKey)
		}
	case sql.AboveAll:
		return nil, nil, true, true
	default:
		return nil, nil, false, false
	}
	switch c := ce.UpperBound.(type) {
	case sql.AboveAll:
	case sql.BelowNull:
		return nil, nil, true, true
	case sql.AboveNull:
		hi = prefixEnd(nullKey)
	case sql.Above:
		enc, ex := encodeBound(ctx, colType, ce.Typ, c.Key, ix, i)
		if enc != nil {
			hi = prefixEnd(enc) // <= k
		} else {
			exact = false
		}
		if !ex {
			exact = false
		}
	case sql.Below:
		enc, ex := encodeBound(ctx, colType, ce.Typ, c.Key, ix, i)
		switch {
		case enc != nil && ex:
			hi = enc // < k
		case enc != nil:
			exact = false
			hi = prefixEnd(enc)
		default:
			exact = false
		}
	default:
		return nil, nil, false, false
	}
	return lo, hi, exact, false
}

// rangeHeldExactly reports whether the column type typ holds every key of
// a column's range exactly (holdsExactly).
func rangeHeldExactly(ctx *sql.Context, typ sql.Type, ce sql.MySQLRangeColumnExpr) bool {
	for _, c := range []sql.MySQLRangeCut{ce.LowerBound, ce.UpperBound} {
		if k, ok := cutKey(c); ok && !holdsExactly(ctx, typ, k) {
			return false
		}
	}
	return true
}

// preciseType returns a type that compares values of the column type typ
// with keys of any precision or magnitude without converting them into
// typ, or nil when typ has none here.
func preciseType(typ sql.Type) sql.Type {
	switch {
	case types.IsInteger(typ), types.IsDecimal(typ):
		return types.InternalDecimalType
	case types.IsFloat(typ):
		return types.Float64
	case types.IsTime(typ):
		return types.DatetimeMaxPrecision
	}
	return nil
}

// cutKey returns the key of a Below or Above cut.
func cutKey(c sql.MySQLRangeCut) (any, bool) {
	switch c := c.(type) {
	case sql.Below:
		return c.Key, true
	case sql.Above:
		return c.Key, true
	}
	return nil, false
}

// matches reports whether a row passes the residual checks of a span.
func (sp *span) matches(ctx *sql.Context, d *tableDef, ix *indexDef, row sql.Row) (bool, error) {
	for _, i := range sp.residual {
		o := ix.ext[i]
		ok, err := inColumnRange(ctx, sp.rng[i], d.schema[o].Type, row[o])
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// inColumnRange reports whether v lies within one column's range; NULL is
// below every value, as in index order.
func inColumnRange(ctx *sql.Context, ce sql.MySQLRangeColumnExpr, colType sql.Type, v any) (bool, error) {
	typ := ce.Typ
	if typ == nil {
		typ = colType
	}
	cmp := func(k any) (int, error) { return typ.Compare(ctx, v, k) }
	if k, ok := cutKey(ce.LowerBound); ok && k == nil {
		return false, nil
	}
	if k, ok := cutKey(ce.UpperBound); ok && k == nil {
		return false, nil
	}
	switch c := ce.LowerBound.(type) {
	case sql.BelowNull:
	case sql.AboveNull:
		if v == nil {
			return false, nil
		}
	case sql.Below:
		if v == nil {
			return false, nil
		}
		if r, err := cmp(c.Key); err != nil || r < 0 {
			return false, err
		}
	case sql.Above:
		if v == nil {
			return false, nil
		}
		if r, err := cmp(c.Key); err != nil || r <= 0 {
			return false, err
		}
	case sql.AboveAll:
		return false, nil
	}
	switch c := ce.UpperBound.(type) {
	case sql.AboveAll:
	case sql.BelowNull:
		return false, nil
	case sql.AboveNull:
		if v != nil {
			return false, nil
		}
	case sql.Above:
		if v != nil {
			if r, err := cmp(c.Key); err != nil || r > 0 {
				return false, err
			}
		}
	case sql.Below:
		if v != nil {
			if r, err := cmp(c.Key); err != nil || r >= 0 {
				return false, err
			}
		}
	}
	return true, nil
}
