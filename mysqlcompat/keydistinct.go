package mysqlcompat

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/strata-db/strata/sqlstore/codec"
)

// DISTINCT by collation keys
//
// GMS's Distinct, and the deduplication of UNION (DISTINCT), hash each
// row's values printed with %v (sql.HashOf): a NULL prints "<nil>", so it
// and the string '<nil>' are one row; strings are compared byte for
// byte, so 'a' and 'A' stay two rows under a case-insensitive collation,
// where MySQL keeps one, and so do 'a' and 'a ' under a PAD SPACE
// collation; a DECIMAL 1.10 and 1.1 are two rows. Its OrderedDistinct
// compares neighbours with GMS's comparison, which knows no PAD SPACE.
//
// So keyDistincts replaces each such Distinct, and the deduplication of
// each UNION DISTINCT, by a keyDistinct: it keeps the first row of each
// distinct memcomparable key (codec.AppendKey, column by column: a flag
// byte of its own for NULL, collation weights for strings, trailing pad
// spaces dropped under PAD SPACE), which is what MySQL compares. A value
// the column's type has no key for is keyed by its type and printed form,
// as GMS does, but kept apart from every keyed value. Rows of integers
// and times alone are left to GMS, which is right for them.
//
// Targets GMS v0.20.0 (sql/iters/rel_iters.go, distinctIter; sql/cache.go,
// HashOf). Without it, TestCollationSpec fails.
//
// keyDistincts also runs the rewrites of keyedNode, keyedCountDistinct
// (below) and padExpr (padspace.go), in the same two walks over the plan.
func keyDistincts(ctx *sql.Context, a *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ins, ok := n.(*plan.InsertInto); ok && ins.LiteralValueSource {
		return n, transform.SameTree, nil
	}
	n, same, err := transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		if nn, id := distinctNode(a, n); id == transform.NewTree {
			return nn, id, nil
		}
		// ORDER BY a selected expression over DISTINCT
		// (distinctorder.go), then by collation keys.
		nn, sorted := sortSelected(n)
		if kn := keyedNode(nn); kn != nn || sorted {
			return kn, transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, same2, err := transform.NodeExprs(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if ne, id, err := padExpr(ctx, e); err != nil || id == transform.NewTree {
			return ne, id, err
		}
		// A window MIN or MAX may need both.
		ne, id := keyedWindow(e)
		if ne2, id2 := keyedMinMax(ne); id2 == transform.NewTree || id == transform.NewTree {
			return ne2, transform.NewTree, nil
		}
		return keyedCountDistinct(e)
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same && same2, nil
}

// distinctNode returns n as a keyDistinct, or the plan over one for a
// UNION DISTINCT, when GMS's deduplication of it would be wrong.
func distinctNode(a *analyzer.Analyzer, n sql.Node) (sql.Node, transform.TreeIdentity) {
	switch x := n.(type) {
	case *plan.Distinct:
		if !printsAmbiguously(x.Child.Schema()) {
			return n, transform.SameTree
		}
		return &keyDistinct{child: x.Child, exec: a.ExecBuilder}, transform.NewTree
	case *plan.OrderedDistinct:
		if !printsAmbiguously(x.Child.Schema()) {
			return n, transform.SameTree
		}
		return &keyDistinct{child: x.Child, exec: a.ExecBuilder}, transform.NewTree
	case *plan.SetOp:
		// INTERSECT and EXCEPT (setopkeys.go).
		if out, ok := keySetOpNode(a.ExecBuilder, x); ok {
			return out, transform.NewTree
		}
		if !x.Distinct || x.SetOpType != plan.UnionType || !printsAmbiguously(x.Schema()) {
			return n, transform.SameTree
		}
		// UNION ALL of the sides, deduplicated.
		all := *x // its table id and columns kept
		all.Distinct, all.Limit, all.Offset, all.SortFields = false, nil, nil, nil
		return setOpTail(x, &keyDistinct{child: &all, exec: a.ExecBuilder}), transform.NewTree
	}
	return n, transform.SameTree
}

// setOpTail returns out, the rows of the set operation x, under x's ORDER
// BY, OFFSET and LIMIT, in GMS's order.
func setOpTail(x *plan.SetOp, out sql.Node) sql.Node {
	if len(x.SortFields) > 0 {
		fields := x.SortFields
		if keyed, ok := keyedSortFields(fields); ok {
			fields = keyed
		}
		out = plan.NewSort(fields, out)
	}
	if x.Offset != nil {
		out = plan.NewOffset(x.Offset, out)
	}
	if x.Limit != nil {
		out = plan.NewLimit(x.Limit, out)
	}
	return out
}

// printsAmbiguously reports whether GMS's printed form of sch's rows may
// tell equal rows apart or take different rows for one: any column but
// integers and times.
func printsAmbiguously(sch sql.Schema) bool {
	for _, c := range sch {
		if !types.IsInteger(c.Type) && !types.IsTime(c.Type) && !types.IsYear(c.Type) {
			return true
		}
	}
	return false
}

// DistinctInput returns the input of a node keyDistincts made, and true;
// or nil and false for any other node. Rewrites that handle GMS's
// Distinct handle it as one.
func DistinctInput(n sql.Node) (sql.Node, bool) {
	if d, ok := n.(*keyDistinct); ok {
		return d.child, true
	}
	return nil, false
}

// keyDistinct is a Distinct that compares rows by their keys.
type keyDistinct struct {
	child sql.Node
	exec  sql.NodeExecBuilder
}

var (
	_ sql.ExecSourceRel      = (*keyDistinct)(nil)
	_ sql.CollationCoercible = (*keyDistinct)(nil)
)

// RowIter implements sql.ExecSourceRel.
func (d *keyDistinct) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	it, err := d.exec.Build(ctx, d.child, row)
	if err != nil {
		return nil, err
	}
	return &keyDistinctIter{child: it, sch: d.child.Schema(), seen: map[string]struct{}{}}, nil
}

func (d *keyDistinct) Schema() sql.Schema   { return d.child.Schema() }
func (d *keyDistinct) Children() []sql.Node { return []sql.Node{d.child} }
func (d *keyDistinct) Resolved() bool       { return d.child.Resolved() }
func (d *keyDistinct) IsReadOnly() bool     { return d.child.IsReadOnly() }

func (d *keyDistinct) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	nd := *d
	nd.child = children[0]
	return &nd, nil
}

func (d *keyDistinct) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, d.child)
}

// String prints the node as GMS prints its Distinct.
func (d *keyDistinct) String() string {
	p := sql.NewTreePrinter()
	_ = p.WriteNode("Distinct")
	_ = p.WriteChildren(d.child.String())
	return p.String()
}

func (d *keyDistinct) DebugString() string {
	p := sql.NewTreePrinter()
	_ = p.WriteNode("Distinct")
	_ = p.WriteChildren(sql.DebugString(d.child))
	return p.String()
}

// keyDistinctIter returns the rows of child whose keys it has not seen.
type keyDistinctIter struct {
	child sql.RowIter
	sch   sql.Schema
	seen  map[string]struct{}
	key   []byte
}

func (it *keyDistinctIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		row, err := it.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		if it.key, err = appendRowKey(ctx, it.key[:0], it.sch, row); err != nil {
			return nil, err
		}
		if _, dup := it.seen[string(it.key)]; dup {
			continue
		}
		it.seen[string(it.key)] = struct{}{}
		return row, nil
	}
}

func (it *keyDistinctIter) Close(ctx *sql.Context) error {
	it.seen = nil
	return it.child.Close(ctx)
}

// unkeyedFlag starts the key of a value its column's type has no key for:
// no codec flag byte is 0xfe.
const unkeyedFlag = 0xfe

// appendRowKey appends the key of row under sch: the memcomparable key of
// each value, or, for a value its type has none for, unkeyedFlag, the
// length and the bytes of its type and printed form.
func appendRowKey(ctx *sql.Context, dst []byte, sch sql.Schema, row sql.Row) ([]byte, error) {
	for i, v := range row {
		v, err := sql.UnwrapAny(ctx, v)
		if err != nil {
			return dst, err
		}
		if i < len(sch) {
			if k, err := codec.AppendKey(dst, sch[i].Type, v, codec.Asc); err == nil {
				dst = k
				continue
			}
		}
		s := fmt.Sprintf("%T:%v", v, v)
		dst = append(dst, unkeyedFlag)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst, nil
}

// ORDER BY, GROUP BY and COUNT(DISTINCT) by collation keys
//
// GMS groups rows by the collation weights of string keys, which know no
// PAD SPACE ('a' and 'a ' are two groups under utf8mb4_general_ci),
// sorts them with its comparison, which knows none either ('a' before
// 'a ', and 'a\t' after 'a'), and COUNT(DISTINCT) counts the distinct
// texts of its values, byte for byte ('a' and 'A' count twice under a
// case-insensitive collation). keyedNode and keyedCountDistinct give each
// a collationKey of each such string expression instead: the hex of its memcomparable key, equal
// exactly when MySQL compares the values equal and ordered as MySQL orders
// them (hex digits keep the order of the bytes). The rows returned are
// read from the columns as before; only what is compared changes.
func keyedNode(n sql.Node) sql.Node {
	switch x := n.(type) {
	case *plan.Sort:
		if fields, ok := keyedSortFields(x.SortFields); ok {
			return plan.NewSort(fields, x.Child)
		}
	case *plan.TopN:
		if fields, ok := keyedSortFields(x.Fields); ok {
			nt := *x
			nt.Fields = fields
			return &nt
		}
	case *plan.GroupBy:
		var exprs []sql.Expression
		for i, e := range x.GroupByExprs {
			if !codec.PadSpace(e.Type()) {
				continue
			}
			if exprs == nil {
				exprs = append([]sql.Expression(nil), x.GroupByExprs...)
			}
			exprs[i] = &collationKey{child: e}
		}
		if exprs != nil {
			ngb := *x
			ngb.GroupByExprs = exprs
			return &ngb
		}
	}
	return n
}

// keyedWindow returns e, a window function, with the PAD SPACE strings
// of its PARTITION BY and ORDER BY compared by their collationKeys: GMS
// starts a partition where its comparison finds two values different.
func keyedWindow(e sql.Expression) (sql.Expression, transform.TreeIdentity) {
	wa, ok := e.(sql.WindowAdaptableExpression)
	if !ok || wa.Window() == nil {
		return e, transform.SameTree
	}
	w := wa.Window()
	var parts []sql.Expression
	for i, p := range w.PartitionBy {
		if !codec.PadSpace(p.Type()) {
			continue
		}
		if parts == nil {
			parts = append([]sql.Expression(nil), w.PartitionBy...)
		}
		parts[i] = &collationKey{child: p}
	}
	order, keyed := keyedSortFields(w.OrderBy)
	if parts == nil && !keyed {
		return e, transform.SameTree
	}
	nw := *w
	if parts != nil {
		nw.PartitionBy = parts
	}
	if keyed {
		nw.OrderBy = order
	}
	return wa.WithWindow(&nw), transform.NewTree
}

// keyedCountDistinct returns e, a COUNT(DISTINCT) over collated strings,
// counting their collation keys.
func keyedCountDistinct(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	cd, ok := e.(*aggregation.CountDistinct)
	if !ok {
		return e, transform.SameTree, nil
	}
	var children []sql.Expression
	for i, c := range cd.Children() {
		if !types.IsText(c.Type()) || types.IsBinaryType(c.Type()) {
			continue
		}
		if children == nil {
			children = append([]sql.Expression(nil), cd.Children()...)
		}
		children[i] = &collationKey{child: c}
	}
	if children == nil {
		return e, transform.SameTree, nil
	}
	ncd, err := cd.WithChildren(children...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ncd.(*aggregation.CountDistinct).WithId(cd.Id()), transform.NewTree, nil
}

// collationKey is the hex of its child's memcomparable key under typ (the
// child's type when nil; NULL for NULL), or the child's value when the
// type has no key for it.
type collationKey struct {
	child sql.Expression
	typ   sql.Type
}

var _ sql.Expression = (*collationKey)(nil)

func (k *collationKey) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := k.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if v, err = sql.UnwrapAny(ctx, v); err != nil {
		return nil, err
	}
	typ := k.typ
	if typ == nil {
		typ = k.child.Type()
	}
	key, err := codec.AppendKey(nil, typ, v, codec.Asc)
	if err != nil {
		return v, nil
	}
	return hex.EncodeToString(key), nil
}

func (k *collationKey) Resolved() bool             { return k.child.Resolved() }
func (k *collationKey) String() string             { return k.child.String() }
func (k *collationKey) Type() sql.Type             { return types.LongText }
func (k *collationKey) IsNullable() bool           { return k.child.IsNullable() }
func (k *collationKey) Children() []sql.Expression { return []sql.Expression{k.child} }

func (k *collationKey) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	return &collationKey{child: children[0], typ: k.typ}, nil
}

// keyedSortFields returns fields with each PAD SPACE string column sorted
// by its collationKey, and whether any was.
func keyedSortFields(fields sql.SortFields) (sql.SortFields, bool) {
	var out sql.SortFields
	for i, f := range fields {
		if !codec.PadSpace(f.Column.Type()) {
			continue
		}
		if out == nil {
			out = append(sql.SortFields(nil), fields...)
		}
		out[i].Column = &collationKey{child: f.Column}
		out[i].Column2 = nil
	}
	return out, out != nil
}

// KeyedColumn returns the expression a sort field's collationKey wraps,
// and true; or nil and false for any other expression. Rewrites that sort
// by memcomparable keys themselves sort by that expression.
func KeyedColumn(e sql.Expression) (sql.Expression, bool) {
	if k, ok := e.(*collationKey); ok {
		return k.child, true
	}
	return nil, false
}
