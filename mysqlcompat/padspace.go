package mysqlcompat

import (
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/sqlstore/codec"
)

// Comparisons under PAD SPACE collations
//
// MySQL compares strings under a PAD SPACE collation (utf8mb4_general_ci,
// utf8mb4_bin and the other collations older than the 0900 ones) as if the
// shorter were padded with spaces: 'a' = 'A  ' under utf8mb4_general_ci,
// and 'a' > 'a\t', a tab weighing less than a space. GMS compares rune by
// rune and then by length, as under NO PAD, so a full scan's WHERE s = 'a'
// missed the row 'A  ' that the index (whose keys are padded, see
// sqlstore/codec) finds.
//
// padExpr replaces each comparison (=, <=>, <, <=, >, >=) whose two
// sides are strings compared under a PAD SPACE collation by padCompare,
// which compares the values padded; each IN over such strings by padIn;
// each CASE x WHEN over them by a searched CASE of padCompares, and NULLIF,
// STRCMP and FIELD by collatedFunc (padfuncs.go). NULLs and values that
// are not strings are left to GMS's own comparison, which the replacement
// keeps. keyDistincts runs it over the
// plan's expressions at the end of analysis, after GMS chose its indexes,
// so the lookups it built from the comparisons stay.
//
// Targets GMS v0.20.0 (sql/types/strings.go, StringType.Compare). Without
// it, TestCollationSpec fails.
func padExpr(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	switch x := e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual, *expression.GreaterThan, *expression.GreaterThanOrEqual:
		c := x.(expression.Comparer)
		coll, ok := paddedCollation(ctx, c.Left(), c.Right())
		if !ok {
			return e, transform.SameTree, nil
		}
		return &padCompare{padded{orig: c, coll: coll}}, transform.NewTree, nil
	case *expression.InTuple, *expression.HashInTuple:
		c := x.(expression.Comparer)
		tup, ok := c.Right().(expression.Tuple)
		if !ok {
			return e, transform.SameTree, nil
		}
		var coll sql.CollationID
		for _, el := range tup {
			cc, ok := paddedCollation(ctx, c.Left(), el)
			if !ok {
				return e, transform.SameTree, nil
			}
			coll = cc
		}
		return &padIn{padded{orig: c, coll: coll}}, transform.NewTree, nil
	case *expression.Case:
		if nc, ok := paddedCase(ctx, x); ok {
			return nc, transform.NewTree, nil
		}
	default:
		// NULLIF, STRCMP and FIELD (padfuncs.go).
		ne, id := padFunction(ctx, e)
		return ne, id, nil
	}
	return e, transform.SameTree, nil
}

// paddedCase returns CASE x WHEN a ... over PAD SPACE strings as the
// searched CASE WHEN x = a ..., with padded comparisons, which GMS's Case
// evaluates as it does its own (x once per branch); ok is false for any
// other expression.
func paddedCase(ctx *sql.Context, e sql.Expression) (sql.Expression, bool) {
	c, ok := e.(*expression.Case)
	if !ok || c.Expr == nil {
		return e, false
	}
	branches := make([]expression.CaseBranch, len(c.Branches))
	rewritten := false
	for i, b := range c.Branches {
		eq := expression.NewEquals(c.Expr, b.Cond)
		branches[i] = expression.CaseBranch{Cond: eq, Value: b.Value}
		if coll, ok := paddedCollation(ctx, c.Expr, b.Cond); ok {
			branches[i].Cond, rewritten = &padCompare{padded{orig: eq, coll: coll}}, true
		}
	}
	if !rewritten {
		return e, false
	}
	return expression.NewCase(nil, branches, c.Else), true
}

// paddedCollation returns the collation GMS compares l and r under when
// both are strings and it is PAD SPACE.
func paddedCollation(ctx *sql.Context, l, r sql.Expression) (sql.CollationID, bool) {
	if !types.IsText(l.Type()) || !types.IsText(r.Type()) || types.IsBinaryType(l.Type()) || types.IsBinaryType(r.Type()) {
		return 0, false
	}
	// As GMS's comparison resolves it (expression.comparison's
	// CollationCoercibility, which Equals and the others hide).
	lc, lco := sql.GetCoercibility(ctx, l)
	rc, rco := sql.GetCoercibility(ctx, r)
	coll, _ := sql.ResolveCoercibility(lc, lco, rc, rco)
	if coll == sql.Collation_Unspecified {
		coll = sql.Collation_Default
	}
	if !codec.PadSpace(types.CreateLongText(coll)) || coll.Sorter() == nil {
		return 0, false
	}
	return coll, true
}

// ComparePadded compares a and b under collation c as MySQL does under PAD
// SPACE: rune by rune by weight, the shorter string padded with spaces.
func ComparePadded(c sql.CollationID, a, b string) int {
	sorter := c.Sorter()
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		wa, wb := sorter(ra), sorter(rb)
		if wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		a, b = a[na:], b[nb:]
	}
	sign := 1
	rest := a
	if len(b) > 0 {
		sign, rest = -1, b
	}
	space := sorter(' ')
	for len(rest) > 0 {
		r, n := utf8.DecodeRuneInString(rest)
		if w := sorter(r); w != space {
			if w > space {
				return sign
			}
			return -sign
		}
		rest = rest[n:]
	}
	return 0
}

// padStrings evaluates the two sides of c; ok is false when either is not
// a string (NULL included).
func padStrings(ctx *sql.Context, l, r sql.Expression, row sql.Row) (ls, rs string, ok bool, err error) {
	lv, err := l.Eval(ctx, row)
	if err != nil {
		return "", "", false, err
	}
	rv, err := r.Eval(ctx, row)
	if err != nil {
		return "", "", false, err
	}
	if lv, err = sql.UnwrapAny(ctx, lv); err != nil {
		return "", "", false, err
	}
	if rv, err = sql.UnwrapAny(ctx, rv); err != nil {
		return "", "", false, err
	}
	ls, lok := lv.(string)
	rs, rok := rv.(string)
	return ls, rs, lok && rok, nil
}

// padded is what padCompare and padIn share: GMS's expression they stand
// for (its printing, type, nullability and children are theirs) and the
// collation they compare under.
type padded struct {
	orig expression.Comparer
	coll sql.CollationID
}

func (p padded) Resolved() bool             { return p.orig.Resolved() }
func (p padded) String() string             { return p.orig.String() }
func (p padded) Type() sql.Type             { return p.orig.Type() }
func (p padded) IsNullable() bool           { return p.orig.IsNullable() }
func (p padded) Children() []sql.Expression { return p.orig.Children() }
func (p padded) DebugString() string        { return sql.DebugString(p.orig) }

// withChildren rebuilds GMS's expression over children and wraps it again
// with wrap, or returns it bare when it is no longer a comparison.
func (p padded) withChildren(children []sql.Expression, wrap func(padded) sql.Expression) (sql.Expression, error) {
	o, err := p.orig.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	c, ok := o.(expression.Comparer)
	if !ok {
		return o, nil
	}
	return wrap(padded{orig: c, coll: p.coll}), nil
}

// padCompare is a comparison of two strings under a PAD SPACE collation.
type padCompare struct{ padded }

var _ expression.Comparer = (*padCompare)(nil)

// Compare implements expression.Comparer, for the merge joins that walk
// two inputs in index order (which is padded) by it.
func (p *padCompare) Compare(ctx *sql.Context, row sql.Row) (int, error) {
	l, r, ok, err := padStrings(ctx, p.orig.Left(), p.orig.Right(), row)
	if err != nil {
		return 0, err
	}
	if !ok {
		return p.orig.Compare(ctx, row)
	}
	return ComparePadded(p.coll, l, r), nil
}

func (p *padCompare) Left() sql.Expression  { return p.orig.Left() }
func (p *padCompare) Right() sql.Expression { return p.orig.Right() }

func (p *padCompare) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, r, ok, err := padStrings(ctx, p.orig.Left(), p.orig.Right(), row)
	if err != nil {
		return nil, err
	}
	if !ok {
		return p.orig.Eval(ctx, row)
	}
	c := ComparePadded(p.coll, l, r)
	switch p.orig.(type) {
	case *expression.Equals, *expression.NullSafeEquals:
		return c == 0, nil
	case *expression.LessThan:
		return c < 0, nil
	case *expression.LessThanOrEqual:
		return c <= 0, nil
	case *expression.GreaterThan:
		return c > 0, nil
	default: // GreaterThanOrEqual
		return c >= 0, nil
	}
}

func (p *padCompare) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return p.withChildren(children, func(b padded) sql.Expression { return &padCompare{b} })
}

// padIn is IN over strings under a PAD SPACE collation; orig is an
// InTuple or a HashInTuple.
type padIn struct{ padded }

var _ sql.Expression = (*padIn)(nil)

func (p *padIn) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	lv, err := p.orig.Left().Eval(ctx, row)
	if err != nil || lv == nil {
		return nil, err
	}
	if lv, err = sql.UnwrapAny(ctx, lv); err != nil {
		return nil, err
	}
	l, ok := lv.(string)
	if !ok {
		return p.orig.Eval(ctx, row)
	}
	sawNull := false
	for _, el := range p.orig.Right().(expression.Tuple) {
		v, err := el.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v, err = sql.UnwrapAny(ctx, v); err != nil {
			return nil, err
		}
		switch s := v.(type) {
		case nil:
			sawNull = true
		case string:
			if ComparePadded(p.coll, l, s) == 0 {
				return true, nil
			}
		default:
			return p.orig.Eval(ctx, row)
		}
	}
	if sawNull {
		return nil, nil
	}
	return false, nil
}

func (p *padIn) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return p.withChildren(children, func(b padded) sql.Expression { return &padIn{b} })
}

// LIKE kept as written
//
// GMS's simplifyFilters turns s LIKE 'a' into s = 'a' and s LIKE 'a%' into
// s >= 'a' AND s <= 'a\xff', and drops the LIKE. Neither is LIKE: the
// range loses every string whose rune after the prefix weighs more than
// U+00FF ('aĀ', 'a€', 'a😀' under utf8mb4_0900_bin), by index and by scan
// alike; the equality ignores escapes ('a\%' is 'a%'). Under PAD SPACE
// LIKE does not pad: 'A  ' LIKE 'a' is false under utf8mb4_general_ci,
// where 'A  ' = 'a' is true, and 'a\t' LIKE 'a%' is true where 'a\t' >=
// 'a' is false (a tab weighs less than the padding). keepLikes hides each
// LIKE from that rule, before it runs: the LIKE is evaluated as written,
// and sqlstore reads the index range of its literal prefix in key space
// (KeptLike). It also trims the literals compared with PAD SPACE strings
// (trimPaddedLiterals), before GMS builds ranges from them.
//
// simplifyFilters rewrites the filters of the statement's nested scopes
// too, before GMS analyzes them on their own: it walks through derived
// tables, CTEs, views and set operations (opaque nodes) and into the
// subqueries of filters. So keepLikes corrects every nested scope the
// statement holds, where the top-level rule runs (keepScopeLikes); the
// nested analyses that come later find the LIKEs kept.
func keepLikes(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return keepScopeLikes(ctx, n)
}

// keepScopeLikes keeps the LIKEs of n, one scope's plan, and of the scopes
// nested in it: the children of its opaque nodes and the queries of its
// subquery expressions, each with its own bounds (boundLikes).
func keepScopeLikes(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	keep := func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		switch x := e.(type) {
		case *expression.Like:
			return &keptLike{Like: x}, transform.NewTree, nil
		case *plan.Subquery:
			q, same, err := keepScopeLikes(ctx, x.Query)
			if err != nil || same == transform.SameTree {
				return e, transform.SameTree, err
			}
			return x.WithQuery(q), transform.NewTree, nil
		}
		return trimPaddedLiterals(ctx, e)
	}
	n, same, err := transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		sameC := transform.SameTree
		if _, ok := n.(sql.OpaqueNode); ok {
			var err error
			if n, sameC, err = transform.NodeChildren(n, func(c sql.Node) (sql.Node, transform.TreeIdentity, error) {
				return keepScopeLikes(ctx, c)
			}); err != nil {
				return nil, transform.SameTree, err
			}
		}
		n, sameE, err := transform.OneNodeExpressions(n, keep)
		return n, sameC && sameE, err
	})
	if err != nil || same == transform.SameTree {
		return n, same, err
	}
	// Bounds GMS can cost, where strings have them (likeprefix.go).
	n, _, err = boundLikes(n)
	return n, transform.NewTree, err
}

// keptLike is a LIKE GMS's simplifyFilters does not rewrite; bounded
// when boundLikes put the comparisons lo and hi beside it (likeprefix.go).
type keptLike struct {
	*expression.Like
	lo, hi sql.Expression
}

func (u *keptLike) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	e, err := u.Like.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if l, ok := e.(*expression.Like); ok {
		return &keptLike{Like: l, lo: u.lo, hi: u.hi}, nil
	}
	return e, nil
}

// LikeBounds returns the comparisons added beside e, a LIKE, for GMS's
// costing (boundLikes), nil when there are none: EXPLAIN estimates the
// LIKE alone.
func LikeBounds(e sql.Expression) (lo, hi sql.Expression) {
	if k, ok := e.(*keptLike); ok {
		return k.lo, k.hi
	}
	return nil, nil
}

// KeptLike returns the LIKE e is, kept from GMS's rewrite (keepLikes) or
// not: a storage layer that answers lookups itself reads the range of its
// prefix there.
func KeptLike(e sql.Expression) (*expression.Like, bool) {
	switch l := e.(type) {
	case *keptLike:
		return l.Like, true
	case *expression.Like:
		return l, true
	}
	return nil, false
}

// trimPaddedLiterals drops the trailing spaces of a string literal compared
// with a PAD SPACE string, which change nothing in the comparison, before
// GMS builds index ranges from them: GMS orders the bounds of a range with
// its own comparison, under which b >= 'a ' AND b <= 'a' is empty.
func trimPaddedLiterals(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	switch x := e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual, *expression.GreaterThan, *expression.GreaterThanOrEqual:
		c := x.(expression.Comparer)
		coll, ok := paddedCollation(ctx, c.Left(), c.Right())
		if !ok {
			return e, transform.SameTree, nil
		}
		l, lt := trimmedLiteral(c.Left())
		r, rt := trimmedLiteral(c.Right())
		ne := e
		if lt || rt {
			var err error
			if ne, err = e.WithChildren(l, r); err != nil {
				return nil, transform.SameTree, err
			}
		}
		if !isEquality(ne) && (lightLiteral(coll, l) || lightLiteral(coll, r)) {
			return &padCompare{padded{orig: ne.(expression.Comparer), coll: coll}}, transform.NewTree, nil
		}
		if !lt && !rt {
			return e, transform.SameTree, nil
		}
		return ne, transform.NewTree, nil
	case *expression.Between:
		coll, ok := paddedCollation(ctx, x.Val, x.Lower)
		if !ok {
			return e, transform.SameTree, nil
		}
		if _, ok := paddedCollation(ctx, x.Val, x.Upper); !ok {
			return e, transform.SameTree, nil
		}
		lo, lt := trimmedLiteral(x.Lower)
		hi, ht := trimmedLiteral(x.Upper)
		if lightLiteral(coll, lo) || lightLiteral(coll, hi) {
			ge := &padCompare{padded{orig: expression.NewGreaterThanOrEqual(x.Val, lo), coll: coll}}
			le := &padCompare{padded{orig: expression.NewLessThanOrEqual(x.Val, hi), coll: coll}}
			return expression.NewAnd(ge, le), transform.NewTree, nil
		}
		if !lt && !ht {
			return e, transform.SameTree, nil
		}
		return expression.NewBetween(x.Val, lo, hi), transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

func isEquality(e sql.Expression) bool {
	switch e.(type) {
	case *expression.Equals, *expression.NullSafeEquals:
		return true
	}
	return false
}

// lightLiteral reports whether e is a string literal with a rune that
// weighs less than a space under coll ('a\t'). GMS orders the bounds of a
// range with its own comparison, which does not pad: it finds 'a\t' above
// 'a', where padded it is below, so b >= 'a\t' AND b <= 'a' was an empty
// range, and the rows GMS then dropped as an impossible WHERE, by index and
// by scan. trimPaddedLiterals hands a comparison with such a literal to GMS
// as a padCompare, from which GMS builds no range: the comparison is a
// filter, which pads.
func lightLiteral(coll sql.CollationID, e sql.Expression) bool {
	l, ok := e.(*expression.Literal)
	if !ok {
		return false
	}
	s, ok := l.Value().(string)
	if !ok {
		return false
	}
	sorter := coll.Sorter()
	space := sorter(' ')
	for _, r := range s {
		if sorter(r) < space {
			return true
		}
	}
	return false
}

// trimmedLiteral returns e without its trailing spaces when it is a string
// literal that has some, and true; otherwise e and false.
func trimmedLiteral(e sql.Expression) (sql.Expression, bool) {
	l, ok := e.(*expression.Literal)
	if !ok {
		return e, false
	}
	s, ok := l.Value().(string)
	if !ok || len(s) == 0 || s[len(s)-1] != ' ' {
		return e, false
	}
	return expression.NewLiteral(strings.TrimRight(s, " "), l.Type()), true
}

// MIN and MAX under PAD SPACE collations
//
// GMS's MIN and MAX compare with the column type's comparison, which does
// not pad: MIN('a', 'a\t') was 'a', where MySQL answers 'a\t'. keyedMinMax
// gives a MIN or MAX over a PAD SPACE string a buffer that compares padded,
// and as a window function a Compute that does (padWindowMinMax).
func keyedMinMax(e sql.Expression) (sql.Expression, transform.TreeIdentity) {
	var max bool
	switch e.(type) {
	case *aggregation.Min:
	case *aggregation.Max:
		max = true
	default:
		return e, transform.SameTree
	}
	agg := e.(sql.Aggregation)
	// The argument, then the window's PARTITION BY and ORDER BY.
	ch := agg.Children()
	if len(ch) == 0 || !codec.PadSpace(ch[0].Type()) {
		return e, transform.SameTree
	}
	coll := ch[0].Type().(sql.StringType).Collation()
	if coll.Sorter() == nil {
		return e, transform.SameTree
	}
	return &padMinMax{inner: agg, max: max, coll: coll}, transform.NewTree
}

// padMinMax is a MIN or MAX of strings under a PAD SPACE collation.
type padMinMax struct {
	inner sql.Aggregation // *aggregation.Min or *aggregation.Max
	max   bool
	coll  sql.CollationID
}

var _ sql.Aggregation = (*padMinMax)(nil)

func (a *padMinMax) Type() sql.Type                { return a.inner.Type() }
func (a *padMinMax) IsNullable() bool              { return a.inner.IsNullable() }
func (a *padMinMax) Resolved() bool                { return a.inner.Resolved() }
func (a *padMinMax) String() string                { return a.inner.String() }
func (a *padMinMax) DebugString() string           { return sql.DebugString(a.inner) }
func (a *padMinMax) Children() []sql.Expression    { return a.inner.Children() }
func (a *padMinMax) Id() sql.ColumnId              { return a.inner.Id() }
func (a *padMinMax) Window() *sql.WindowDefinition { return a.inner.Window() }

func (a *padMinMax) Eval(ctx *sql.Context, row sql.Row) (any, error) { return a.inner.Eval(ctx, row) }

func (a *padMinMax) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, a.inner)
}

func (a *padMinMax) WithId(id sql.ColumnId) sql.IdExpression {
	na := *a
	na.inner = a.inner.WithId(id).(sql.Aggregation)
	return &na
}

func (a *padMinMax) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	inner, err := a.inner.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	na := *a
	na.inner = inner.(sql.Aggregation)
	return &na, nil
}

func (a *padMinMax) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	na := *a
	na.inner = a.inner.WithWindow(w).(sql.Aggregation)
	return &na
}

// NewWindowFunction returns GMS's window function, its framing kept,
// computing over the frame as the buffer does (padWindowMinMax).
func (a *padMinMax) NewWindowFunction() (sql.WindowFunction, error) {
	fn, err := a.inner.NewWindowFunction()
	if err != nil {
		return nil, err
	}
	child, err := transform.Clone(a.inner.Children()[0])
	if err != nil {
		return nil, err
	}
	return &padWindowMinMax{WindowFunction: fn, child: child, max: a.max, coll: a.coll}, nil
}

// padWindowMinMax is GMS's window MIN or MAX of PAD SPACE strings, whose
// frame's value is the least or greatest under padded comparison, the
// first of equal ones, as GMS's MinAgg and MaxAgg keep.
type padWindowMinMax struct {
	sql.WindowFunction
	child sql.Expression
	max   bool
	coll  sql.CollationID
}

func (w *padWindowMinMax) Compute(ctx *sql.Context, interval sql.WindowInterval, buf sql.WindowBuffer) any {
	b := padMinMaxBuffer{child: w.child, max: w.max, coll: w.coll}
	for _, row := range buf[interval.Start:interval.End] {
		if err := b.Update(ctx, row); err != nil {
			return err
		}
	}
	return b.val
}

func (a *padMinMax) NewBuffer() (sql.AggregationBuffer, error) {
	child, err := transform.Clone(a.inner.Children()[0])
	if err != nil {
		return nil, err
	}
	return &padMinMaxBuffer{child: child, max: a.max, coll: a.coll}, nil
}

// padMinMaxBuffer keeps the least or greatest value padded comparison
// finds, the first of equal ones, as GMS's buffers keep.
type padMinMaxBuffer struct {
	child sql.Expression
	max   bool
	coll  sql.CollationID
	val   any
}

func (b *padMinMaxBuffer) Update(ctx *sql.Context, row sql.Row) error {
	v, err := b.child.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	if v, err = sql.UnwrapAny(ctx, v); err != nil {
		return err
	}
	if b.val == nil {
		b.val = v
		return nil
	}
	var c int
	vs, ok1 := v.(string)
	cs, ok2 := b.val.(string)
	if ok1 && ok2 {
		c = ComparePadded(b.coll, vs, cs)
	} else if c, err = b.child.Type().Compare(ctx, v, b.val); err != nil {
		return err
	}
	if (b.max && c > 0) || (!b.max && c < 0) {
		b.val = v
	}
	return nil
}

func (b *padMinMaxBuffer) Eval(*sql.Context) (any, error) { return b.val, nil }

func (b *padMinMaxBuffer) Dispose() { expression.Dispose(b.child) }
