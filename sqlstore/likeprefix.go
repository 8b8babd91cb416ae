package sqlstore

import (
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/mysqlcompat"
	"github.com/strata-db/strata/sqlstore/codec"
)

// Ranges of LIKE prefixes. s LIKE 'ab%' (or 'ab_c', 'ab%d') matches only
// strings that begin with 'ab' under the column's collation, rune by rune
// by weight; their index keys are the keys that begin with the key of 'ab'
// without its end (codec.AppendStringPrefixKey), whatever follows and
// whatever the collation. GMS made the range s >= 'ab' AND s <= 'ab\xff'
// instead and dropped the LIKE, which missed every string whose rune after
// the prefix weighs more than U+00FF, and under PAD SPACE the strings whose
// next rune weighs less than a space ('ab\t' < 'ab'). mysqlcompat keeps the
// LIKE from that rewrite (keepLikes); LookupForExpressions answers with
// likeLookup: the key range of the prefix, with every conjunct, the LIKE
// included, kept in a filter.
//
// It answers only when the choice is clear: no other conjunct mentions a
// column that begins an index, which GMS's costing might prefer; else it
// declines, and the LIKE is a filter over what GMS chooses. Under
// utf8mb4_0900_bin, whose prefixes have string bounds, mysqlcompat puts
// them beside the LIKE (boundLikes), so it declines there and GMS costs
// that range with the rest.

// likeLookup returns the lookup of the prefix of a LIKE among exprs, and
// the filter that stays (all of exprs); ok is false when it declines.
func (t *Table) likeLookup(ctx *sql.Context, exprs []sql.Expression) (sql.IndexLookup, sql.Expression, bool) {
	d := t.def
	hasLike := false
	for _, e := range exprs {
		if _, ok := mysqlcompat.KeptLike(e); ok {
			hasLike = true
			break
		}
	}
	if !hasLike {
		return sql.IndexLookup{}, nil, false
	}
	leading := map[int]bool{}
	for _, ix := range d.indexes() {
		leading[ix.cols[0]] = true
	}
	found := -1
	var ix *indexDef
	var prefix string
	for i, e := range exprs {
		col, p, ok := t.likePrefix(ctx, e)
		if !ok || !leading[col] {
			if _, isLike := mysqlcompat.KeptLike(e); isLike {
				continue // a LIKE gives GMS no range (keepLikes)
			}
			if t.mentionsLeading(e, leading) {
				return sql.IndexLookup{}, nil, false
			}
			continue
		}
		if found >= 0 {
			continue // the first LIKE's range; the others filter
		}
		if _, ok := codec.AppendStringPrefixKey(nil, d.schema[col].Type, p); !ok {
			continue // a prefix the column's keys cannot hold: a filter
		}
		for _, c := range d.indexes() {
			if c.cols[0] == col {
				ix = c
				break
			}
		}
		found, prefix = i, p
	}
	if found < 0 {
		return sql.IndexLookup{}, nil, false
	}
	typ := d.schema[ix.cols[0]].Type
	ranges := &prefixRanges{typ: typ, prefix: prefix, cols: len(ix.cols)}
	lookup := sql.IndexLookup{Index: &Index{t: d, ix: ix}, Ranges: ranges}
	return lookup, expression.JoinAnd(exprs...), true
}

// likePrefix returns the column of the table a LIKE compares and the
// literal prefix of its pattern, when e is such a LIKE with a non-empty
// prefix, under the column's own collation.
func (t *Table) likePrefix(ctx *sql.Context, e sql.Expression) (int, string, bool) {
	l, ok := mysqlcompat.KeptLike(e)
	if !ok {
		return -1, "", false
	}
	gf, ok := l.LeftChild.(*expression.GetField)
	if !ok || !strings.EqualFold(gf.Table(), t.def.name) {
		return -1, "", false
	}
	col := t.def.schema.IndexOfColName(gf.Name())
	if col < 0 {
		return -1, "", false
	}
	typ := t.def.schema[col].Type
	st, ok := typ.(sql.StringType)
	if !ok || !types.IsText(typ) || types.IsBinaryType(typ) {
		return -1, "", false
	}
	if c, _ := l.CollationCoercibility(ctx); c != st.Collation() {
		return -1, "", false
	}
	p, ok := mysqlcompat.LikePrefix(l)
	if !ok || p == "" {
		return -1, "", false
	}
	return col, p, true
}

// mentionsLeading reports whether e refers to a column of the table that
// begins an index.
func (t *Table) mentionsLeading(e sql.Expression, leading map[int]bool) bool {
	found := false
	sql.Inspect(e, func(x sql.Expression) bool {
		if gf, ok := x.(*expression.GetField); ok && strings.EqualFold(gf.Table(), t.def.name) {
			if o := t.def.schema.IndexOfColName(gf.Name()); o >= 0 && leading[o] {
				found = true
			}
		}
		return !found
	})
	return found
}

// prefixRanges is the lookup of a LIKE prefix: the index keys whose first
// column begins with prefix under the column's collation. encodeLookup
// turns it into one span directly (encode); GMS sees it as the closed range
// from prefix to prefix followed by U+10FFFF, which it only prints and
// hands to Index.CanSupport.
type prefixRanges struct {
	typ    sql.Type // the first index column's type
	prefix string
	cols   int // the index's columns
}

var _ sql.RangeCollection = (*prefixRanges)(nil)

// encode returns the plan of the lookup on index ix of table d: one span
// over the keys that begin with the prefix's key.
func (r *prefixRanges) encode(d *tableDef, ix *indexDef, reverse bool) (*lookupPlan, error) {
	typ := d.schema[ix.cols[0]].Type
	p := r.prefix
	if ix.prefix != nil && ix.prefix[0] > 0 {
		// The entry holds the column's first runes; every value that
		// begins with p has an entry that begins with p's first runes.
		p = prefixOf(p, int(ix.prefix[0])).(string)
	}
	start := appendIndexPrefix(nil, d.id, ix.id)
	n := len(start)
	start, ok := codec.AppendStringPrefixKey(start, typ, p)
	if !ok {
		// The column changed since planning: the whole index, which
		// the LIKE kept as a filter narrows.
		return &lookupPlan{ix: ix, reverse: reverse, spans: []span{{start: start[:n], end: prefixEnd(start[:n]), rangeCol: 0, whole: true}}}, nil
	}
	sp := span{start: start, rangeCol: 0, rng: r.mysql()[0]}
	if sp.end = codec.PrefixSuccessor(nil, start[n:]); sp.end == nil {
		sp.end = prefixEnd(start[:n])
	} else {
		sp.end = append(append([]byte(nil), start[:n]...), sp.end...)
	}
	return &lookupPlan{ix: ix, reverse: reverse, spans: []span{sp}}, nil
}

// mysql returns the range GMS prints: from the prefix to the prefix
// followed by the last code point, on the first column.
func (r *prefixRanges) mysql() sql.MySQLRangeCollection {
	rng := make(sql.MySQLRange, r.cols)
	rng[0] = sql.ClosedRangeColumnExpr(r.prefix, r.prefix+string(utf8.MaxRune), r.typ)
	for i := 1; i < r.cols; i++ {
		rng[i] = sql.AllRangeColumnExpr(r.typ)
	}
	return sql.MySQLRangeCollection{rng}
}

func (r *prefixRanges) Len() int { return 1 }

func (r *prefixRanges) ToRanges() []sql.Range { return r.mysql().ToRanges() }

func (r *prefixRanges) Equals(other sql.RangeCollection) (bool, error) {
	o, ok := other.(*prefixRanges)
	return ok && o.prefix == r.prefix && o.cols == r.cols && o.typ.Equals(r.typ), nil
}

func (r *prefixRanges) String() string { return r.mysql().String() }

func (r *prefixRanges) DebugString() string { return r.mysql().DebugString() }
