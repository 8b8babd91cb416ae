package sqlstore

import (
	"slices"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/strata-db/strata/sqlstore/codec"
)

// intervalRanges is the lookup of one execution of a plan template (see
// plantemplate.go): closed intervals of integers on the first column of the
// index. GMS takes it as any sql.RangeCollection and passes it back to
// LookupPartitions, where encodeLookup turns it into key spans directly.
// Building GMS's MySQLRanges for it and parsing them back cost two dozen
// allocations per value, 13% of a prepared IN-list of ten ids.
//
// GMS uses a lookup's ranges only to print them and to ask the index
// whether it can serve them (Index.CanSupport, always true here); those
// build the MySQLRanges on demand.
//
// Nothing of GMS's is built at execution: the bounds, checked to fit the
// type as integers (intFits), are converted to the type's Go values only
// when the ranges are printed or compared.
type intervalRanges struct {
	ctx *sql.Context
	typ sql.Type // the column's type, which every bound fits
	set intervalSet
	// reverse: the collection lists the intervals from the last, as
	// sql.NewIndexLookup orders the ranges of a reverse lookup.
	reverse bool

	// The storage of a lookup of one interval (a point select), made with
	// the collection in one allocation: its set and what ToRanges returns.
	one      [1]interval
	oneRange intervalRange
	oneOut   [1]sql.Range
}

// newIntervalRanges returns the ranges of set, a copy of it.
func newIntervalRanges(ctx *sql.Context, typ sql.Type, set intervalSet, reverse bool) *intervalRanges {
	r := &intervalRanges{ctx: ctx, typ: typ, reverse: reverse}
	if len(set) == 1 {
		r.one[0] = set[0]
		r.set = r.one[:]
	} else {
		r.set = slices.Clone(set)
	}
	return r
}

// at returns the position in set of the collection's k-th interval.
func (r *intervalRanges) at(k int) int {
	if r.reverse {
		return len(r.set) - 1 - k
	}
	return k
}

var _ sql.RangeCollection = (*intervalRanges)(nil)

// mysql returns the ranges as GMS builds them from the same predicate with
// literals; ok is false when a bound does not fit the type.
func (r *intervalRanges) mysql() (sql.MySQLRangeCollection, bool) {
	ranges := make(sql.MySQLRangeCollection, len(r.set))
	for i := range r.set {
		lo, hi, ok := r.bounds(r.at(i))
		if !ok {
			return nil, false
		}
		ranges[i] = sql.MySQLRange{sql.ClosedRangeColumnExpr(lo, hi, r.typ)}
	}
	return ranges, true
}

// bounds returns the bounds of interval i converted to the type.
func (r *intervalRanges) bounds(i int) (lo, hi any, ok bool) {
	lo, ok1 := fromInt64(r.ctx, r.typ, r.set[i].lo)
	hi, ok2 := fromInt64(r.ctx, r.typ, r.set[i].hi)
	return lo, hi, ok1 && ok2
}

func (r *intervalRanges) Len() int { return len(r.set) }

// ToRanges returns one Range per interval, each a pointer into one array:
// GMS calls it at every execution only to hand the ranges to
// Index.CanSupport.
func (r *intervalRanges) ToRanges() []sql.Range {
	if len(r.set) == 1 {
		r.oneRange = intervalRange{r, 0}
		r.oneOut[0] = &r.oneRange
		return r.oneOut[:]
	}
	items := make([]intervalRange, len(r.set))
	out := make([]sql.Range, len(r.set))
	for k := range r.set {
		items[k] = intervalRange{r, r.at(k)}
		out[k] = &items[k]
	}
	return out
}

func (r *intervalRanges) Equals(other sql.RangeCollection) (bool, error) {
	mine, ok := r.mysql()
	if !ok {
		return false, nil
	}
	if o, isIntervals := other.(*intervalRanges); isIntervals {
		if other, ok = o.mysql(); !ok {
			return false, nil
		}
	}
	return mine.Equals(other)
}

func (r *intervalRanges) String() string {
	if m, ok := r.mysql(); ok {
		return m.String()
	}
	return "[]"
}

func (r *intervalRanges) DebugString() string {
	if m, ok := r.mysql(); ok {
		return m.DebugString()
	}
	return "[]"
}

// intervalRange is interval i of an intervalRanges, as a sql.Range.
type intervalRange struct {
	r *intervalRanges
	i int
}

func (x *intervalRange) one() (sql.MySQLRange, bool) {
	lo, hi, ok := x.r.bounds(x.i)
	if !ok {
		return nil, false
	}
	return sql.MySQLRange{sql.ClosedRangeColumnExpr(lo, hi, x.r.typ)}, true
}

func (x *intervalRange) String() string {
	if m, ok := x.one(); ok {
		return m.String()
	}
	return "()"
}

func (x *intervalRange) DebugString() string {
	if m, ok := x.one(); ok {
		return m.DebugString()
	}
	return "()"
}

func (x *intervalRange) Equals(other sql.Range) (bool, error) {
	m, ok := x.one()
	if !ok {
		return false, nil
	}
	if o, isInterval := other.(*intervalRange); isInterval {
		if other, ok = o.one(); !ok {
			return false, nil
		}
	}
	return m.Equals(other)
}

// encodeIntervals encodes a template's lookup on index ix, whose first
// column the intervals bound: the spans encodeRange makes of the same
// ranges, in the same order, without going through them. A value of an
// interval is one key prefix (a point, exact for a single-column index);
// an interval of several values spans from the first's prefix to past the
// last's. The bounds fit the template's type, which is the column's (learn
// checks it), and are encoded as integers of it (codec.AppendIntKey),
// never converted to GMS's values. ok is false when one does not encode;
// the caller then encodes the MySQL ranges instead.
func encodeIntervals(d *tableDef, ix *indexDef, r *intervalRanges, reverse bool) (plan *lookupPlan, ok bool) {
	colType := d.schema[ix.cols[0]].Type
	if ix.prefix != nil && ix.prefix[0] > 0 {
		return nil, false // a prefix index checks rows: GMS's ranges say how
	}
	var pbuf [24]byte
	prefix := appendIndexPrefix(pbuf[:0], d.id, ix.id)
	// One buffer for every key; a span's keys are full slices of it, so
	// that a later append never writes into them. The last 10 bytes are
	// room for the successor of a value, made past the value's key.
	need := 2*len(r.set)*(len(prefix)+10) + 10
	var buf []byte
	if len(r.set) == 1 {
		// The plan, its one span and, when they fit, its keys in one
		// allocation.
		one := &struct {
			plan lookupPlan
			span [1]span
			keys [64]byte
		}{}
		plan = &one.plan
		plan.spans = one.span[:0]
		if need <= len(one.keys) {
			buf = one.keys[:0]
		}
	} else {
		plan = &lookupPlan{spans: make([]span, 0, len(r.set))}
	}
	if buf == nil {
		buf = make([]byte, 0, need)
	}
	plan.ix, plan.reverse = ix, reverse
	key := func(v int64, successor bool) ([]byte, bool) {
		start := len(buf)
		buf = append(buf, prefix...)
		enc, ok := codec.AppendIntKey(buf, colType, v, codec.Asc)
		if !ok {
			return nil, false
		}
		buf = enc
		if successor {
			// Past every key that begins with the value; within the index.
			end := codec.PrefixSuccessor(buf[len(buf):], buf[start+len(prefix):])
			if len(end) == 0 {
				buf = append(buf[:start], prefixEnd(prefix)...)
			} else {
				buf = append(buf[:start+len(prefix)], end...)
			}
		}
		return buf[start:len(buf):len(buf)], true
	}
	for k := range r.set {
		iv := r.set[r.at(k)]
		sp := span{rangeCol: -1}
		var ok1, ok2 bool
		sp.start, ok1 = key(iv.lo, false)
		sp.end, ok2 = key(iv.hi, true)
		if !ok1 || !ok2 {
			return nil, false
		}
		if iv.lo == iv.hi {
			sp.point = len(ix.cols) == 1
		} else {
			sp.rangeCol = 0
			sp.width = float64(iv.hi) - float64(iv.lo) + 1
		}
		plan.spans = append(plan.spans, sp)
	}
	return plan, true
}
